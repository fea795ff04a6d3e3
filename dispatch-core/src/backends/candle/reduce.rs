//! Reductions: over every element (shape `[1]`), or along one axis keeping it with size 1.

use candle_core::{DType, Tensor};

use super::error::{OrBackend, float_dtype};
use super::layout::shape_of;
use super::memory::{check_output, check_output_like};
use crate::backend::defaults::EMPTY_AXIS;
use crate::error::{Error, Result};

pub(super) fn sum(tensor: &Tensor) -> Result<Tensor> {
    float_dtype("sum", tensor)?;
    tensor.sum_all().and_then(|sum| sum.reshape(1)).or_backend("sum")
}

/// The mean of no elements is NaN (0 times 1/0), as on every backend.
pub(super) fn mean(tensor: &Tensor) -> Result<Tensor> {
    float_dtype("mean", tensor)?;
    let scale = reciprocal(tensor.elem_count());
    sum(tensor)?.affine(scale, 0.0).or_backend("mean")
}

pub(super) fn sum_dim(tensor: &Tensor, axis: usize) -> Result<Tensor> {
    float_dtype("sum_dim", tensor)?;
    check_reduced_output("sum_dim", tensor, axis, tensor.dtype())?;
    tensor.sum_keepdim(axis).or_backend("sum_dim")
}

pub(super) fn mean_dim(tensor: &Tensor, axis: usize) -> Result<Tensor> {
    float_dtype("mean_dim", tensor)?;
    check_reduced_output("mean_dim", tensor, axis, tensor.dtype())?;
    let scale = reciprocal(tensor.dims()[axis]);
    tensor.sum_keepdim(axis).and_then(|sums| sums.affine(scale, 0.0)).or_backend("mean_dim")
}

/// `x - max - log(sum(exp(x - max)))`, the same order of operations as the ndarray backend.
pub(super) fn log_softmax(tensor: &Tensor, axis: usize) -> Result<Tensor> {
    float_dtype("log_softmax", tensor)?;
    shape_of(tensor).check_axis("log_softmax", axis)?;
    check_output_like("log_softmax", tensor)?;
    if tensor.elem_count() == 0 {
        // candle's max refuses empty tensors; there is nothing to normalise.
        return Ok(tensor.clone());
    }
    let stable = || {
        let shifted = tensor.broadcast_sub(&tensor.max_keepdim(axis)?)?;
        let log_sum_exp = shifted.exp()?.sum_keepdim(axis)?.log()?;
        shifted.broadcast_sub(&log_sum_exp)
    };
    stable().or_backend("log_softmax")
}

pub(super) fn argmax(tensor: &Tensor, axis: usize) -> Result<Tensor> {
    float_dtype("argmax", tensor)?;
    let shape = shape_of(tensor);
    shape.check_axis("argmax", axis)?;
    if shape.dims()[axis] == 0 {
        return Err(Error::unexpected_shape("argmax", EMPTY_AXIS, &shape));
    }
    check_reduced_output("argmax", tensor, axis, DType::I64)?;
    if tensor.elem_count() == 0 {
        // Another axis is empty, so the result is empty too; candle refuses to reduce an empty tensor.
        let dims = shape.with_dim("argmax", axis, 1)?;
        return Tensor::zeros(dims.dims(), DType::I64, tensor.device()).or_backend("argmax");
    }
    tensor.argmax_keepdim(axis).and_then(|indices| indices.to_dtype(DType::I64)).or_backend("argmax")
}

/// Checks `axis` and the room for the output of a reduction along it, which keeps the axis with size 1. An
/// empty axis can make the output much larger than the input (`[0, n]` reduces to `[1, n]`).
fn check_reduced_output(op: &'static str, tensor: &Tensor, axis: usize, dtype: DType) -> Result<()> {
    let output = shape_of(tensor).with_dim(op, axis, 1)?;
    check_output(op, tensor.device(), output.num_elements(), dtype)
}

/// `1 / count`, rounded once, as the ndarray backend scales its means.
fn reciprocal(count: usize) -> f64 {
    1.0 / count as f64
}
