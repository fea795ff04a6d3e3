//! Indexing on candle's kernels: `index_select`, `index_add`, `gather` and `scatter_add`, with `I64` indices. The
//! indices are checked first, in place on the CPU and on the device elsewhere (one value read back): candle's CPU kernels take `i64::MAX` for
//! padding and its CUDA kernels do not check at all, so an index out of range must never reach them. The checks
//! run in the order of the host defaults, so that bad input gets the same error on every backend.

use candle_core::{DType as CandleDType, Tensor};

use super::error::{OrBackend, candle_dtype, dtype_of, float_dtype};
use super::indices::{check_in_range, counting};
use super::layout::shape_of;
use super::memory::{check_output, check_output_like, empty_like, filled};
use super::operands::{check_kind, check_operands, check_same_device};
use crate::dtype::DType;
use crate::error::{Error, RankRule, Result};
use crate::shape::Shape;

/// The checks every indexing op makes of its int operand: an `I64` tensor on the float tensor's device.
fn check_indices(op: &'static str, tensor: &Tensor, indices: &Tensor) -> Result<()> {
    check_kind(op, CandleDType::I64, [indices])?;
    check_same_device(op, tensor, indices)
}

/// A 1-D tensor of indices into an axis of `len` entries, all in range; returns how many there are.
fn checked_picks(op: &'static str, indices: &Tensor, len: usize) -> Result<usize> {
    let shape = shape_of(indices);
    if shape.rank() != 1 {
        return Err(Error::unexpected_rank(op, "indices", RankRule::Exactly(1), &shape));
    }
    check_in_range(op, indices, len)?;
    Ok(shape.dims()[0])
}

/// `tensor` in row-major order, which candle's indexing kernels need on the CPU and on CUDA; a strided tensor is copied.
fn row_major(op: &'static str, tensor: &Tensor) -> Result<Tensor> {
    if tensor.is_contiguous() {
        return Ok(tensor.clone());
    }
    check_output_like(op, tensor)?;
    tensor.contiguous().or_backend(op)
}

/// `tensor` row-major from the start of its storage: the destination of candle's `index_add`. Its CUDA kernel
/// copies the destination into a fresh buffer, then reads the copy by the destination's own layout: a strided one is
/// refused, and one at an offset (a narrowed view) is read past the copy's end, which panics in cudarc.
fn row_major_from_start(op: &'static str, tensor: &Tensor) -> Result<Tensor> {
    if tensor.is_contiguous() && tensor.layout().start_offset() == 0 {
        return Ok(tensor.clone());
    }
    check_output_like(op, tensor)?;
    tensor.force_contiguous().or_backend(op)
}

pub(super) fn index_select(tensor: &Tensor, axis: usize, indices: &Tensor) -> Result<Tensor> {
    let op = "index_select";
    float_dtype(op, tensor)?;
    check_indices(op, tensor, indices)?;
    let shape = shape_of(tensor);
    shape.check_axis(op, axis)?;
    let picks = checked_picks(op, indices, shape.dims()[axis])?;
    let output = shape.with_dim(op, axis, picks)?;
    check_output(op, tensor.device(), output.num_elements(), tensor.dtype())?;
    if output.num_elements() == 0 {
        return filled(op, &output, 0.0, dtype_of(tensor), tensor.device());
    }
    row_major(op, tensor)?.index_select(&row_major(op, indices)?, axis).or_backend(op)
}

/// candle's `index_add`, which adds repeated indices up in order (one thread per output lane on CUDA).
pub(super) fn select_add(tensor: &Tensor, axis: usize, indices: &Tensor, source: &Tensor) -> Result<Tensor> {
    let op = "select_add";
    check_operands(op, [tensor, source])?;
    check_indices(op, tensor, indices)?;
    let (shape, source_shape) = (shape_of(tensor), shape_of(source));
    shape.check_axis(op, axis)?;
    let picks = checked_picks(op, indices, shape.dims()[axis])?;
    if shape.with_dim(op, axis, picks)? != source_shape {
        return Err(Error::shape_mismatch(op, &shape, &source_shape));
    }
    check_output_like(op, tensor)?;
    if let Some(empty) = empty_like(op, tensor)? {
        return Ok(empty);
    }
    if source.elem_count() == 0 {
        // Nothing to add; a fresh copy, as the kernel would give.
        return tensor.copy().or_backend(op);
    }
    row_major_from_start(op, tensor)?.index_add(&row_major(op, indices)?, &row_major(op, source)?, axis).or_backend(op)
}

