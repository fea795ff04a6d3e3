//! Matrix products through `matrixmultiply`, which reads strided operands directly, so a transposed weight is
//! multiplied without being copied first.

use ndarray::linalg::general_mat_mul;
use ndarray::{Array3, ArrayViewD, Dimension, Ix2, Ix3};

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
    let (lhs, rhs) = (fixed_rank::<Ix3>(lhs.view())?, fixed_rank::<Ix3>(rhs.view())?);
    let (batch, m, n) = (lhs.dim().0, lhs.dim().1, rhs.dim().2);
    let zeros = memory::try_filled("matmul", shape.num_elements(), 0.0)?;
    let mut product = Array3::from_shape_vec((batch, m, n), zeros).map_err(|error| ndarray_error("matmul", error))?;
    for ((mut out, a), b) in product.outer_iter_mut().zip(lhs.outer_iter()).zip(rhs.outer_iter()) {
        general_mat_mul(1.0, &a, &b, 0.0, &mut out);
    }
    Ok(NdArrayTensor::new(product.into_dyn()))
}

fn fixed_rank<D: Dimension>(view: ArrayViewD<'_, f32>) -> Result<ndarray::ArrayView<'_, f32, D>> {
    view.into_dimensionality::<D>().map_err(|error| ndarray_error("matmul", error))
}
