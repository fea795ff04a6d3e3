//! Reduction defaults: argmin, extremes, products on the host; softmax, cross_entropy, layer_norm, max, min and
//! var_dim composed from the backend's own ops.

use super::host_values::{lanes, values_like};
use crate::backend::Backend;
use crate::dtype::DType;
use crate::error::{Error, RankRule, Result};
use crate::math;
use crate::shape::Shape;

/// What an op that picks an entry of each lane needs of the axis: an empty one has none to pick.
pub(crate) const EMPTY_AXIS: &str = "at least one entry along the axis";

/// On the host: the first smallest entry of each lane along `axis`, skipping NaN.
pub fn argmin<B: Backend>(tensor: &B::FloatTensor, axis: usize) -> Result<B::IntTensor> {
    let shape = B::shape(tensor);
    shape.check_axis("argmin", axis)?;
    if shape.dims()[axis] == 0 {
        return Err(Error::unexpected_shape("argmin", EMPTY_AXIS, &shape));
    }
    let indices = lanes("argmin", &B::to_f64_vec(tensor)?, &shape, axis, |lane| {
        let best = lane.iter().enumerate().fold(None, |best: Option<(usize, f64)>, (k, &x)| match best {
            Some((_, y)) if x.is_nan() || x >= y => best,
            _ if x.is_nan() => best,
            _ => Some((k, x)),
        });
        best.map_or(0, |(k, _)| k as i64)
    })?;
    B::int_from_vec(indices, shape.with_dim("argmin", axis, 1)?, &B::device(tensor))
}

/// `exp(log_softmax(x))`, through the backend's own ops: on `Autodiff`, through its differentiable ones.
pub fn softmax<B: Backend>(tensor: &B::FloatTensor, axis: usize) -> Result<B::FloatTensor> {
    B::exp(&B::log_softmax(tensor, axis)?)
}

/// The checks of a backward op: `gradient` of the dtype and shape of `like`, the tensor whose gradient it carries.
/// Every backend makes them first, so bad input is the same error everywhere.
pub(crate) fn check_gradient_operand(
    op: &'static str,
    (shape, dtype): (&Shape, DType),
    (gradient_shape, gradient_dtype): (&Shape, DType),
) -> Result<()> {
    DType::check_same(op, dtype, gradient_dtype)?;
    if shape != gradient_shape {
        return Err(Error::shape_mismatch(op, shape, gradient_shape));
    }
    Ok(())
}

/// `f` of `tensors` cast to `F32` when they are of a half dtype, its result cast back: a backward op's composed steps
/// each round to the dtype, and in `F16` their errors compounded past the dtype's tolerance.
fn in_at_least_f32<B: Backend, const N: usize>(
    op: &'static str,
    tensors: [&B::FloatTensor; N],
    f: impl FnOnce([&B::FloatTensor; N]) -> Result<B::FloatTensor>,
) -> Result<B::FloatTensor> {
    let dtype = B::dtype(tensors[0]);
    if !matches!(dtype, DType::F16 | DType::BF16) {
        return f(tensors);
    }
    let mut wide = Vec::with_capacity(N);
    for tensor in tensors {
        wide.push(B::cast(tensor, DType::F32)?);
    }
    // One cast per tensor, so the count always fits.
    let wide = <[B::FloatTensor; N]>::try_from(wide).map_err(|_| Error::invalid(op, "a cast per operand"))?;
    B::cast(&f(wide.each_ref())?, dtype)
}

/// `output (gradient - Σ gradient output)` along `axis`, through the backend's own ops (in `F32` for the half
/// dtypes): `softmax`'s backward rule.
pub fn softmax_backward<B: Backend>(
    output: &B::FloatTensor,
    gradient: &B::FloatTensor,
    axis: usize,
) -> Result<B::FloatTensor> {
    let op = "softmax_backward";
    let shape = B::shape(output);
    check_gradient_operand(op, (&shape, B::dtype(output)), (&B::shape(gradient), B::dtype(gradient)))?;
    shape.check_axis(op, axis)?;
    in_at_least_f32::<B, 2>(op, [output, gradient], |[output, gradient]| {
        let total = B::sum_dim(&B::mul(gradient, output)?, axis)?;
        B::mul(output, &B::sub(gradient, &total)?)
    })
}

/// The sizes of an `attention_weights` call: `query` `[..., queries, width]` and `key` `[..., keys, width]` of one
/// rank (at least 2), dtype and width, with the same leading dims. The checks every backend makes first, so bad input
/// is the same error everywhere.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct AttentionSizes {
    /// The output's shape, `[..., queries, keys]`.
    pub output: Shape,
    /// How many queries: the rows of each block of the output, whose index sets a causal row's length.
    pub queries: usize,
    /// How many keys: the length of each row of the output.
    pub keys: usize,
}

