//! Reductions: their backward spreads the gradient of each reduced slice back over the slice.

use crate::backend::defaults::cross_entropy_rows;
use crate::backends::BaseBackend;
use crate::backends::autodiff::broadcast::expand_to_shape;
use crate::backends::autodiff::rules::comparison::ones_where;
use crate::backends::autodiff::tensor::{AutodiffTensor, gradient_if};
use crate::error::Result;

/// d sum(x) = 1 for every element: the gradient expanded to the input's shape.
pub fn sum<B: BaseBackend>(input: &AutodiffTensor<B>) -> Result<AutodiffTensor<B>> {
    let output = B::sum(input.primitive())?;
    Ok(AutodiffTensor::unary("sum", input, output, |_| {
        let input_shape = B::shape(input.primitive());
        move |gradient| expand_to_shape::<B>(&gradient, &input_shape, 1.0)
    }))
}

/// Each of the n elements gets 1/n of the gradient.
pub fn mean<B: BaseBackend>(input: &AutodiffTensor<B>) -> Result<AutodiffTensor<B>> {
    let output = B::mean(input.primitive())?;
    Ok(AutodiffTensor::unary("mean", input, output, |_| {
        let input_shape = B::shape(input.primitive());
        let scale = 1.0 / input_shape.num_elements() as f64;
        move |gradient| expand_to_shape::<B>(&gradient, &input_shape, scale)
    }))
}

/// The output keeps `axis` with size 1, so its gradient broadcasts back along it.
pub fn sum_dim<B: BaseBackend>(input: &AutodiffTensor<B>, axis: usize) -> Result<AutodiffTensor<B>> {
    let output = B::sum_dim(input.primitive(), axis)?;
    Ok(AutodiffTensor::unary("sum_dim", input, output, |_| {
        let input_shape = B::shape(input.primitive());
        move |gradient| expand_to_shape::<B>(&gradient, &input_shape, 1.0)
    }))
}

/// d mean = 1 / len along `axis`: the gradient expanded and scaled.
pub fn mean_dim<B: BaseBackend>(input: &AutodiffTensor<B>, axis: usize) -> Result<AutodiffTensor<B>> {
    let output = B::mean_dim(input.primitive(), axis)?;
    Ok(AutodiffTensor::unary("mean_dim", input, output, |_| {
        let input_shape = B::shape(input.primitive());
        // The forward succeeded, so `axis` exists.
        let scale = 1.0 / input_shape.dims().get(axis).copied().unwrap_or(1) as f64;
        move |gradient| expand_to_shape::<B>(&gradient, &input_shape, scale)
    }))
}

/// For `y = x - log Σ exp(x)` along `axis`: `dx = dy - softmax(x) Σ dy`, with `softmax(x) = exp(y)` taken from
/// the output.
pub fn log_softmax<B: BaseBackend>(input: &AutodiffTensor<B>, axis: usize) -> Result<AutodiffTensor<B>> {
    let output = B::log_softmax(input.primitive(), axis)?;
    Ok(AutodiffTensor::unary("log_softmax", input, output, |output| {
        let output = output.clone();
        move |gradient| {
            let softmax = B::exp(&output)?;
            let total = B::sum_dim(&gradient, axis)?;
            B::sub(&gradient, &B::mul(&softmax, &total)?)
        }
    }))
}

/// For `y = softmax(x)` along `axis`: `dx = y (dy - Σ dy y)`, `B`'s `softmax_backward`, from the output alone (the
/// composed `exp(log_softmax(x))` kept two nodes and both their outputs).
pub fn softmax<B: BaseBackend>(input: &AutodiffTensor<B>, axis: usize) -> Result<AutodiffTensor<B>> {
    let output = B::softmax(input.primitive(), axis)?;
    Ok(AutodiffTensor::unary("softmax", input, output, |output| {
        let output = output.clone();
        move |gradient| B::softmax_backward(&output, &gradient, axis)
    }))
}

