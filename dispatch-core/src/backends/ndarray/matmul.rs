//! Matrix products, which read strided operands directly, so a transposed weight is multiplied without being
//! copied first. One product (a layer's weight, every row at once) goes through `matrixmultiply`, on its own
//! threads; a batch of small products (the attention heads) through `gemm`, one product per thread, the batch split
//! over rayon's threads. Each is the faster kernel on those shapes: `benches/matmul_kernels.rs`, BENCHMARKS.md
//! group 8.

use ndarray::linalg::general_mat_mul;
use ndarray::{ArcArrayD, Array, ArrayD, ArrayView2, ArrayViewD, ArrayViewMut2, Dimension, Ix2, IxDyn};
use rayon::prelude::*;

use super::buffers;
use super::tensor::{Element, NdArrayTensor, check_output, ndarray_error, with_arrays};
use crate::dtype::DType;
use crate::error::Result;
use crate::memory;
use crate::shape::Shape;

pub(super) fn matmul(lhs: &NdArrayTensor, rhs: &NdArrayTensor) -> Result<NdArrayTensor> {
    let shape = Shape::matmul(&lhs.shape(), &rhs.shape())?;
    with_arrays!("matmul", lhs, rhs, |a, b| product::<E>(lhs.dtype(), a, b, &shape))
}

fn product<E: Element>(dtype: DType, lhs: &ArcArrayD<E>, rhs: &ArcArrayD<E>, shape: &Shape) -> Result<NdArrayTensor> {
    check_output::<E>("matmul", shape.num_elements())?;
    // Every product is written row-major into a cleared buffer (a kept one when large: see `buffers`), whatever
    // the operands' layouts, so the output is never copied to row-major afterwards.
    let mut output = Array::from_shape_vec(shape.dims(), buffers::filled(shape.num_elements(), E::zero()))
        .map_err(|error| ndarray_error("matmul", error))?;
    if shape.rank() == 2 {
        let (lhs, rhs) = (fixed_rank::<E, Ix2>(lhs.view())?, fixed_rank::<E, Ix2>(rhs.view())?);
        general_mat_mul(E::one(), &lhs, &rhs, E::zero(), &mut matrix_of(&mut output)?);
        return Ok(NdArrayTensor::output(dtype, output));
    }
    let rows = shape.dims()[..shape.rank() - 1].iter().product::<usize>();
    let (inner, columns) = (lhs.shape()[lhs.ndim() - 1], shape.dims()[shape.rank() - 1]);
    // A batch of rows times one matrix (a layer's weight): one product of all the rows, when they are laid out
    // as one matrix, rather than a small product per batch entry.
    if rhs.ndim() == 2
        && let Ok(all_rows) = lhs.view().into_shape_with_order((rows, inner))
    {
        let mut all_outputs =
            output.view_mut().into_shape_with_order((rows, columns)).map_err(|error| ndarray_error("matmul", error))?;
        general_mat_mul(E::one(), &all_rows, &fixed_rank::<E, Ix2>(rhs.view())?, E::zero(), &mut all_outputs);
        return Ok(NdArrayTensor::output(dtype, output));
    }
    let (batch, m) = (&shape.dims()[..shape.rank() - 2], shape.dims()[shape.rank() - 2]);
    let batch_len: usize = batch.iter().product();
    let (lhs, rhs) = (batch_matrices(lhs, batch)?, batch_matrices(rhs, batch)?);
    let mut outputs = output
        .view_mut()
        .into_shape_with_order((batch_len, m, columns))
        .map_err(|error| ndarray_error("matmul", error))?;
    let mut outputs: Vec<ArrayViewMut2<'_, E>> = outputs.outer_iter_mut().collect();
    let work = |((out, a), b): ((&mut ArrayViewMut2<'_, E>, &ArrayView2<'_, E>), &ArrayView2<'_, E>)| {
        small_product(a, b, out);
    };
    // Below this many multiply-adds a batch is done before rayon would have handed out its halves.
    const PARALLEL_WORK: usize = 1 << 16;
    if batch_len.saturating_mul(m).saturating_mul(inner).saturating_mul(columns) >= PARALLEL_WORK {
        outputs.par_iter_mut().zip(lhs.par_iter()).zip(rhs.par_iter()).for_each(work);
    } else {
        outputs.iter_mut().zip(lhs.iter()).zip(rhs.iter()).for_each(work);
    }
    Ok(NdArrayTensor::output(dtype, output))
}

