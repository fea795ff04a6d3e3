//! Matrix products through `matrixmultiply`, which reads strided operands directly, so a transposed weight is
//! multiplied without being copied first.

use ndarray::linalg::general_mat_mul;
use ndarray::{ArcArrayD, Array3, ArrayViewD, CowArray, Dimension, Ix2, Ix3, IxDyn};

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
    if shape.rank() == 2 {
        let (lhs, rhs) = (fixed_rank::<E, Ix2>(lhs.view())?, fixed_rank::<E, Ix2>(rhs.view())?);
        check_output::<E>("matmul", shape.num_elements())?;
        return Ok(NdArrayTensor::output(dtype, lhs.dot(&rhs).into_dyn()));
    }
    let (batch, [m, n]) =
        (&shape.dims()[..shape.rank() - 2], [shape.dims()[shape.rank() - 2], shape.dims()[shape.rank() - 1]]);
    let batch_len: usize = batch.iter().product();
    let (lhs, rhs) = (as_batches(lhs, batch)?, as_batches(rhs, batch)?);
    let zeros = memory::try_filled("matmul", shape.num_elements(), E::zero())?;
    let mut product =
        Array3::from_shape_vec((batch_len, m, n), zeros).map_err(|error| ndarray_error("matmul", error))?;
    for ((mut out, a), b) in product.outer_iter_mut().zip(lhs.outer_iter()).zip(rhs.outer_iter()) {
        general_mat_mul(E::one(), &a, &b, E::zero(), &mut out);
    }
    product
        .into_shape_with_order(shape.dims())
        .map(|product| NdArrayTensor::output(dtype, product.into_dyn()))
        .map_err(|error| ndarray_error("matmul", error))
}

/// An operand as `[batch, rows, columns]`, its batch broadcast to `batch`: a view of a 3-D operand whose batch is
/// already that (as a transposed weight, read strided without a copy), else a row-major copy.
fn as_batches<'a, E: Element>(array: &'a ArcArrayD<E>, batch: &[usize]) -> Result<CowArray<'a, E, Ix3>> {
    let shape = Shape::new(array.shape());
    let (own_batch, rows, columns) = shape.matrix_parts();
    if shape.rank() == 3 && own_batch == batch {
        return Ok(CowArray::from(fixed_rank::<E, Ix3>(array.view())?));
    }
    let full = [batch, &[rows, columns]].concat();
    let view = array.view();
    let broadcast = view
        .broadcast(IxDyn(&full))
        .ok_or_else(|| crate::error::Error::shape_mismatch("matmul", &shape, &Shape::new(full.clone())))?;
    check_output::<E>("matmul", full.iter().product())?;
    let batches: usize = batch.iter().product();
    let owned = broadcast.as_standard_layout().into_owned().into_shape_with_order((batches, rows, columns));
    Ok(CowArray::from(owned.map_err(|error| ndarray_error("matmul", error))?))
}

fn fixed_rank<E: Element, D: Dimension>(view: ArrayViewD<'_, E>) -> Result<ndarray::ArrayView<'_, E, D>> {
    view.into_dimensionality::<D>().map_err(|error| ndarray_error("matmul", error))
}