/// For `p = softmax(s)` with `s = scale q kᵀ` (masked keys at -inf): `ds = softmax_backward(p, dp)`, then
/// `dq = scale ds k` and `dk = scale dsᵀ q`. A masked weight is exactly 0, so its `ds` is too: the mask needs no pass
/// of its own. The weights are kept, and each operand only when the other one needs a gradient.
pub fn attention_weights<B: BaseBackend>(
    query: &AutodiffTensor<B>,
    key: &AutodiffTensor<B>,
    scale: f64,
    causal: bool,
) -> Result<AutodiffTensor<B>> {
    let output = B::attention_weights(query.primitive(), key.primitive(), scale, causal)?;
    Ok(AutodiffTensor::binary("attention_weights", [query, key], output, |[query_tracked, key_tracked], output| {
        let weights = output.clone();
        let key_value = query_tracked.then(|| key.primitive().clone());
        let query_value = key_tracked.then(|| query.primitive().clone());
        move |gradient| {
            let last = B::shape(&weights).rank() - 1;
            let scores_gradient = B::softmax_backward(&weights, &gradient, last)?;
            let query_gradient = match &key_value {
                Some(key) => Some(B::mul_scalar(&B::matmul(&scores_gradient, key)?, scale)?),
                None => None,
            };
            let key_gradient = match &query_value {
                Some(query) => {
                    let transposed = B::swap_dims(&scores_gradient, last - 1, last)?;
                    Some(B::mul_scalar(&B::matmul(&transposed, query)?, scale)?)
                }
                None => None,
            };
            Ok([query_gradient, key_gradient])
        }
    }))
}

/// For the mean over rows of `-log softmax(x)[row, target]`: `dx = (softmax(x) - one_hot(targets)) dy / rows`, one
/// node where the composition kept four (`log_softmax`, `gather`, `mean`, `neg`) and scattered the gradient back.
/// Only the logits and targets are kept; the softmax is computed again from them.
pub fn cross_entropy<B: BaseBackend>(logits: &AutodiffTensor<B>, targets: &B::IntTensor) -> Result<AutodiffTensor<B>> {
    let output = B::cross_entropy(logits.primitive(), targets)?;
    Ok(AutodiffTensor::unary("cross_entropy", logits, output, |_| {
        let (x, targets) = (logits.primitive().clone(), targets.clone());
        move |gradient| {
            let (rows, classes) = cross_entropy_rows("cross_entropy", &B::shape(&x), &B::int_shape(&targets))?;
            let picked = B::one_hot(&targets, classes, B::dtype(&x))?;
            let difference = B::sub(&B::softmax(&x, 1)?, &picked)?;
            B::mul(&difference, &B::mul_scalar(&gradient, 1.0 / rows as f64)?)
        }
    }))
}

/// For `y = x̂ γ + β` with `x̂ = (x - mean) r`, `r = 1 / sqrt(var + eps)` over the last axis: `dβ = Σ dy`, `dγ = Σ
/// dy x̂` over every row (`B`'s `layer_norm_parameter_gradients`), and `dx = r (g - mean(g) - x̂ mean(g x̂))` with
/// `g = dy γ`, the closed form of the eight composed ops' chain (`B`'s `layer_norm_backward`). Only the input and `γ`
/// are kept; the statistics are computed again from the input.
pub fn layer_norm<B: BaseBackend>(
    input: &AutodiffTensor<B>,
    gamma: &AutodiffTensor<B>,
    beta: &AutodiffTensor<B>,
    eps: f64,
) -> Result<AutodiffTensor<B>> {
    let output = B::layer_norm(input.primitive(), gamma.primitive(), beta.primitive(), eps)?;
    let inputs = [input.clone(), gamma.clone(), beta.clone()];
    Ok(AutodiffTensor::many("layer_norm", &inputs, output, |tracked| {
        let (x, g) = (input.primitive().clone(), gamma.primitive().clone());
        let (x_tracked, gamma_tracked, beta_tracked) = (tracked[0], tracked[1], tracked[2]);
        let width_shape = B::shape(&g);
        move |gradient| {
            let input_gradient = gradient_if(x_tracked, || B::layer_norm_backward(&x, &g, &gradient, eps))?;
            let (gamma_gradient, beta_gradient) = if gamma_tracked || beta_tracked {
                // `[dγ; dβ]`, each row taken as a `[width]` view.
                let both = B::layer_norm_parameter_gradients(&x, &gradient, eps)?;
                let row = |row: usize| B::reshape(&B::narrow(&both, 0, row, 1)?, width_shape.clone());
                (gradient_if(gamma_tracked, || row(0))?, gradient_if(beta_tracked, || row(1))?)
            } else {
                (None, None)
            };
            Ok(vec![input_gradient, gamma_gradient, beta_gradient])
        }
    }))
}

