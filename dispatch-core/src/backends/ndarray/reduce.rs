//! Reductions: over every element (shape `[1]`), or along one axis keeping it with size 1. Each is written once,
//! generic over the element type. A fold along an axis walks each lane in order, so a lane's result does not depend
//! on the array's layout.

use std::mem::MaybeUninit;
use std::ops::Range;

use ndarray::{ArcArrayD, ArrayD, ArrayView1, Axis, Dimension, IxDyn};

use super::buffers;
use super::index::positions;
use super::int_bool::NdArrayIntTensor;
use super::tensor::{Element, NdArrayTensor, check_output, ndarray_error, row_major, with_array, with_arrays};
use crate::backend::defaults::{
    AttentionSizes, EMPTY_AXIS, check_gradient_operand, cross_entropy_rows, layer_norm_axis, layer_norm_width,
};
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::kernels;
use crate::kernels::reduce::{
    Normalise, attention_row, layer_norm_backward_row, layer_norm_parameter_sums, layer_norm_row, log_sum_exp_of_row,
    normalise_row, row_max, row_pair, softmax_backward_row,
};
use crate::math;
use crate::memory;
use crate::parallel::{self, Work, for_each_part_of, for_each_row};
use crate::shape::Shape;

pub(super) fn sum(tensor: &NdArrayTensor) -> NdArrayTensor {
    with_array!(tensor, |array| scalar(tensor, array.sum()))
}

/// The mean of no elements is NaN (0 times 1/0), as on every backend.
pub(super) fn mean(tensor: &NdArrayTensor) -> NdArrayTensor {
    with_array!(tensor, |array| scalar(tensor, array.sum() * reciprocal::<E>(array.len())))
}

pub(super) fn sum_dim(tensor: &NdArrayTensor, axis: usize) -> Result<NdArrayTensor> {
    with_array!(tensor, |array| {
        check_reduced_output::<E>("sum_dim", &tensor.shape(), axis)?;
        Ok(NdArrayTensor::output(tensor.dtype(), sum_along("sum_dim", array, axis)?))
    })
}

pub(super) fn mean_dim(tensor: &NdArrayTensor, axis: usize) -> Result<NdArrayTensor> {
    with_array!(tensor, |array| {
        check_reduced_output::<E>("mean_dim", &tensor.shape(), axis)?;
        let scale = reciprocal::<E>(array.len_of(Axis(axis)));
        let mut sums = sum_along("mean_dim", array, axis)?;
        sums.mapv_inplace(|sum| sum * scale);
        Ok(NdArrayTensor::output(tensor.dtype(), sums))
    })
}

/// The sums along `axis`, keeping it with size 1, in the order ndarray's `sum_axis` adds: a lane of contiguous
/// entries by its unrolled sum, else whole slices along the axis one after another from zero. A row-major array
/// (a broadcast op's gradient, summed over its leading axes) is summed here a row at a time, where `sum_axis` builds
/// an iterator per row.
fn sum_along<E: Element>(op: &'static str, array: &ArcArrayD<E>, axis: usize) -> Result<ArrayD<E>> {
    let Some(values) = array.as_slice() else { return Ok(array.sum_axis(Axis(axis)).insert_axis(Axis(axis))) };
    let mut reduced = array.raw_dim();
    reduced[axis] = 1;
    let mut sums = memory::try_filled(op, reduced.size(), E::zero())?;
    // With no values every sum is of an empty lane, 0; otherwise no size below is 0.
    if !values.is_empty() {
        let (along, inner) = (array.len_of(Axis(axis)), array.shape()[axis + 1..].iter().product::<usize>());
        let blocks = values.chunks_exact(along * inner);
        if inner == 1 {
            sums.iter_mut().zip(blocks).for_each(|(sum, lane)| *sum = ArrayView1::from(lane).sum());
        } else {
            // Columns across threads when the block is large (the batch entries' weight gradients of a layer): each
            // column's sum is the same wherever it runs.
            for (out, block) in sums.chunks_exact_mut(inner).zip(blocks) {
                for_each_part_of(Work::Light, block.len(), out, |start, part| {
                    for row in block.chunks_exact(inner) {
                        let row = row.get(start..).unwrap_or_default();
                        part.iter_mut().zip(row).for_each(|(sum, &value)| *sum += value);
                    }
                });
            }
        }
    }
    ArrayD::from_shape_vec(reduced, sums).map_err(|error| ndarray_error(op, error))
}

