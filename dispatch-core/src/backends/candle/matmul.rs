//! The matrix product, with batches that broadcast: on the CPU in `f32` and `f64` the product the ndarray backend
//! runs (`kernels::matmul`), elsewhere candle's GEMM kernels.

use candle_core::{DType, Layout, Tensor};
use ndarray::{ArrayView, ArrayViewD, IxDyn, ShapeBuilder};

use super::elementwise::{CpuFloat, CpuPairKernel, cpu_custom_ops, runs_cpu_kernels};
use super::error::{OrBackend, dtype_of};
use super::layout::shape_of;
use super::memory::{check_output, check_output_like, filled, through_f32};
use super::operands::check_operands;
use crate::error::Result;
use crate::kernels;
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
    // candle's CPU GEMM has no bf16 product; its f16 one is native.
    if let Some(product) = through_f32("matmul", [lhs, rhs], &[DType::BF16], |[lhs, rhs]| matmul(lhs, rhs)) {
        return product;
    }
    if runs_cpu_kernels(lhs) {
        return lhs.apply_op2_no_bwd(rhs, &CpuMatmul { shape }).or_backend("matmul");
    }
    let (batch, _, _) = shape.matrix_parts();
    let (lhs_shape, rhs_shape) = (shape_of(lhs), shape_of(rhs));
    if lhs_shape.matrix_parts().0 == batch && rhs_shape.matrix_parts().0 == batch {
        return matmul_operand(lhs)?.matmul(&matmul_operand(rhs)?).or_backend("matmul");
    }
    if let Some(product) = rows_times_matrix(lhs, rhs, &shape)? {
        return Ok(product);
    }
    // Batches that broadcast: both operands stretched to the output's batch, as candle's matmul wants them.
    let (lhs, rhs) = (broadcast_batch(lhs, batch)?, broadcast_batch(rhs, batch)?);
    lhs.matmul(&rhs).or_backend("matmul")
}

/// A row-major batch of matrices times one matrix (a linear layer on `[batch, rows, in]`, and its input's gradient)
/// as one product of all their rows, `[batch * rows, k] @ [k, n]`, reshaped back to `shape`: without it, the one
/// matrix is copied once per batch entry. `None` for other operands.
fn rows_times_matrix(lhs: &Tensor, rhs: &Tensor, shape: &Shape) -> Result<Option<Tensor>> {
    let rhs_shape = shape_of(rhs);
    let (rhs_batch, inner, columns) = rhs_shape.matrix_parts();
    let one_matrix = rhs_batch.iter().all(|&size| size == 1) && (rhs.rank() == 2 || rhs.is_contiguous());
    let all_rows = lhs.elem_count().checked_div(inner);
    let (Some(all_rows), true) = (all_rows, one_matrix && lhs.rank() >= 3 && lhs.is_contiguous()) else {
        return Ok(None);
    };
    // A 2-D operand is taken as it lies (a transposed weight too); candle's reshape would copy a non-contiguous one.
    let matrix = if rhs.rank() == 2 { rhs.clone() } else { rhs.reshape((inner, columns)).or_backend("matmul")? };
    let matrix = matmul_operand(&matrix)?;
    let product = || lhs.reshape((all_rows, inner))?.matmul(&matrix)?.reshape(shape.dims());
    product().map(Some).or_backend("matmul")
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

/// The product of two CPU tensors of `f32` or `f64` by `kernels::matmul`, into a tensor of `shape`. It reads each
/// operand where it lies, in its own strides (a transposed weight, a broadcast batch), where candle's path would copy
/// them first; on the step's shapes matrixmultiply is faster than candle's `gemm`, whose threads also slow the GPT
/// step on two cores (BENCHMARKS.md, group 8).
struct CpuMatmul {
    shape: Shape,
}

impl CpuPairKernel for CpuMatmul {
    fn op_name(&self) -> &'static str {
        "matmul"
    }

    fn output_shape(&self, _: &Layout) -> candle_core::Shape {
        self.shape.dims().into()
    }

    fn outputs<E: CpuFloat>(&self, lhs: (&[E], &Layout), rhs: (&[E], &Layout)) -> candle_core::Result<Vec<E>> {
        // The product reserves its output's room itself, and writes it without clearing it first.
        let product = kernels::matmul::product("candle", view(lhs)?, view(rhs)?, &self.shape, Vec::new());
        let product = product.map_err(candle_core::Error::wrap)?;
        // Row-major already: its buffer is taken as it is.
        let (values, _) = product.into_raw_vec_and_offset();
        Ok(values)
    }
}

/// The elements `layout` picks from `values`, as an ndarray view with the layout's strides (0 for a broadcast axis).
fn view<'a, E>((values, layout): (&'a [E], &Layout)) -> candle_core::Result<ArrayViewD<'a, E>> {
    let values = values.get(layout.start_offset()..).unwrap_or_default();
    let shape = IxDyn(layout.dims()).strides(IxDyn(layout.stride()));
    ArrayView::from_shape(shape, values).map_err(candle_core::Error::wrap)
}

cpu_custom_ops!(pair: CpuMatmul; triple:);
