//! Reductions: their backward spreads the gradient of each reduced slice back over the slice.

use crate::backend::BaseBackend;
use crate::backend::defaults::{split_at_axis, values_like};
use crate::backends::autodiff::broadcast::expand_to_shape;
use crate::backends::autodiff::rules::comparison::ones_where;
use crate::backends::autodiff::tensor::AutodiffTensor;
use crate::error::Result;
use crate::memory;

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

/// d prod / d x_k = the product of the lane's other entries: prefix times suffix products, so a zero entry gives
/// the others their exact gradient instead of a division by zero.
pub fn prod_dim<B: BaseBackend>(input: &AutodiffTensor<B>, axis: usize) -> Result<AutodiffTensor<B>> {
    let output = B::prod_dim(input.primitive(), axis)?;
    Ok(AutodiffTensor::unary("prod_dim", input, output, |_| {
        let input = input.primitive().clone();
        move |gradient| {
            let shape = B::shape(&input);
            let (outer, len, inner) = split_at_axis(&shape, axis);
            let values = B::to_f64_vec(&input)?;
            let mut others = memory::try_filled("prod_dim", values.len(), 0.0)?;
            for o in 0..outer {
                for i in 0..inner {
                    let at = |k: usize| (o * len + k) * inner + i;
                    let mut prefix = 1.0f64;
                    for k in 0..len {
                        others[at(k)] = prefix;
                        prefix *= values[at(k)];
                    }
                    let mut suffix = 1.0f64;
                    for k in (0..len).rev() {
                        others[at(k)] *= suffix;
                        suffix *= values[at(k)];
                    }
                }
            }
            B::mul(&values_like::<B>(others, shape, &input)?, &gradient)
        }
    }))
}