/// The checks of `gather` and `scatter_add`, in the host default's order: `indices` has `tensor`'s rank and its
/// sizes but along `axis`, and every index is in range.
fn check_gather_indices(op: &'static str, tensor: &Tensor, axis: usize, indices: &Tensor) -> Result<()> {
    check_indices(op, tensor, indices)?;
    let (shape, index_shape) = (shape_of(tensor), shape_of(indices));
    shape.check_axis(op, axis)?;
    let matches = index_shape.rank() == shape.rank()
        && index_shape.dims().iter().zip(shape.dims()).enumerate().all(|(d, (a, b))| d == axis || a == b);
    if !matches {
        return Err(Error::shape_mismatch(op, &shape, &index_shape));
    }
    check_in_range(op, indices, shape.dims()[axis])
}

pub(super) fn gather(tensor: &Tensor, axis: usize, indices: &Tensor) -> Result<Tensor> {
    let op = "gather";
    float_dtype(op, tensor)?;
    check_gather_indices(op, tensor, axis, indices)?;
    check_output(op, tensor.device(), indices.elem_count(), tensor.dtype())?;
    if indices.elem_count() == 0 {
        return filled(op, &shape_of(indices), 0.0, dtype_of(tensor), tensor.device());
    }
    row_major(op, tensor)?.gather(&row_major(op, indices)?, axis).or_backend(op)
}

/// candle's `scatter_add`: one thread per lane of the axis on CUDA, so repeated indices add up without a race.
pub(super) fn scatter_add(tensor: &Tensor, axis: usize, indices: &Tensor, source: &Tensor) -> Result<Tensor> {
    let op = "scatter_add";
    check_operands(op, [tensor, source])?;
    check_gather_indices(op, tensor, axis, indices)?;
    let (index_shape, source_shape) = (shape_of(indices), shape_of(source));
    if index_shape != source_shape {
        return Err(Error::shape_mismatch(op, &index_shape, &source_shape));
    }
    check_output_like(op, tensor)?;
    if let Some(empty) = empty_like(op, tensor)? {
        return Ok(empty);
    }
    if source.elem_count() == 0 {
        return tensor.copy().or_backend(op);
    }
    // Row-major destination, as for `select_add`.
    row_major(op, tensor)?.scatter_add(&row_major(op, indices)?, &row_major(op, source)?, axis).or_backend(op)
}

/// Each index compared with `0..classes` on the device: `[.., classes]` flags, converted to `dtype` (0 and 1 are
/// exact in every dtype).
pub(super) fn one_hot(indices: &Tensor, classes: usize, dtype: DType) -> Result<Tensor> {
    let op = "one_hot";
    check_kind(op, CandleDType::I64, [indices])?;
    let mut dims = indices.dims().to_vec();
    dims.push(classes);
    let output = Shape::new(dims);
    output.check_tensor_shape(op)?;
    check_in_range(op, indices, classes)?;
    check_output(op, indices.device(), output.num_elements(), CandleDType::U8)?;
    check_output(op, indices.device(), output.num_elements(), candle_dtype(dtype))?;
    if output.num_elements() == 0 {
        return filled(op, &output, 0.0, dtype, indices.device());
    }
    let every_class = counting(op, classes, indices.device())?;
    let hot = (|| {
        let column = indices.unsqueeze(indices.rank())?;
        column.broadcast_eq(&every_class)?.to_dtype(candle_dtype(dtype))
    })();
    hot.or_backend(op)
}