impl AttentionSizes {
    pub(crate) fn of(
        op: &'static str,
        (query, query_dtype): (&Shape, DType),
        (key, key_dtype): (&Shape, DType),
    ) -> Result<Self> {
        DType::check_same(op, query_dtype, key_dtype)?;
        let (&[ref leading @ .., queries, width], &[.., keys, _]) = (query.dims(), key.dims()) else {
            let short = if query.rank() < 2 { query } else { key };
            return Err(Error::unexpected_rank(
                op,
                "a query and a key [..., rows, width]",
                RankRule::AtLeast(2),
                short,
            ));
        };
        let expected_key = Shape::new(leading.iter().copied().chain([keys, width]).collect::<Vec<_>>());
        if *key != expected_key {
            return Err(Error::shape_mismatch(op, &expected_key, key));
        }
        Ok(Self {
            output: Shape::new(leading.iter().copied().chain([queries, keys]).collect::<Vec<_>>()),
            queries,
            keys,
        })
    }

    /// How many keys row `output_row` of the output (counted across every block) attends to: for a causal row,
    /// one more than its query's index within its block.
    pub(crate) fn attended(&self, output_row: usize, causal: bool) -> usize {
        match causal {
            true => output_row.checked_rem(self.queries).unwrap_or(0).saturating_add(1).min(self.keys),
            false => self.keys,
        }
    }
}

/// `softmax(scale query keyᵀ)` over the last axis, the later keys masked out first when `causal`, through the
/// backend's own ops: on `Autodiff`, through its differentiable ones.
pub fn attention_weights<B: Backend>(
    query: &B::FloatTensor,
    key: &B::FloatTensor,
    scale: f64,
    causal: bool,
) -> Result<B::FloatTensor> {
    let op = "attention_weights";
    let sizes = AttentionSizes::of(op, (&B::shape(query), B::dtype(query)), (&B::shape(key), B::dtype(key)))?;
    let rank = sizes.output.rank();
    let scores = B::mul_scalar(&B::matmul(query, &B::swap_dims(key, rank - 2, rank - 1)?)?, scale)?;
    let scores = if causal {
        let device = B::device(query);
        let position = |count: usize, shape: [usize; 2]| {
            let end = i64::try_from(count).map_err(|_| Error::invalid_value(op, "rows", count, "at most i64::MAX"))?;
            B::int_reshape(&B::arange(0, end, &device)?, Shape::new(shape))
        };
        // Key position > query position, row by column: the keys a query may not see.
        let later = B::int_gt(&position(sizes.keys, [1, sizes.keys])?, &position(sizes.queries, [sizes.queries, 1])?)?;
        B::mask_fill(&scores, &later, f64::NEG_INFINITY)?
    } else {
        scores
    };
    B::softmax(&scores, rank - 1)
}

/// `rows` and `classes` of a `cross_entropy` call: `logits` must be `[rows, classes]` and `targets` `[rows]`. The
/// checks every backend makes first, so bad input is the same error everywhere.
pub(crate) fn cross_entropy_rows(op: &'static str, logits: &Shape, targets: &Shape) -> Result<(usize, usize)> {
    let &[rows, classes] = logits.dims() else {
        return Err(Error::unexpected_rank(op, "logits [rows, classes]", RankRule::Exactly(2), logits));
    };
    if targets.dims() != [rows] {
        return Err(Error::shape_mismatch(op, &Shape::new([rows]), targets));
    }
    Ok((rows, classes))
}

/// A target outside the classes, reported by the op the user called rather than the `gather` it was composed from.
pub(crate) fn as_cross_entropy_error(error: Error) -> Error {
    match error {
        Error::IndexOutOfRange { index, len, .. } => Error::IndexOutOfRange { op: "cross_entropy", index, len },
        other => other,
    }
}

/// `-mean(gather(log_softmax(logits), targets))`, through the backend's own ops.
pub fn cross_entropy<B: Backend>(logits: &B::FloatTensor, targets: &B::IntTensor) -> Result<B::FloatTensor> {
    let (rows, _) = cross_entropy_rows("cross_entropy", &B::shape(logits), &B::int_shape(targets))?;
    let column = B::int_reshape(targets, Shape::new([rows, 1]))?;
    let picked = B::gather(&B::log_softmax(logits, 1)?, 1, &column).map_err(as_cross_entropy_error)?;
    B::neg(&B::mean(&picked)?)
}

