//! Matrix products through `matrixmultiply`, which reads strided operands directly, so a transposed weight is
//! multiplied without being copied first.

use ndarray::linalg::general_mat_mul;
use ndarray::{Array3, ArrayViewD, CowArray, Dimension, Ix2, Ix3, IxDyn};

use super::tensor::{NdArrayTensor, check_output, ndarray_error};
use crate::error::Result;
use crate::memory;
use crate::shape::Shape;

pub(super) fn matmul(lhs: &NdArrayTensor, rhs: &NdArrayTensor) -> Result<NdArrayTensor> {
    let shape = Shape::matmul(&lhs.shape(), &rhs.shape())?;
    if shape.rank() == 2 {
        let (lhs, rhs) = (fixed_rank::<Ix2>(lhs.view())?, fixed_rank::<Ix2>(rhs.view())?);
        check_output("matmul", shape.num_elements())?;
        return Ok(NdArrayTensor::new(lhs.dot(&rhs).into_dyn()));
    }
    let (batch, [m, n]) =
        (&shape.dims()[..shape.rank() - 2], [shape.dims()[shape.rank() - 2], shape.dims()[shape.rank() - 1]]);
    let batch_len: usize = batch.iter().product();
    let (lhs, rhs) = (as_batches(lhs, batch)?, as_batches(rhs, batch)?);
    let zeros = memory::try_filled("matmul", shape.num_elements(), 0.0)?;
    let mut product =
        Array3::from_shape_vec((batch_len, m, n), zeros).map_err(|error| ndarray_error("matmul", error))?;
    for ((mut out, a), b) in product.outer_iter_mut().zip(lhs.outer_iter()).zip(rhs.outer_iter()) {
        general_mat_mul(1.0, &a, &b, 0.0, &mut out);
    }
    product
        .into_shape_with_order(shape.dims())
        .map(|product| NdArrayTensor::new(product.into_dyn()))
        .map_err(|error| ndarray_error("matmul", error))
}

/// An operand as `[batch, rows, columns]`, its batch broadcast to `batch`: a view of a 3-D operand whose batch is
/// already that (as a transposed weight, read strided without a copy), else a row-major copy.
fn as_batches<'a>(tensor: &'a NdArrayTensor, batch: &[usize]) -> Result<CowArray<'a, f32, Ix3>> {
    let shape = tensor.shape();
    let (own_batch, rows, columns) = shape.matrix_parts();
    if shape.rank() == 3 && own_batch == batch {
        return Ok(CowArray::from(fixed_rank::<Ix3>(tensor.view())?));
    }
    let full = [batch, &[rows, columns]].concat();
    let view = tensor.view();
    let broadcast = view
        .broadcast(IxDyn(&full))
        .ok_or_else(|| crate::error::Error::shape_mismatch("matmul", &shape, &Shape::new(full.clone())))?;
    check_output("matmul", full.iter().product())?;
    let batches: usize = batch.iter().product();
    let owned = broadcast.as_standard_layout().into_owned().into_shape_with_order((batches, rows, columns));
    Ok(CowArray::from(owned.map_err(|error| ndarray_error("matmul", error))?))
}

fn fixed_rank<D: Dimension>(view: ArrayViewD<'_, f32>) -> Result<ndarray::ArrayView<'_, f32, D>> {
    view.into_dimensionality::<D>().map_err(|error| ndarray_error("matmul", error))
}