/// `x - max - log(sum(exp(x - max)))` per lane, by the row kernel candle's CPU tensors run too.
pub(super) fn log_softmax(tensor: &NdArrayTensor, axis: usize) -> Result<NdArrayTensor> {
    normalised_lanes("log_softmax", tensor, axis, Normalise::Log)
}

/// `exp(x - max) / Σ exp(x - max)` per lane, by the row kernel candle's CPU tensors run too.
pub(super) fn softmax(tensor: &NdArrayTensor, axis: usize) -> Result<NdArrayTensor> {
    normalised_lanes("softmax", tensor, axis, Normalise::Exp)
}

/// Each lane along `axis` normalised as `which` says (`kernels::reduce::normalise_row`): the input copied with
/// `axis` last and row-major, so that every lane is a row, then rows across threads when there are many. Another
/// axis than the last stays last in memory: the output is the input's shape, permuted.
fn normalised_lanes(op: &'static str, tensor: &NdArrayTensor, axis: usize, which: Normalise) -> Result<NdArrayTensor> {
    let shape = tensor.shape();
    shape.check_axis(op, axis)?;
    with_array!(tensor, |array| {
        check_output::<E>(op, shape.num_elements())?;
        let last = array.ndim() - 1;
        let mut lanes_last = array.view();
        lanes_last.swap_axes(axis, last);
        let mut output = buffers::row_major_copy(lanes_last).map_err(|error| ndarray_error(op, error))?;
        if let Some(values) = output.as_slice_mut() {
            for_each_row(values, shape.dims()[axis], |_, row| normalise_row(row, which));
        }
        output.swap_axes(axis, last);
        Ok(NdArrayTensor::output(tensor.dtype(), output))
    })
}

/// Attention weights by one product into a row-major buffer, then `kernels::reduce::attention_row` on each row in
/// place: the scale, the causal mask and the softmax in one pass, where the composition took three and a mask. The
/// half dtypes round the scores and their scaled values as the composition's `matmul` and `mul_scalar` do, so the
/// weights are the composition's, bit for bit, in every dtype.
pub(super) fn attention_weights(
    query: &NdArrayTensor,
    key: &NdArrayTensor,
    scale: f64,
    causal: bool,
) -> Result<NdArrayTensor> {
    let op = "attention_weights";
    let sizes = AttentionSizes::of(op, (&query.shape(), query.dtype()), (&key.shape(), key.dtype()))?;
    let (dtype, scale) = (query.dtype(), query.scalar(scale));
    with_arrays!(op, query, key, |q, k| {
        check_output::<E>(op, sizes.output.num_elements())?;
        let mut keys_transposed = k.view();
        let rank = keys_transposed.ndim();
        keys_transposed.swap_axes(rank - 2, rank - 1);
        let buffer = buffers::buffer(sizes.output.num_elements());
        let mut scores = kernels::matmul::product("ndarray", q.view(), keys_transposed, &sizes.output, buffer)?;
        let mut scale = E::of_f64(scale);
        if matches!(dtype, DType::F16 | DType::BF16) {
            let round = |x: E| E::of_f64(dtype.round(num_traits::ToPrimitive::to_f64(&x).unwrap_or(f64::NAN)));
            scores.mapv_inplace(|score| round(round(score) * scale));
            scale = E::from(1.0);
        }
        if let Some(values) = scores.as_slice_mut() {
            for_each_row(values, sizes.keys, |index, row| attention_row(row, sizes.attended(index, causal), scale));
        }
        Ok(NdArrayTensor::output(dtype, scores))
    })
}