/// The size of the last axis, over which layer norm normalises: an input without axes has none.
pub(crate) fn layer_norm_width(op: &'static str, shape: &Shape) -> Result<usize> {
    let width = shape.dims().last().copied();
    width.ok_or_else(|| Error::unexpected_rank(op, "an input", RankRule::AtLeast(1), shape))
}

/// The last axis of a `layer_norm` input and its size, once `gamma` and `beta` are known to be `[width]` of the
/// input's dtype: the checks every backend makes first, so bad input is the same error everywhere.
pub(crate) fn layer_norm_axis(
    op: &'static str,
    input: (&Shape, DType),
    gamma: (&Shape, DType),
    beta: (&Shape, DType),
) -> Result<(usize, usize)> {
    let (shape, dtype) = input;
    let width = layer_norm_width(op, shape)?;
    let expected = Shape::new([width]);
    for (parameter, parameter_dtype) in [gamma, beta] {
        DType::check_same(op, dtype, parameter_dtype)?;
        if *parameter != expected {
            return Err(Error::shape_mismatch(op, &expected, parameter));
        }
    }
    Ok((shape.rank() - 1, width))
}

/// The normalisation through the backend's own ops: on `Autodiff`, through its differentiable ones.
pub fn layer_norm<B: Backend>(
    tensor: &B::FloatTensor,
    gamma: &B::FloatTensor,
    beta: &B::FloatTensor,
    eps: f64,
) -> Result<B::FloatTensor> {
    let of = |tensor: &B::FloatTensor| (B::shape(tensor), B::dtype(tensor));
    let (input, gamma_of, beta_of) = (of(tensor), of(gamma), of(beta));
    let (axis, _) =
        layer_norm_axis("layer_norm", (&input.0, input.1), (&gamma_of.0, gamma_of.1), (&beta_of.0, beta_of.1))?;
    let (centred, deviation) = centred_and_deviation::<B>(tensor, axis, eps)?;
    B::add(&B::mul(&B::div(&centred, &deviation)?, gamma)?, beta)
}

/// `(s - mean(s) - x̂ mean(s x̂)) / sqrt(var + eps)` with `s = gradient γ` and `x̂` the normalised input over the last
/// axis, through the backend's own ops (in `F32` for the half dtypes): what `layer_norm`'s backward rule computes for
/// its input.
pub fn layer_norm_backward<B: Backend>(
    tensor: &B::FloatTensor,
    gamma: &B::FloatTensor,
    gradient: &B::FloatTensor,
    eps: f64,
) -> Result<B::FloatTensor> {
    let op = "layer_norm_backward";
    let (input, gamma_of) = ((B::shape(tensor), B::dtype(tensor)), (B::shape(gamma), B::dtype(gamma)));
    let (axis, _) = layer_norm_axis(op, (&input.0, input.1), (&gamma_of.0, gamma_of.1), (&gamma_of.0, gamma_of.1))?;
    check_gradient_operand(op, (&input.0, input.1), (&B::shape(gradient), B::dtype(gradient)))?;
    in_at_least_f32::<B, 3>(op, [tensor, gamma, gradient], |[tensor, gamma, gradient]| {
        let (centred, deviation) = centred_and_deviation::<B>(tensor, axis, eps)?;
        let reciprocal = B::recip(&deviation)?;
        let normalised = B::mul(&centred, &reciprocal)?;
        let scaled = B::mul(gradient, gamma)?;
        let along = B::mul(&normalised, &B::mean_dim(&B::mul(&scaled, &normalised)?, axis)?)?;
        let deviation = B::sub(&B::sub(&scaled, &B::mean_dim(&scaled, axis)?)?, &along)?;
        B::mul(&deviation, &reciprocal)
    })
}

/// `[Σ gradient x̂, Σ gradient]` over every axis but the last, as a `[2, width]` tensor, through the backend's own ops
/// (in `F32` for the half dtypes), `x̂` as `layer_norm`'s default computes it: what `layer_norm`'s backward rule
/// computes for `gamma` and `beta`.
pub fn layer_norm_parameter_gradients<B: Backend>(
    tensor: &B::FloatTensor,
    gradient: &B::FloatTensor,
    eps: f64,
) -> Result<B::FloatTensor> {
    let op = "layer_norm_parameter_gradients";
    let shape = B::shape(tensor);
    check_gradient_operand(op, (&shape, B::dtype(tensor)), (&B::shape(gradient), B::dtype(gradient)))?;
    let width = layer_norm_width(op, &shape)?;
    in_at_least_f32::<B, 2>(op, [tensor, gradient], |[tensor, gradient]| {
        let axis = shape.rank() - 1;
        let (centred, deviation) = centred_and_deviation::<B>(tensor, axis, eps)?;
        let normalised = B::div(&centred, &deviation)?;
        // Summed over the leading axes one at a time, as a broadcast operand's gradient is.
        let over_rows = |values: B::FloatTensor| -> Result<B::FloatTensor> {
            let mut sums = values;
            for leading in 0..axis {
                sums = B::sum_dim(&sums, leading)?;
            }
            B::reshape(&sums, Shape::new([1, width]))
        };
        B::cat(&[over_rows(B::mul(gradient, &normalised)?)?, over_rows(gradient.clone())?], 0)
    })
}

