//! Comparisons and masks: candle's `cmp` kernels give `U8` tensors (0 or 1), which are this backend's bool tensors,
//! and `where_cond` picks by them.

use candle_core::Tensor;
use candle_core::op::CmpOp;

use super::elementwise::scalar_for;
use super::error::{OrBackend, float_dtype};
use super::layout::shape_of;
use super::memory::{check_output, check_output_like, empty_like, empty_output, filled};
use super::operands::{check_operands, check_same_device};
use crate::error::Result;
use crate::shape::Shape;

/// `lhs op rhs` element-wise, the two broadcast together (numpy rules).
pub(super) fn compare(op: &'static str, comparison: CmpOp, lhs: &Tensor, rhs: &Tensor) -> Result<Tensor> {
    check_operands(op, [lhs, rhs])?;
    let shape = Shape::broadcast(op, &shape_of(lhs), &shape_of(rhs))?;
    check_output(op, lhs.device(), shape.num_elements(), candle_core::DType::U8)?;
    if let Some(empty) = empty_output(op, &shape, candle_core::DType::U8, lhs.device())? {
        return Ok(empty);
    }
    let grown = |tensor: &Tensor| tensor.broadcast_as(shape.dims()).or_backend(op);
    grown(lhs)?.cmp(&grown(rhs)?, comparison).or_backend(op)
}

/// `tensor op scalar` element-wise, the scalar rounded once to the tensor's dtype.
pub(super) fn compare_scalar(op: &'static str, comparison: CmpOp, tensor: &Tensor, scalar: f64) -> Result<Tensor> {
    float_dtype(op, tensor)?;
    check_output(op, tensor.device(), tensor.elem_count(), candle_core::DType::U8)?;
    if let Some(empty) = empty_output(op, &shape_of(tensor), candle_core::DType::U8, tensor.device())? {
        return Ok(empty);
    }
    tensor.cmp(scalar_for(tensor, scalar), comparison).or_backend(op)
}

/// `value` where `mask` (a `U8` tensor broadcast to the tensor's shape) is set, the tensor's element elsewhere: one
/// `where_cond` over a broadcast scalar, with the host default's errors.
pub(super) fn mask_fill(tensor: &Tensor, mask: &Tensor, value: f64) -> Result<Tensor> {
    let op = "mask_fill";
    check_same_device(op, tensor, mask)?;
    let (shape, mask_shape) = (Shape::new(tensor.dims()), Shape::new(mask.dims()));
    Shape::check_mask_fits(op, &shape, &mask_shape)?;
    check_output_like(op, tensor)?;
    if let Some(empty) = empty_like(op, tensor)? {
        return Ok(empty);
    }
    let fill = filled(op, &Shape::new([1]), value, float_dtype(op, tensor)?, tensor.device())?;
    let (fill, mask) =
        (fill.broadcast_as(tensor.dims()).or_backend(op)?, mask.broadcast_as(tensor.dims()).or_backend(op)?);
    mask.where_cond(&fill, tensor).or_backend(op)
}

/// `on_true` where `mask` is set, `on_false` elsewhere, the three broadcast together.
pub(super) fn mask_where(mask: &Tensor, on_true: &Tensor, on_false: &Tensor) -> Result<Tensor> {
    let op = "mask_where";
    check_operands(op, [on_true, on_false])?;
    check_same_device(op, on_true, mask)?;
    let shape = Shape::broadcast_three(
        op,
        &Shape::new(mask.dims()),
        &Shape::new(on_true.dims()),
        &Shape::new(on_false.dims()),
    )?;
    check_output(op, on_true.device(), shape.num_elements(), on_true.dtype())?;
    if let Some(empty) = empty_output(op, &shape, on_true.dtype(), on_true.device())? {
        return Ok(empty);
    }
    let grown = |tensor: &Tensor| tensor.broadcast_as(shape.dims()).or_backend(op);
    grown(mask)?.where_cond(&grown(on_true)?, &grown(on_false)?).or_backend(op)
}