/// `softmax_backward` a lane at a time (`kernels::reduce::softmax_backward_row`) along the last axis, the half dtypes
/// in `f32` and rounded once; `None` for another axis, which takes the composed default.
pub(super) fn fused_softmax_backward(
    output: &NdArrayTensor,
    gradient: &NdArrayTensor,
    axis: usize,
) -> Result<Option<NdArrayTensor>> {
    let op = "softmax_backward";
    let shape = output.shape();
    check_gradient_operand(op, (&shape, output.dtype()), (&gradient.shape(), gradient.dtype()))?;
    shape.check_axis(op, axis)?;
    if axis + 1 != shape.rank() {
        return Ok(None);
    }
    with_arrays!(op, output, gradient, |y, g| {
        let (y, g) = (row_major(op, y.view())?, row_major(op, g.view())?);
        // SAFETY: `softmax_backward_row` writes every output of the row (NaN for rows of other lengths).
        let values = unsafe {
            written_in_rows::<E>(op, &shape, |rows, outputs| row_pair((&y, &g), rows, outputs, softmax_backward_row))?
        };
        Ok(Some(NdArrayTensor::output(output.dtype(), values)))
    })
}

/// `layer_norm_backward` a row at a time (`kernels::reduce::layer_norm_backward_row`), the half dtypes in `f32` and
/// rounded once. `eps` is rounded to the dtype first, as a scalar operand is everywhere.
pub(super) fn layer_norm_backward(
    tensor: &NdArrayTensor,
    gamma: &NdArrayTensor,
    gradient: &NdArrayTensor,
    eps: f64,
) -> Result<NdArrayTensor> {
    let op = "layer_norm_backward";
    let (input, gamma_of) = ((tensor.shape(), tensor.dtype()), (gamma.shape(), gamma.dtype()));
    layer_norm_axis(op, (&input.0, input.1), (&gamma_of.0, gamma_of.1), (&gamma_of.0, gamma_of.1))?;
    check_gradient_operand(op, (&input.0, input.1), (&gradient.shape(), gradient.dtype()))?;
    let eps = tensor.scalar(eps);
    with_arrays!(op, tensor, gradient, |x, g| {
        let gamma = parameter::<E>(op, gamma, input.1)?;
        let (x, g, gamma) = (row_major(op, x.view())?, row_major(op, g.view())?, row_major(op, gamma.view())?);
        let eps = E::of_f64(eps);
        // SAFETY: `layer_norm_backward_row` writes every output of the row (NaN for rows of other lengths).
        let values = unsafe {
            written_in_rows::<E>(op, &input.0, |rows, outputs| {
                row_pair((&x, &g), rows, outputs, |x, g, outputs| layer_norm_backward_row((x, g, &gamma), eps, outputs))
            })?
        };
        Ok(NdArrayTensor::output(tensor.dtype(), values))
    })
}

/// `layer_norm_parameter_gradients` by `kernels::reduce::layer_norm_parameter_sums`, the half dtypes in `f32` and
/// rounded once. `eps` is rounded to the dtype first, as a scalar operand is everywhere.
pub(super) fn layer_norm_parameter_gradients(
    tensor: &NdArrayTensor,
    gradient: &NdArrayTensor,
    eps: f64,
) -> Result<NdArrayTensor> {
    let op = "layer_norm_parameter_gradients";
    let shape = tensor.shape();
    check_gradient_operand(op, (&shape, tensor.dtype()), (&gradient.shape(), gradient.dtype()))?;
    let width = layer_norm_width(op, &shape)?;
    let eps = tensor.scalar(eps);
    with_arrays!(op, tensor, gradient, |x, g| {
        let (x, g) = (row_major(op, x.view())?, row_major(op, g.view())?);
        let sums = layer_norm_parameter_sums(op, (&x, &g), width, E::of_f64(eps))?;
        let sums = ArrayD::from_shape_vec(IxDyn(&[2, width]), sums).map_err(|error| ndarray_error(op, error))?;
        Ok(NdArrayTensor::output(tensor.dtype(), sums))
    })
}

