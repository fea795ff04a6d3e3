//! Layout ops. `swap_dims` and `narrow` only change strides and offsets of the shared array; `reshape` copies only
//! when the input is not in row-major layout.

use ndarray::{Axis, Slice};

use super::tensor::{NdArrayTensor, check_output, ndarray_error};
use crate::error::Result;
use crate::shape::Shape;

pub(super) fn swap_dims(tensor: &NdArrayTensor, dim0: usize, dim1: usize) -> Result<NdArrayTensor> {
    tensor.shape().swap_dims("swap_dims", dim0, dim1)?;
    let mut array = tensor.shared().clone();
    array.swap_axes(dim0, dim1);
    Ok(NdArrayTensor::from_shared(array))
}

/// A view with the axes reordered: nothing is copied.
pub(super) fn permute(tensor: &NdArrayTensor, axes: Vec<usize>) -> Result<NdArrayTensor> {
    tensor.shape().permute(&axes)?;
    Ok(NdArrayTensor::from_shared(tensor.shared().clone().permuted_axes(axes)))
}

pub(super) fn reshape(tensor: &NdArrayTensor, shape: &Shape) -> Result<NdArrayTensor> {
    tensor.shape().check_reshape(shape)?;
    let array = tensor.shared();
    let row_major = if array.is_standard_layout() {
        array.clone()
    } else {
        check_output("reshape", array.len())?;
        array.as_standard_layout().into_owned().into_shared()
    };
    let reshaped = row_major.into_shape_with_order(shape.dims()).map_err(|error| ndarray_error("reshape", error))?;
    Ok(NdArrayTensor::from_shared(reshaped))
}

pub(super) fn narrow(tensor: &NdArrayTensor, axis: usize, start: usize, len: usize) -> Result<NdArrayTensor> {
    tensor.shape().check_narrow(axis, start, len)?;
    let mut array = tensor.shared().clone();
    array.slice_axis_inplace(Axis(axis), Slice::from(start..start + len));
    Ok(NdArrayTensor::from_shared(array))
}

pub(super) fn cat(tensors: &[NdArrayTensor], axis: usize) -> Result<NdArrayTensor> {
    let shapes: Vec<Shape> = tensors.iter().map(NdArrayTensor::shape).collect();
    let shape = Shape::concat(&shapes, axis)?;
    if let [single] = tensors {
        return Ok(single.clone());
    }
    check_output("cat", shape.num_elements())?;
    let views: Vec<_> = tensors.iter().map(NdArrayTensor::view).collect();
    let array = ndarray::concatenate(Axis(axis), &views).map_err(|error| ndarray_error("cat", error))?;
    Ok(NdArrayTensor::new(array))
}
