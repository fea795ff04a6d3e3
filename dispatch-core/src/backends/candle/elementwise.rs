//! Element-wise ops. Binary ops broadcast with numpy rules, which candle's `broadcast_*` ops follow too; we check
//! devices and shapes first so that a mismatch is our typed error, not a candle string.

use candle_core::Tensor;

use super::error::{OrBackend, check_operands, check_same_device, dtype_of, float_dtype};
use super::memory::{check_output, check_output_like, filled};
use crate::error::Result;
use crate::shape::Shape;

#[derive(Clone, Copy)]
pub(super) enum BinaryOp {
    Add,
    Sub,
    Mul,
    Div,
}

impl BinaryOp {
    fn name(self) -> &'static str {
        match self {
            Self::Add => "add",
            Self::Sub => "sub",
            Self::Mul => "mul",
            Self::Div => "div",
        }
    }
}

pub(super) fn binary(op: BinaryOp, lhs: &Tensor, rhs: &Tensor) -> Result<Tensor> {
    let name = op.name();
    check_operands(name, [lhs, rhs])?;
    let shape = Shape::broadcast(name, &Shape::new(lhs.dims()), &Shape::new(rhs.dims()))?;
    check_output(name, lhs.device(), shape.num_elements(), lhs.dtype())?;
    let result = match op {
        BinaryOp::Add => lhs.broadcast_add(rhs),
        BinaryOp::Sub => lhs.broadcast_sub(rhs),
        BinaryOp::Mul => lhs.broadcast_mul(rhs),
        BinaryOp::Div => lhs.broadcast_div(rhs),
    };
    result.or_backend(name)
}

/// Runs candle's one-tensor op `f`, whose output has the input's size, once there is room for that output.
pub(super) fn unary(
    op: &'static str,
    tensor: &Tensor,
    f: impl FnOnce(&Tensor) -> candle_core::Result<Tensor>,
) -> Result<Tensor> {
    float_dtype(op, tensor)?;
    check_output_like(op, tensor)?;
    f(tensor).or_backend(op)
}

/// `scalar` rounded once to the tensor's dtype, so that candle's own conversion of it (which for `f16` and `bf16`
/// goes through `f32` and would round twice) is exact.
pub(super) fn scalar_for(tensor: &Tensor, scalar: f64) -> f64 {
    dtype_of(tensor).round(scalar)
}

pub(super) fn add_scalar(tensor: &Tensor, scalar: f64) -> Result<Tensor> {
    unary("add_scalar", tensor, |t| t.affine(1.0, scalar_for(t, scalar)))
}

pub(super) fn mul_scalar(tensor: &Tensor, scalar: f64) -> Result<Tensor> {
    unary("mul_scalar", tensor, |t| t.affine(scalar_for(t, scalar), 0.0))
}

pub(super) fn greater_scalar(tensor: &Tensor, threshold: f64) -> Result<Tensor> {
    unary("greater_scalar", tensor, |t| t.gt(scalar_for(t, threshold)).and_then(|mask| mask.to_dtype(t.dtype())))
}

/// `1 / (1 + exp(-x))`: candle-core has no sigmoid, and this is the expression the ndarray backend evaluates, so
/// both round alike.
pub(super) fn sigmoid(tensor: &Tensor) -> Result<Tensor> {
    unary("sigmoid", tensor, |t| t.neg()?.exp()?.affine(1.0, 1.0)?.recip())
}

/// `value` where `mask` (a `U8` tensor broadcast to the tensor's shape) is set, the tensor's element elsewhere: one
/// `where_cond` over a broadcast scalar, with the host default's errors.
pub(super) fn mask_fill(tensor: &Tensor, mask: &Tensor, value: f64) -> Result<Tensor> {
    let op = "mask_fill";
    check_same_device(op, tensor, mask)?;
    let (shape, mask_shape) = (Shape::new(tensor.dims()), Shape::new(mask.dims()));
    Shape::check_mask_fits(op, &shape, &mask_shape)?;
    check_output_like(op, tensor)?;
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
    let grown = |tensor: &Tensor| tensor.broadcast_as(shape.dims()).or_backend(op);
    grown(mask)?.where_cond(&grown(on_true)?, &grown(on_false)?).or_backend(op)
}