/// A row-major array of `shape` in a kept buffer (or a fresh one), written a row of its last axis at a time by
/// `write(rows, outputs)`, `rows` being the row's range of indices; rows across threads when there are many.
///
/// # Safety
///
/// `write` writes every element of each row it is handed.
unsafe fn written_in_rows<E: Element>(
    op: &'static str,
    shape: &Shape,
    write: impl Fn(Range<usize>, &mut [MaybeUninit<E>]) + Sync + Send,
) -> Result<ArrayD<E>> {
    check_output::<E>(op, shape.num_elements())?;
    let (len, width) = (shape.num_elements(), shape.dims().last().copied().unwrap_or(1));
    // SAFETY: `write` writes every element of each row, as this function's caller promises.
    let values = unsafe { parallel::written_in_rows(buffers::buffer(len), (len, width), Work::Heavy, write) }
        .ok_or_else(|| Error::backend("ndarray", op, "an output buffer shorter than asked"))?;
    ArrayD::from_shape_vec(IxDyn(shape.dims()), values).map_err(|error| ndarray_error(op, error))
}

/// One pass per row: the target's log-probability, `(x[target] - max) - log Σ exp(x - max)`, the very value
/// `log_softmax` puts there, without the `[rows, classes]` output; then their mean, summed as `mean` sums, negated.
/// Every target is checked before any work.
pub(super) fn cross_entropy(logits: &NdArrayTensor, targets: &NdArrayIntTensor) -> Result<NdArrayTensor> {
    let op = "cross_entropy";
    let (rows, classes) = cross_entropy_rows(op, &logits.shape(), &targets.shape())?;
    let targets = positions(op, targets.array(), classes)?;
    with_array!(logits, |array| {
        let values = row_major(op, array.view())?;
        let mut picked = memory::try_vec::<E>(op, rows)?;
        // No classes means no rows: a row would have had a target out of range.
        if classes > 0 {
            for (row, &target) in values.chunks_exact(classes).zip(&targets) {
                picked.push(picked_log_probability(row, target));
            }
        }
        let picked = ndarray::Array1::from(picked);
        Ok(scalar(logits, -(picked.sum() * reciprocal::<E>(rows))))
    })
}

/// `log_softmax(row)[target]`, the very value `normalise_row` puts there.
fn picked_log_probability<E: Element>(row: &[E], target: usize) -> E {
    // `target` was checked against the row's length.
    let (Some(max), Some(&picked)) = (row_max(row), row.get(target)) else { return E::nan() };
    (picked - max) - log_sum_exp_of_row(row, max)
}

/// Each row of the last axis normalised in place on a row-major copy (`kernels::reduce::layer_norm_row`, the kernel
/// candle's CPU tensors run too); rows across threads when there are many. `eps` is rounded to the tensor's dtype
/// first, as a scalar operand is everywhere.
pub(super) fn layer_norm(
    tensor: &NdArrayTensor,
    gamma: &NdArrayTensor,
    beta: &NdArrayTensor,
    eps: f64,
) -> Result<NdArrayTensor> {
    let op = "layer_norm";
    let of = |tensor: &NdArrayTensor| (tensor.shape(), tensor.dtype());
    let (input, gamma_of, beta_of) = (of(tensor), of(gamma), of(beta));
    let (_, width) = layer_norm_axis(op, (&input.0, input.1), (&gamma_of.0, gamma_of.1), (&beta_of.0, beta_of.1))?;
    let eps = tensor.scalar(eps);
    with_array!(tensor, |array| {
        check_output::<E>(op, input.0.num_elements())?;
        let (gamma, beta) = (parameter::<E>(op, gamma, input.1)?, parameter::<E>(op, beta, input.1)?);
        let (gamma, beta) = (row_major(op, gamma.view())?, row_major(op, beta.view())?);
        let mut output = buffers::row_major_copy(array.view()).map_err(|error| ndarray_error(op, error))?;
        if let Some(values) = output.as_slice_mut() {
            let eps = E::of_f64(eps);
            for_each_row(values, width, |_, row| layer_norm_row(row, (&gamma, &beta), eps));
        }
        Ok(NdArrayTensor::output(tensor.dtype(), output))
    })
}

