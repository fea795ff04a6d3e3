//! Layout ops. `swap_dims`, `permute`, `narrow` and `flip` only change strides and offsets of the shared array; `reshape` copies only
//! when the input is not in row-major layout.

use ndarray::{ArcArrayD, ArrayD, ArrayViewD, Axis, ShapeError, Slice};

use super::buffers;
use super::tensor::{Element, NdArrayTensor, arrays_of, check_output, ndarray_error, with_array};
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::shape::Shape;

pub(super) fn swap_dims(tensor: &NdArrayTensor, dim0: usize, dim1: usize) -> Result<NdArrayTensor> {
    tensor.shape().swap_dims("swap_dims", dim0, dim1)?;
    with_array!(tensor, |array| {
        let mut array = array.clone();
        array.swap_axes(dim0, dim1);
        Ok(NdArrayTensor::shared_as(tensor.dtype(), array))
    })
}

/// A view with the axes reordered: nothing is copied.
pub(super) fn permute(tensor: &NdArrayTensor, axes: Vec<usize>) -> Result<NdArrayTensor> {
    tensor.shape().permute(&axes)?;
    with_array!(tensor, |array| Ok(NdArrayTensor::shared_as(tensor.dtype(), array.clone().permuted_axes(axes))))
}

pub(super) fn reshape(tensor: &NdArrayTensor, shape: &Shape) -> Result<NdArrayTensor> {
    tensor.shape().check_reshape(shape)?;
    with_array!(tensor, |array| {
        // A permuted tensor (attention heads, a transposed matrix) is copied row-major into a kept buffer.
        let reshaped = reshaped_by("reshape", array, shape, buffers::row_major_copy)?;
        Ok(NdArrayTensor::shared_as(tensor.dtype(), reshaped))
    })
}

/// The array's elements in row-major order under `shape` (of the same element count): the same buffer when the
/// array is row-major, else a row-major copy.
pub(super) fn reshaped<T: Clone>(op: &'static str, array: &ArcArrayD<T>, shape: &Shape) -> Result<ArcArrayD<T>> {
    reshaped_by(op, array, shape, |view| Ok(view.as_standard_layout().into_owned()))
}

/// [`reshaped`], with `copy` making the row-major copy of an array that is not row-major.
fn reshaped_by<T: Clone>(
    op: &'static str,
    array: &ArcArrayD<T>,
    shape: &Shape,
    copy: impl FnOnce(ArrayViewD<'_, T>) -> Result<ArrayD<T>, ShapeError>,
) -> Result<ArcArrayD<T>> {
    let row_major = if array.is_standard_layout() {
        array.clone()
    } else {
        check_output::<T>(op, array.len())?;
        copy(array.view()).map_err(|error| ndarray_error(op, error))?.into_shared()
    };
    row_major.into_shape_with_order(shape.dims()).map_err(|error| ndarray_error(op, error))
}

pub(super) fn narrow(tensor: &NdArrayTensor, axis: usize, start: usize, len: usize) -> Result<NdArrayTensor> {
    tensor.shape().check_narrow(axis, start, len)?;
    with_array!(tensor, |array| {
        let mut array = array.clone();
        array.slice_axis_inplace(Axis(axis), Slice::from(start..start + len));
        Ok(NdArrayTensor::shared_as(tensor.dtype(), array))
    })
}

/// A view with the entries of each of `axes` in reverse order (negative strides): nothing is copied. An axis named
/// twice is reversed once.
pub(super) fn flip(tensor: &NdArrayTensor, axes: &[usize]) -> Result<NdArrayTensor> {
    let shape = tensor.shape();
    for &axis in axes {
        shape.check_axis("flip", axis)?;
    }
    with_array!(tensor, |array| {
        let mut array = array.clone();
        for axis in (0..shape.rank()).filter(|axis| axes.contains(axis)) {
            array.invert_axis(Axis(axis));
        }
        Ok(NdArrayTensor::shared_as(tensor.dtype(), array))
    })
}

pub(super) fn cat(tensors: &[NdArrayTensor], axis: usize) -> Result<NdArrayTensor> {
    let shapes: Vec<Shape> = tensors.iter().map(NdArrayTensor::shape).collect();
    let shape = Shape::concat(&shapes, axis)?;
    let Some(first) = tensors.first() else {
        return Err(Error::invalid_value("cat", "tensors.len()", 0usize, "at least 1"));
    };
    if let [single] = tensors {
        return Ok(single.clone());
    }
    with_array!(first, |_first| {
        check_output::<E>("cat", shape.num_elements())?;
        concatenated::<E>(first.dtype(), tensors, axis, &shape)
    })
}

/// The tensors one after another along `axis`, written row-major into a kept buffer: for each index of the axes
/// before `axis`, each tensor's contiguous stretch in turn (a strided tensor is copied row-major first). ndarray's
/// `concatenate` walks every element by its strides, which made the backward of `narrow` (zeros around the
/// gradient) a twentieth of the GPT step.
fn concatenated<E: Element>(
    dtype: DType,
    tensors: &[NdArrayTensor],
    axis: usize,
    shape: &Shape,
) -> Result<NdArrayTensor> {
    let row_major: Vec<_> =
        arrays_of::<E>("cat", tensors)?.into_iter().map(|array| array.as_standard_layout()).collect();
    let mut stretches = Vec::with_capacity(row_major.len());
    for array in &row_major {
        let stretch = Shape::new(&array.shape()[axis..]).num_elements();
        match array.as_slice() {
            // An empty tensor adds nothing (and `chunks_exact` needs a length above 0).
            _ if stretch == 0 => {}
            Some(values) => stretches.push(values.chunks_exact(stretch)),
            // A row-major copy is contiguous; were it not, ndarray's walk by strides still concatenates it.
            None => {
                let views: Vec<_> = row_major.iter().map(|array| array.view()).collect();
                let array = ndarray::concatenate(Axis(axis), &views).map_err(|error| ndarray_error("cat", error))?;
                return Ok(NdArrayTensor::output(dtype, array));
            }
        }
    }
    let mut values = buffers::buffer::<E>(shape.num_elements());
    if !stretches.is_empty() {
        for _ in 0..Shape::new(&shape.dims()[..axis]).num_elements() {
            for stretch in &mut stretches {
                values.extend_from_slice(stretch.next().unwrap_or_default());
            }
        }
    }
    let array = ArrayD::from_shape_vec(shape.dims(), values).map_err(|error| ndarray_error("cat", error))?;
    Ok(NdArrayTensor::output(dtype, array))
}
