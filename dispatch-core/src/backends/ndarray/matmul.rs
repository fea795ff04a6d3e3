//! Matrix products through `matrixmultiply`, which reads strided operands directly, so a transposed weight is
//! multiplied without being copied first.

use ndarray::linalg::general_mat_mul;
use ndarray::parallel::prelude::*;
use ndarray::{ArcArrayD, Array, ArrayD, ArrayView2, ArrayViewD, ArrayViewMut2, Axis, Dimension, Ix2, IxDyn};

use super::buffers;
use super::parallel::{self, Work};
use super::tensor::{Element, NdArrayTensor, check_output, ndarray_error, with_arrays};
use crate::dtype::DType;
use crate::error::Result;
use crate::memory;
use crate::shape::Shape;

/// Below this many operand elements (`m·k + k·n`) matrixmultiply runs a product on one thread.
const SMALL_PRODUCT: usize = 1 << 15;

pub(super) fn matmul(lhs: &NdArrayTensor, rhs: &NdArrayTensor) -> Result<NdArrayTensor> {
    let shape = Shape::matmul(&lhs.shape(), &rhs.shape())?;
    with_arrays!("matmul", lhs, rhs, |a, b| product::<E>(lhs.dtype(), a, b, &shape))
}

fn product<E: Element>(dtype: DType, lhs: &ArcArrayD<E>, rhs: &ArcArrayD<E>, shape: &Shape) -> Result<NdArrayTensor> {
    check_output::<E>("matmul", shape.num_elements())?;
    // Every product is written row-major (a kept buffer when large: see `buffers`), whatever the operands' layouts,
    // so the output is never copied to row-major afterwards. Each path below writes every element with β = 0,
    // which matrixmultiply documents as never reading the output: its stale values need no clearing.
    let mut output = Array::from_shape_vec(shape.dims(), buffers::overwritten(shape.num_elements()))
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
    let product = |(mut out, (a, b)): (ArrayViewMut2<'_, E>, (&ArrayView2<'_, E>, &ArrayView2<'_, E>))| {
        general_mat_mul(E::one(), a, b, E::zero(), &mut out);
    };
    // matrixmultiply gives a product this small one thread (its operands hold under 2^15 elements), so a batch of
    // them (attention's per-head products) is split across threads here instead.
    let small = m.saturating_mul(inner).saturating_add(inner.saturating_mul(columns)) < SMALL_PRODUCT;
    if small && parallel::split(Work::Heavy, shape.num_elements()) {
        outputs.axis_iter_mut(Axis(0)).into_par_iter().zip(lhs.par_iter().zip(&rhs)).for_each(product);
    } else {
        outputs.outer_iter_mut().zip(lhs.iter().zip(&rhs)).for_each(product);
    }
    Ok(NdArrayTensor::output(dtype, output))
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