/// `out = lhs @ rhs` on this thread, through `gemm`, reading each operand with its own strides (negative ones, of
/// a flipped view, and zero ones, of a broadcast view, included).
fn small_product<E: Element>(lhs: &ArrayView2<'_, E>, rhs: &ArrayView2<'_, E>, out: &mut ArrayViewMut2<'_, E>) {
    let ((m, k), n) = (lhs.dim(), rhs.dim().1);
    let (lhs_strides, rhs_strides) = (lhs.strides(), rhs.strides());
    let (out_row_stride, out_column_stride) = (out.strides()[0], out.strides()[1]);
    // SAFETY: each pointer and its strides address exactly the elements of a live view of `m x k`, `k x n` and
    // `m x n` elements (gemm walks negative strides from the view's first element, as ndarray does). `out` is
    // borrowed mutably, so it overlaps neither operand, and `read_dst` is false, so its old values are never read.
    // `E` is `f32` or `f64` (the only `Element`s), both types gemm computes.
    unsafe {
        gemm::gemm(
            m,
            n,
            k,
            out.as_mut_ptr(),
            out_column_stride,
            out_row_stride,
            false,
            lhs.as_ptr(),
            lhs_strides[1],
            lhs_strides[0],
            rhs.as_ptr(),
            rhs_strides[1],
            rhs_strides[0],
            E::zero(),
            E::one(),
            false,
            false,
            false,
            gemm::Parallelism::None,
        );
    }
}

/// A rank-2 output as the matrix `general_mat_mul` writes.
fn matrix_of<E: Element>(output: &mut ArrayD<E>) -> Result<ArrayViewMut2<'_, E>> {
    output.view_mut().into_dimensionality::<Ix2>().map_err(|error| ndarray_error("matmul", error))
}

/// An operand's matrices, its batch broadcast to `batch`, in row-major batch order: views with the operand's own
/// strides (a permuted or transposed operand, a broadcast one), which `matrixmultiply` reads without a copy.
fn batch_matrices<'a, E: Element>(array: &'a ArcArrayD<E>, batch: &[usize]) -> Result<Vec<ArrayView2<'a, E>>> {
    let shape = Shape::new(array.shape());
    let (_, rows, columns) = shape.matrix_parts();
    let full = [batch, &[rows, columns]].concat();
    let broadcast = array
        .broadcast(IxDyn(&full))
        .ok_or_else(|| crate::error::Error::shape_mismatch("matmul", &shape, &Shape::new(full.clone())))?;
    let mut matrices = memory::try_vec("matmul", batch.iter().product())?;
    collect_matrices(broadcast, &mut matrices)?;
    Ok(matrices)
}

fn collect_matrices<'a, E: Element>(view: ArrayViewD<'a, E>, matrices: &mut Vec<ArrayView2<'a, E>>) -> Result<()> {
    if view.ndim() == 2 {
        matrices.push(fixed_rank::<E, Ix2>(view)?);
        return Ok(());
    }
    view.into_outer_iter().try_for_each(|inner| collect_matrices(inner, matrices))
}

fn fixed_rank<E: Element, D: Dimension>(view: ArrayViewD<'_, E>) -> Result<ndarray::ArrayView<'_, E, D>> {
    view.into_dimensionality::<D>().map_err(|error| ndarray_error("matmul", error))
}