/// The array of a parameter of `layer_norm`, of the input's dtype `dtype` (as `layer_norm_axis` checked).
fn parameter<'a, E: Element>(op: &'static str, tensor: &'a NdArrayTensor, dtype: DType) -> Result<&'a ArcArrayD<E>> {
    E::stored(tensor.values()).ok_or(Error::DTypeMismatch { op, lhs: dtype, rhs: tensor.dtype() })
}

pub(super) fn argmax(tensor: &NdArrayTensor, axis: usize) -> Result<NdArrayIntTensor> {
    let shape = tensor.shape();
    check_picking_axis("argmax", &shape, axis)?;
    check_reduced_output::<i64>("argmax", &shape, axis)?;
    let indices = with_array!(tensor, |array| array.map_axis(Axis(axis), |lane| first_max_index(lane) as i64));
    Ok(NdArrayIntTensor::new(indices.insert_axis(Axis(axis))))
}

/// The largest entry of each lane (NaN for a lane holding NaN); an empty axis has none.
pub(super) fn max_dim(tensor: &NdArrayTensor, axis: usize) -> Result<NdArrayTensor> {
    with_array!(tensor, |array| extreme_dim::<E>("max_dim", tensor, array, axis, E::NEG_INFINITY, math::maximum))
}

pub(super) fn min_dim(tensor: &NdArrayTensor, axis: usize) -> Result<NdArrayTensor> {
    with_array!(tensor, |array| extreme_dim::<E>("min_dim", tensor, array, axis, E::INFINITY, math::minimum))
}

/// `pick` folded over each lane from `none`, which it never keeps over an entry (`maximum` from `-inf`).
fn extreme_dim<E: Element>(
    op: &'static str,
    tensor: &NdArrayTensor,
    array: &ArcArrayD<E>,
    axis: usize,
    none: E,
    pick: fn(E, E) -> E,
) -> Result<NdArrayTensor> {
    check_picking_axis(op, &tensor.shape(), axis)?;
    check_reduced_output::<E>(op, &tensor.shape(), axis)?;
    Ok(NdArrayTensor::output(tensor.dtype(), fold_lanes(array, axis, none, pick)))
}

/// The largest (`max`) or smallest (`min`) element; `pick` is commutative, NaN included, so the elements are
/// visited in memory order. An empty tensor is the error of an empty axis.
pub(super) fn max(tensor: &NdArrayTensor) -> Result<NdArrayTensor> {
    with_array!(tensor, |array| extreme("max", tensor, array, E::NEG_INFINITY, math::maximum::<E>))
}

pub(super) fn min(tensor: &NdArrayTensor) -> Result<NdArrayTensor> {
    with_array!(tensor, |array| extreme("min", tensor, array, E::INFINITY, math::minimum::<E>))
}

fn extreme<E: Element>(
    op: &'static str,
    tensor: &NdArrayTensor,
    array: &ArcArrayD<E>,
    none: E,
    pick: fn(E, E) -> E,
) -> Result<NdArrayTensor> {
    if array.is_empty() {
        return Err(Error::unexpected_shape(op, EMPTY_AXIS, &tensor.shape()));
    }
    Ok(scalar(tensor, array.fold(none, |best, &x| pick(best, x))))
}

