//! Int arithmetic and comparisons on candle's `I64` kernels, broadcasting with numpy rules. Addition,
//! subtraction, multiplication and sums wrap (see `wrapping`); a division checks its divisors on the device first.

use candle_core::op::CmpOp;
use candle_core::{DType as CandleDType, Tensor};

use super::wrapping;
use crate::backend::defaults::int_division_error;
use crate::backends::candle::error::OrBackend;
use crate::backends::candle::indices::{any_set, constant, first_refused_in_place, first_set, read_value};
use crate::backends::candle::layout::shape_of;
use crate::backends::candle::memory::{check_output, check_output_like, empty_like, empty_output};
use crate::backends::candle::operands::check_kind;
use crate::error::Result;
use crate::shape::Shape;

/// The int ops of two tensors that wrap on overflow.
#[derive(Clone, Copy)]
pub(in crate::backends::candle) enum IntOp {
    Add,
    Sub,
    Mul,
}

/// Checks two int operands and the room for their broadcast output of `dtype`: that output's shape, and the output
/// itself when it is empty (see `empty_output`).
fn broadcast_operands(
    op: &'static str,
    lhs: &Tensor,
    rhs: &Tensor,
    dtype: CandleDType,
) -> Result<(Shape, Option<Tensor>)> {
    check_kind(op, CandleDType::I64, [lhs, rhs])?;
    let shape = Shape::broadcast(op, &shape_of(lhs), &shape_of(rhs))?;
    check_output(op, lhs.device(), shape.num_elements(), dtype)?;
    let empty = empty_output(op, &shape, dtype, lhs.device())?;
    Ok((shape, empty))
}

pub(in crate::backends::candle) fn int_arithmetic(op: IntOp, lhs: &Tensor, rhs: &Tensor) -> Result<Tensor> {
    let name = match op {
        IntOp::Add => "int_add",
        IntOp::Sub => "int_sub",
        IntOp::Mul => "int_mul",
    };
    if let (_, Some(empty)) = broadcast_operands(name, lhs, rhs, CandleDType::I64)? {
        return Ok(empty);
    }
    match op {
        IntOp::Add => wrapping::add(lhs, rhs),
        IntOp::Sub => wrapping::sub(lhs, rhs),
        IntOp::Mul => wrapping::mul(lhs, rhs),
    }
    .or_backend(name)
}

pub(in crate::backends::candle) fn int_add_scalar(tensor: &Tensor, scalar: i64) -> Result<Tensor> {
    with_scalar("int_add_scalar", tensor, scalar, wrapping::add)
}

pub(in crate::backends::candle) fn int_mul_scalar(tensor: &Tensor, scalar: i64) -> Result<Tensor> {
    with_scalar("int_mul_scalar", tensor, scalar, wrapping::mul)
}

/// `combine(tensor, scalar)`, the scalar a one-element tensor broadcast over the tensor.
fn with_scalar(
    op: &'static str,
    tensor: &Tensor,
    scalar: i64,
    combine: fn(&Tensor, &Tensor) -> candle_core::Result<Tensor>,
) -> Result<Tensor> {
    check_kind(op, CandleDType::I64, [tensor])?;
    check_output_like(op, tensor)?;
    if let Some(empty) = empty_like(op, tensor)? {
        return Ok(empty);
    }
    constant(scalar, tensor.device()).and_then(|scalar| combine(tensor, &scalar)).or_backend(op)
}

/// Rounding toward zero, as candle's kernel divides, once the divisors are known to be valid: whether any pair
/// has a zero divisor or is `i64::MIN / -1` is decided on the device and read back as one value (the check this
/// op's error needs), or read in place on the CPU, where the values are in host memory. The error names the divisor of the first such pair in row-major order, as the host default
/// does.
pub(in crate::backends::candle) fn int_div(lhs: &Tensor, rhs: &Tensor) -> Result<Tensor> {
    let op = "int_div";
    let (shape, empty) = broadcast_operands(op, lhs, rhs, CandleDType::I64)?;
    check_output(op, lhs.device(), shape.num_elements(), CandleDType::U8)?;
    if let Some(empty) = empty {
        return Ok(empty);
    }
    let (lhs, rhs) = (lhs.broadcast_as(shape.dims()).or_backend(op)?, rhs.broadcast_as(shape.dims()).or_backend(op)?);
    let refuses = |[dividend, divisor]: [i64; 2]| divisor == 0 || (dividend == i64::MIN && divisor == -1);
    if let Some(refused) = first_refused_in_place([&lhs, &rhs], refuses) {
        return match refused {
            Some([_, divisor]) => Err(int_division_error(divisor)),
            None => lhs.div(&rhs).or_backend(op),
        };
    }
    let refused = (|| {
        let device = lhs.device();
        let zero = rhs.broadcast_eq(&constant(0i64, device)?)?;
        let overflow =
            lhs.broadcast_eq(&constant(i64::MIN, device)?)?.mul(&rhs.broadcast_eq(&constant(-1i64, device)?)?)?;
        zero.maximum(&overflow)
    })()
    .or_backend(op)?;
    if any_set(op, &refused)? {
        let position = first_set(op, &refused)?;
        let divisor = rhs.flatten_all().and_then(|flat| flat.narrow(0, position, 1)).or_backend(op)?;
        return Err(int_division_error(read_value::<i64>(op, &divisor)?));
    }
    lhs.div(&rhs).or_backend(op)
}

/// The wrapping sum of every element, as a `[1]` tensor.
pub(in crate::backends::candle) fn int_sum(tensor: &Tensor) -> Result<Tensor> {
    check_kind("int_sum", CandleDType::I64, [tensor])?;
    // The halves of the tensor, two tensors of its size.
    check_output_like("int_sum", tensor)?;
    wrapping::sum(tensor, tensor.device()).or_backend("int_sum")
}

pub(in crate::backends::candle) fn int_compare(
    op: &'static str,
    comparison: CmpOp,
    lhs: &Tensor,
    rhs: &Tensor,
) -> Result<Tensor> {
    let (shape, empty) = broadcast_operands(op, lhs, rhs, CandleDType::U8)?;
    if let Some(empty) = empty {
        return Ok(empty);
    }
    let grown = |tensor: &Tensor| tensor.broadcast_as(shape.dims()).or_backend(op);
    grown(lhs)?.cmp(&grown(rhs)?, comparison).or_backend(op)
}

pub(in crate::backends::candle) fn int_eq_scalar(tensor: &Tensor, scalar: i64) -> Result<Tensor> {
    let op = "int_eq_scalar";
    check_kind(op, CandleDType::I64, [tensor])?;
    check_output(op, tensor.device(), tensor.elem_count(), CandleDType::U8)?;
    if let Some(empty) = empty_output(op, &shape_of(tensor), CandleDType::U8, tensor.device())? {
        return Ok(empty);
    }
    constant(scalar, tensor.device()).and_then(|scalar| tensor.broadcast_eq(&scalar)).or_backend(op)
}
