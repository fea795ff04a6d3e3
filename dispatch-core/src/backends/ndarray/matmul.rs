//! Matrix products through `matrixmultiply`, which reads strided operands directly, so a transposed weight is
//! multiplied without being copied first.

use ndarray::linalg::general_mat_mul;
use ndarray::{ArcArrayD, Array, Array3, ArrayView2, ArrayViewD, Dimension, Ix2, IxDyn};

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
    if shape.rank() == 2 {
        let (lhs, rhs) = (fixed_rank::<E, Ix2>(lhs.view())?, fixed_rank::<E, Ix2>(rhs.view())?);
        return Ok(NdArrayTensor::output(dtype, lhs.dot(&rhs).into_dyn()));
    }
    let rows = shape.dims()[..shape.rank() - 1].iter().product::<usize>();
    let inner = lhs.shape()[lhs.ndim() - 1];
    // A batch of rows times one matrix (a layer's weight): one product of all the rows, when they are laid out
    // as one matrix, rather than a small product per batch entry.
    if rhs.ndim() == 2
        && let Ok(all_rows) = lhs.view().into_shape_with_order((rows, inner))
    {
        return shaped(dtype, all_rows.dot(&fixed_rank::<E, Ix2>(rhs.view())?), shape);
    }
    let (batch, [m, n]) =
        (&shape.dims()[..shape.rank() - 2], [shape.dims()[shape.rank() - 2], shape.dims()[shape.rank() - 1]]);
    let batch_len: usize = batch.iter().product();
    let (lhs, rhs) = (batch_matrices(lhs, batch)?, batch_matrices(rhs, batch)?);
    let zeros = memory::try_filled("matmul", shape.num_elements(), E::zero())?;
    let mut product =
        Array3::from_shape_vec((batch_len, m, n), zeros).map_err(|error| ndarray_error("matmul", error))?;
    for ((mut out, a), b) in product.outer_iter_mut().zip(&lhs).zip(&rhs) {
        general_mat_mul(E::one(), a, b, E::zero(), &mut out);
    }
    shaped(dtype, product, shape)
}

/// A product as the output tensor of `shape`. `dot` lays its product out column-major when both operands are
/// (a column of rows times a transposed weight): that one is copied to row-major before it is reshaped.
fn shaped<E: Element, D: Dimension>(dtype: DType, product: Array<E, D>, shape: &Shape) -> Result<NdArrayTensor> {
    let product = if product.is_standard_layout() { product } else { product.as_standard_layout().into_owned() };
    product
        .into_shape_with_order(shape.dims())
        .map(|product| NdArrayTensor::output(dtype, product))
        .map_err(|error| ndarray_error("matmul", error))
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