/// The product of each lane (1 for an empty one).
pub(super) fn prod_dim(tensor: &NdArrayTensor, axis: usize) -> Result<NdArrayTensor> {
    let shape = tensor.shape();
    shape.check_axis("prod_dim", axis)?;
    with_array!(tensor, |array| {
        check_reduced_output::<E>("prod_dim", &shape, axis)?;
        Ok(NdArrayTensor::output(tensor.dtype(), fold_lanes(array, axis, 1.0, |product, x| product * x)))
    })
}

/// The product of every element, multiplied in memory order (row-major for a row-major tensor).
pub(super) fn prod(tensor: &NdArrayTensor) -> NdArrayTensor {
    with_array!(tensor, |array| scalar(tensor, array.fold(1.0, |product, &x| product * x)))
}

/// The index of the first smallest entry of each lane, NaN entries skipped (0 for a lane of NaN alone).
pub(super) fn argmin(tensor: &NdArrayTensor, axis: usize) -> Result<NdArrayIntTensor> {
    let shape = tensor.shape();
    check_picking_axis("argmin", &shape, axis)?;
    check_reduced_output::<i64>("argmin", &shape, axis)?;
    let indices = with_array!(tensor, |array| array.map_axis(Axis(axis), |lane| first_min_index(lane) as i64));
    Ok(NdArrayIntTensor::new(indices.insert_axis(Axis(axis))))
}

/// `f` folded over each lane along `axis` in order, from `init`, keeping the axis with size 1: lane by lane when
/// the lanes are contiguous, else a whole slice along the axis at a time (which reads memory in order).
fn fold_lanes<E: Element>(array: &ArcArrayD<E>, axis: usize, init: E, f: impl Fn(E, E) -> E) -> ArrayD<E> {
    let folded = if array.stride_of(Axis(axis)) == 1 {
        array.map_axis(Axis(axis), |lane| lane.fold(init, |acc, &x| f(acc, x)))
    } else {
        array.fold_axis(Axis(axis), init, |&acc, &x| f(acc, x))
    };
    folded.insert_axis(Axis(axis))
}

/// Checks `axis` for an op that picks one entry of each lane: an empty axis has none to pick.
fn check_picking_axis(op: &'static str, shape: &Shape, axis: usize) -> Result<()> {
    shape.check_axis(op, axis)?;
    if shape.dims()[axis] == 0 {
        return Err(Error::unexpected_shape(op, EMPTY_AXIS, shape));
    }
    Ok(())
}

/// Checks `axis` and the room for the output of a reduction along it, which keeps the axis with size 1. An
/// empty axis can make the output much larger than the input (`[0, n]` reduces to `[1, n]`).
fn check_reduced_output<T>(op: &'static str, shape: &Shape, axis: usize) -> Result<()> {
    check_output::<T>(op, shape.with_dim(op, axis, 1)?.num_elements())
}

/// `1 / count`, rounded once to the element type, exactly the factor the candle backend scales its means by.
fn reciprocal<E: Element>(count: usize) -> E {
    E::of_f64(1.0 / count as f64)
}

fn scalar<E: Element>(like: &NdArrayTensor, value: E) -> NdArrayTensor {
    NdArrayTensor::output(like.dtype(), ArrayD::from_elem(IxDyn(&[1]), value))
}

fn first_max_index<E: Element>(lane: ArrayView1<'_, E>) -> usize {
    let mut best = (0, E::nan());
    for (index, &x) in lane.iter().enumerate() {
        if index == 0 || best.1 < x {
            best = (index, x);
        }
    }
    best.0
}

/// The first entry below every other, NaN skipped; 0 if there is none.
fn first_min_index<E: Element>(lane: ArrayView1<'_, E>) -> usize {
    let mut best: Option<(usize, E)> = None;
    for (index, &x) in lane.iter().enumerate() {
        if !x.is_nan() && best.is_none_or(|(_, min)| x < min) {
            best = Some((index, x));
        }
    }
    best.map_or(0, |(index, _)| index)
}
