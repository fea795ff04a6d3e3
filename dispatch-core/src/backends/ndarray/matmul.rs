//! Matrix products through `kernels::matmul`, the product candle's CPU tensors also run, into a kept buffer.

use ndarray::ArcArrayD;

use super::buffers;
use super::tensor::{Element, NdArrayTensor, check_output, with_arrays};
use crate::dtype::DType;
use crate::error::Result;
use crate::kernels;
use crate::shape::Shape;

pub(super) fn matmul(lhs: &NdArrayTensor, rhs: &NdArrayTensor) -> Result<NdArrayTensor> {
    let shape = Shape::matmul(&lhs.shape(), &rhs.shape())?;
    with_arrays!("matmul", lhs, rhs, |a, b| product::<E>(lhs.dtype(), a, b, &shape))
}

fn product<E: Element>(dtype: DType, lhs: &ArcArrayD<E>, rhs: &ArcArrayD<E>, shape: &Shape) -> Result<NdArrayTensor> {
    check_output::<E>("matmul", shape.num_elements())?;
    // Every product is written row-major into a kept buffer when one is large enough (see `buffers`), whatever the
    // operands' layouts, so the output is never copied to row-major afterwards; nor is the buffer cleared first.
    let output = buffers::buffer(shape.num_elements());
    let output = kernels::matmul::product("ndarray", lhs.view(), rhs.view(), shape, output)?;
    Ok(NdArrayTensor::output(dtype, output))
}