/// `x - mean` and `sqrt(var + eps)` along `axis`, through the backend's own ops: what `layer_norm`'s default and its
/// backward rule both compute from the input.
pub(crate) fn centred_and_deviation<B: Backend>(
    tensor: &B::FloatTensor,
    axis: usize,
    eps: f64,
) -> Result<(B::FloatTensor, B::FloatTensor)> {
    let centred = B::sub(tensor, &B::mean_dim(tensor, axis)?)?;
    let variance = B::mean_dim(&B::mul(&centred, &centred)?, axis)?;
    let deviation = B::sqrt(&B::add_scalar(&variance, eps)?)?;
    Ok((centred, deviation))
}

/// The largest or smallest entry of each lane along `axis`, NaN where the lane holds NaN.
fn extreme_dim<B: Backend>(
    op: &'static str,
    tensor: &B::FloatTensor,
    axis: usize,
    pick: fn(f64, f64) -> f64,
) -> Result<B::FloatTensor> {
    let shape = B::shape(tensor);
    shape.check_axis(op, axis)?;
    if shape.dims()[axis] == 0 {
        return Err(Error::unexpected_shape(op, EMPTY_AXIS, &shape));
    }
    let output =
        lanes(op, &B::to_f64_vec(tensor)?, &shape, axis, |lane| lane.iter().copied().reduce(pick).unwrap_or(f64::NAN))?;
    values_like::<B>(output, shape.with_dim(op, axis, 1)?, tensor)
}

/// On the host.
pub fn max_dim<B: Backend>(tensor: &B::FloatTensor, axis: usize) -> Result<B::FloatTensor> {
    extreme_dim::<B>("max_dim", tensor, axis, math::maximum)
}

/// On the host.
pub fn min_dim<B: Backend>(tensor: &B::FloatTensor, axis: usize) -> Result<B::FloatTensor> {
    extreme_dim::<B>("min_dim", tensor, axis, math::minimum)
}

/// `max_dim` of the flattened tensor.
pub fn max<B: Backend>(tensor: &B::FloatTensor) -> Result<B::FloatTensor> {
    B::max_dim(&B::reshape(tensor, Shape::new([B::shape(tensor).num_elements()]))?, 0)
}

/// `min_dim` of the flattened tensor.
pub fn min<B: Backend>(tensor: &B::FloatTensor) -> Result<B::FloatTensor> {
    B::min_dim(&B::reshape(tensor, Shape::new([B::shape(tensor).num_elements()]))?, 0)
}

/// `sum((x - mean)²) / (len - correction)` along `axis`, through the backend's own ops.
pub fn var_dim<B: Backend>(tensor: &B::FloatTensor, axis: usize, correction: usize) -> Result<B::FloatTensor> {
    let shape = B::shape(tensor);
    shape.check_axis("var_dim", axis)?;
    let len = shape.dims()[axis];
    let Some(divisor) = len.checked_sub(correction).filter(|&divisor| divisor > 0) else {
        return Err(Error::invalid_value("var_dim", "correction", correction, "below the length of the axis"));
    };
    let deviation = B::sub(tensor, &B::mean_dim(tensor, axis)?)?;
    let squares = B::sum_dim(&B::mul(&deviation, &deviation)?, axis)?;
    // The factor in f64, rounded once to the tensor's dtype by `mul_scalar`.
    B::mul_scalar(&squares, 1.0 / divisor as f64)
}

/// On the host.
pub fn prod_dim<B: Backend>(tensor: &B::FloatTensor, axis: usize) -> Result<B::FloatTensor> {
    let shape = B::shape(tensor);
    let products = lanes("prod_dim", &B::to_f64_vec(tensor)?, &shape, axis, |lane| lane.iter().product::<f64>())?;
    values_like::<B>(products, shape.with_dim("prod_dim", axis, 1)?, tensor)
}

/// `prod_dim` of the flattened tensor.
pub fn prod<B: Backend>(tensor: &B::FloatTensor) -> Result<B::FloatTensor> {
    B::prod_dim(&B::reshape(tensor, Shape::new([B::shape(tensor).num_elements()]))?, 0)
}
