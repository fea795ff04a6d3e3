//! The matrix product over candle's GEMM kernels, with batches that broadcast.

use candle_core::{DType, Tensor};

use super::error::{OrBackend, dtype_of};
use super::layout::shape_of;
use super::memory::{check_output, check_output_like, filled};
use super::operands::check_operands;
use crate::error::Result;
use crate::shape::Shape;

pub(super) fn matmul(lhs: &Tensor, rhs: &Tensor) -> Result<Tensor> {
    check_operands("matmul", [lhs, rhs])?;
    let shape = Shape::matmul(&shape_of(lhs), &shape_of(rhs))?;
    let inner = lhs.dims().last().copied().unwrap_or_default();
    if inner == 0 || shape.num_elements() == 0 {
        // An empty sum is 0; answered here so no GEMM kernel sees a zero-sized dimension.
        return filled("matmul", &shape, 0.0, dtype_of(lhs), lhs.device());
    }
    check_output("matmul", lhs.device(), shape.num_elements(), lhs.dtype())?;
    if let Some(product) = bf16_through_f32("matmul", [lhs, rhs], |[lhs, rhs]| matmul(lhs, rhs)) {
        return product;
    }
    let (batch, _, _) = shape.matrix_parts();
    let (lhs_shape, rhs_shape) = (shape_of(lhs), shape_of(rhs));
    if lhs_shape.matrix_parts().0 == batch && rhs_shape.matrix_parts().0 == batch {
        return matmul_operand(lhs)?.matmul(&matmul_operand(rhs)?).or_backend("matmul");
    }
    // Batches that broadcast: both operands stretched to the output's batch, as candle's matmul wants them.
    let (lhs, rhs) = (broadcast_batch(lhs, batch)?, broadcast_batch(rhs, batch)?);
    lhs.matmul(&rhs).or_backend("matmul")
}

/// candle's CPU kernels that multiply matrices (GEMM, and the convolutions built on it) have no bf16 version: for
/// bf16 operands on the CPU, `f` of them widened to f32 (every bf16 is an f32) with its result rounded back to bf16
/// once, as ndarray computes bf16. `None` for other operands, which candle multiplies natively.
pub(super) fn bf16_through_f32(
    op: &'static str,
    operands: [&Tensor; 2],
    f: impl FnOnce([&Tensor; 2]) -> Result<Tensor>,
) -> Option<Result<Tensor>> {
    if operands[0].dtype() != DType::BF16 || !operands[0].device().is_cpu() {
        return None;
    }
    let widened = |tensor: &Tensor| {
        check_output(op, tensor.device(), tensor.elem_count(), DType::F32)?;
        tensor.to_dtype(DType::F32).or_backend(op)
    };
    let result = (|| {
        let (lhs, rhs) = (widened(operands[0])?, widened(operands[1])?);
        f([&lhs, &rhs])?.to_dtype(DType::BF16).or_backend(op)
    })();
    Some(result)
}

/// `tensor` with its batch broadcast to `batch`, row-major.
fn broadcast_batch(tensor: &Tensor, batch: &[usize]) -> Result<Tensor> {
    let (_, rows, columns) = shape_of(tensor).matrix_parts();
    let full = [batch, &[rows, columns]].concat();
    check_output("matmul", tensor.device(), full.iter().product(), tensor.dtype())?;
    tensor.broadcast_as(full.as_slice()).and_then(|stretched| stretched.contiguous()).or_backend("matmul")
}

/// GEMM kernels read row-major and transposed (column-major) matrices as they are; any other layout, e.g. a
/// transposed batch of a 3-D tensor, is copied to row-major first.
fn matmul_operand(tensor: &Tensor) -> Result<Tensor> {
    let rank = tensor.rank();
    let gemm_ready = tensor.is_contiguous() || tensor.t().is_ok_and(|transposed| transposed.is_contiguous());
    if gemm_ready || rank < 2 {
        return Ok(tensor.clone());
    }
    check_output_like("matmul", tensor)?;
    tensor.contiguous().or_backend("matmul")
}
