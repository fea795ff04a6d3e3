//! Layout ops: candle's `transpose`, `narrow` and `permute` are views; `reshape` copies a non-contiguous input
//! itself; `flip` picks each flipped axis's entries in reverse order with `index_select`.

use candle_core::Tensor;

use super::error::{OrBackend, dtype_of, float_dtype};
use super::indices::{constant, counting};
use super::memory::{check_output, check_output_like, empty_output, filled};
use super::operands::check_operands;
use crate::error::Result;
use crate::shape::Shape;

pub(super) fn shape_of(tensor: &Tensor) -> Shape {
    Shape::new(tensor.dims())
}

pub(super) fn swap_dims(tensor: &Tensor, dim0: usize, dim1: usize) -> Result<Tensor> {
    float_dtype("swap_dims", tensor)?;
    shape_of(tensor).swap_dims("swap_dims", dim0, dim1)?;
    tensor.transpose(dim0, dim1).or_backend("swap_dims")
}

pub(super) fn reshape(tensor: &Tensor, shape: &Shape) -> Result<Tensor> {
    float_dtype("reshape", tensor)?;
    shape_of(tensor).check_reshape(shape)?;
    if let Some(empty) = empty_output("reshape", shape, tensor.dtype(), tensor.device())? {
        return Ok(empty);
    }
    if !tensor.is_contiguous() {
        // candle copies a strided tensor into row-major order first.
        check_output_like("reshape", tensor)?;
    }
    tensor.reshape(shape.dims()).or_backend("reshape")
}

pub(super) fn narrow(tensor: &Tensor, axis: usize, start: usize, len: usize) -> Result<Tensor> {
    float_dtype("narrow", tensor)?;
    let shape = shape_of(tensor);
    shape.check_narrow(axis, start, len)?;
    if tensor.elem_count() == 0 || len == 0 {
        // candle's empty view at an offset panics when read or concatenated (past the end of an empty storage, or
        // copied from as if it had rows): an empty result is made fresh.
        return filled("narrow", &shape.with_dim("narrow", axis, len)?, 0.0, dtype_of(tensor), tensor.device());
    }
    tensor.narrow(axis, start, len).or_backend("narrow")
}

pub(super) fn cat(tensors: &[Tensor], axis: usize) -> Result<Tensor> {
    check_operands("cat", tensors)?;
    let shapes: Vec<Shape> = tensors.iter().map(shape_of).collect();
    let shape = Shape::concat(&shapes, axis)?;
    // `Shape::concat` refuses an empty list.
    let Some(first) = tensors.first() else { return Tensor::cat(tensors, axis).or_backend("cat") };
    check_output("cat", first.device(), shape.num_elements(), first.dtype())?;
    if let Some(empty) = empty_output("cat", &shape, first.dtype(), first.device())? {
        return Ok(empty);
    }
    // An empty operand adds nothing, and candle would copy it with a kernel over no elements (see `empty_output`).
    let nonempty: Vec<&Tensor> = tensors.iter().filter(|tensor| tensor.elem_count() > 0).collect();
    Tensor::cat(&nonempty, axis).or_backend("cat")
}

pub(super) fn permute(tensor: &Tensor, axes: Vec<usize>) -> Result<Tensor> {
    float_dtype("permute", tensor)?;
    shape_of(tensor).permute(&axes)?;
    tensor.permute(axes).or_backend("permute")
}

/// Each axis named in `axes` (once or more) reversed: `index_select` of `len - 1, ..., 0`, counted on the device
/// (candle's own `flip` builds those indices on the host and uploads them).
pub(super) fn flip(tensor: &Tensor, axes: &[usize]) -> Result<Tensor> {
    let op = "flip";
    float_dtype(op, tensor)?;
    let shape = shape_of(tensor);
    for &axis in axes {
        shape.check_axis(op, axis)?;
    }
    let mut flipped = tensor.clone();
    for (axis, &len) in shape.dims().iter().enumerate() {
        if !axes.contains(&axis) || len < 2 || tensor.elem_count() == 0 {
            continue;
        }
        check_output_like(op, tensor)?;
        let reversed = counting(op, len, tensor.device())?;
        let picked = || {
            // `len - 1` fits in `i64`: `counting` made `len` values.
            let reversed = constant(len as i64 - 1, tensor.device())?.broadcast_sub(&reversed)?;
            flipped.contiguous()?.index_select(&reversed, axis)
        };
        flipped = picked().or_backend(op)?;
    }
    Ok(flipped)
}