/// The gradient of `max_dim` or `min_dim`: shared evenly among the entries equal to the lane's extreme.
fn extreme_dim<B: BaseBackend>(
    op: &'static str,
    input: &AutodiffTensor<B>,
    axis: usize,
    output: B::FloatTensor,
) -> AutodiffTensor<B> {
    AutodiffTensor::unary(op, input, output, |output| {
        let (input, output) = (input.primitive().clone(), output.clone());
        move |gradient| {
            let picked = ones_where::<B>(&B::eq(&input, &output)?, &gradient)?;
            let share = B::div(&picked, &B::sum_dim(&picked, axis)?)?;
            B::mul(&gradient, &share)
        }
    })
}

/// The gradient shared evenly among each lane's tied maxima.
pub fn max_dim<B: BaseBackend>(input: &AutodiffTensor<B>, axis: usize) -> Result<AutodiffTensor<B>> {
    let output = B::max_dim(input.primitive(), axis)?;
    Ok(extreme_dim("max_dim", input, axis, output))
}

/// The gradient shared evenly among each lane's tied minima.
pub fn min_dim<B: BaseBackend>(input: &AutodiffTensor<B>, axis: usize) -> Result<AutodiffTensor<B>> {
    let output = B::min_dim(input.primitive(), axis)?;
    Ok(extreme_dim("min_dim", input, axis, output))
}

/// d prod / d x_k = the product of the lane's other entries: the product of those before `k` times the product of
/// those after it (prefix and suffix products, in the base backend's ops), so a zero entry gives the others their
/// exact gradient instead of a division by zero.
pub fn prod_dim<B: BaseBackend>(input: &AutodiffTensor<B>, axis: usize) -> Result<AutodiffTensor<B>> {
    let output = B::prod_dim(input.primitive(), axis)?;
    Ok(AutodiffTensor::unary("prod_dim", input, output, |_| {
        let input = input.primitive().clone();
        move |gradient| {
            let before = exclusive_products::<B>(&input, axis)?;
            let after = B::flip(&exclusive_products::<B>(&B::flip(&input, vec![axis])?, axis)?, vec![axis])?;
            B::mul(&B::mul(&before, &after)?, &gradient)
        }
    }))
}

/// Along `axis`, each entry's product of the entries before it (1 for the first): the inclusive products by
/// doubling (after the step of span `d`, each entry holds the product of the `2d` entries ending at it), shifted by
/// one. `log2(len)` steps of `narrow`, `mul` and `cat`.
fn exclusive_products<B: BaseBackend>(values: &B::FloatTensor, axis: usize) -> Result<B::FloatTensor> {
    let shape = B::shape(values);
    let len = shape.dims().get(axis).copied().unwrap_or(0);
    let ones = B::full(shape.with_dim("prod_dim", axis, 1)?, 1.0, B::dtype(values), &B::device(values))?;
    if len <= 1 {
        return B::expand(&ones, shape);
    }
    let mut products = values.clone();
    let mut span = 1;
    while span < len {
        let carried =
            B::mul(&B::narrow(&products, axis, span, len - span)?, &B::narrow(&products, axis, 0, len - span)?)?;
        products = B::cat(&[B::narrow(&products, axis, 0, span)?, carried], axis)?;
        span *= 2;
    }
    B::cat(&[ones, B::narrow(&products, axis, 0, len - 1)?], axis)
}
