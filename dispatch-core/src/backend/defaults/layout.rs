//! Layout defaults: permute and flip on the host; unsqueeze, squeeze, expand, stack, repeat and slice_assign
//! composed from the backend's own ops.

use super::host_values::{same_dtype, strides, values_like};
use crate::backend::Backend;
use crate::error::{Error, RankRule, Result};
use crate::memory;
use crate::shape::Shape;

/// On the host.
pub fn permute<B: Backend>(tensor: &B::FloatTensor, axes: Vec<usize>) -> Result<B::FloatTensor> {
    let shape = B::shape(tensor);
    let permuted = shape.permute(&axes)?;
    let (values, input_strides) = (B::to_f64_vec(tensor)?, strides(shape.dims()));
    let out = permuted.dims();
    let mut output = memory::try_vec("permute", permuted.num_elements())?;
    for index in 0..permuted.num_elements() {
        let (mut rest, mut source) = (index, 0);
        for (position, &size) in out.iter().enumerate().rev() {
            source += (rest % size) * input_strides[axes[position]];
            rest /= size;
        }
        output.push(values[source]);
    }
    values_like::<B>(output, permuted, tensor)
}

/// A `reshape` with a size-1 dimension inserted.
pub fn unsqueeze<B: Backend>(tensor: &B::FloatTensor, axis: usize) -> Result<B::FloatTensor> {
    let shape = B::shape(tensor);
    if axis > shape.rank() {
        return Err(Error::AxisOutOfRange { op: "unsqueeze", axis, shape });
    }
    let mut dims = shape.dims().to_vec();
    dims.insert(axis, 1);
    B::reshape(tensor, Shape::new(dims))
}

/// A `reshape` with a size-1 dimension removed.
pub fn squeeze<B: Backend>(tensor: &B::FloatTensor, axis: usize) -> Result<B::FloatTensor> {
    let shape = B::shape(tensor);
    shape.check_axis("squeeze", axis)?;
    if shape.rank() == 1 {
        return Err(Error::unexpected_rank("squeeze", "a tensor", RankRule::AtLeast(2), &shape));
    }
    if shape.dims()[axis] != 1 {
        return Err(Error::unexpected_shape("squeeze", "a size-1 dimension at the axis", &shape));
    }
    let mut dims = shape.dims().to_vec();
    dims.remove(axis);
    B::reshape(tensor, Shape::new(dims))
}

/// An `add` to zeros of `shape`, once the tensor is known to broadcast to exactly that shape.
pub fn expand<B: Backend>(tensor: &B::FloatTensor, shape: Shape) -> Result<B::FloatTensor> {
    let own = B::shape(tensor);
    if Shape::broadcast("expand", &own, &shape)? != shape {
        return Err(Error::ShapeMismatch { op: "expand", lhs: own, rhs: shape });
    }
    B::add(tensor, &B::full(shape, 0.0, B::dtype(tensor), &B::device(tensor))?)
}

/// On the host.
pub fn flip<B: Backend>(tensor: &B::FloatTensor, axes: Vec<usize>) -> Result<B::FloatTensor> {
    let shape = B::shape(tensor);
    for &axis in &axes {
        shape.check_axis("flip", axis)?;
    }
    let (dims, input_strides, values) = (shape.dims(), strides(shape.dims()), B::to_f64_vec(tensor)?);
    let mut output = memory::try_vec("flip", values.len())?;
    for index in 0..values.len() {
        let (mut rest, mut source) = (index, 0);
        for (axis, &size) in dims.iter().enumerate().rev() {
            let coordinate = rest % size;
            rest /= size;
            let flipped = if axes.contains(&axis) { size - 1 - coordinate } else { coordinate };
            source += flipped * input_strides[axis];
        }
        output.push(values[source]);
    }
    values_like::<B>(output, shape, tensor)
}

/// `unsqueeze` each tensor at `axis`, then `cat` along it.
pub fn stack<B: Backend>(tensors: &[B::FloatTensor], axis: usize) -> Result<B::FloatTensor> {
    let mut parts = memory::try_vec("stack", tensors.len())?;
    for tensor in tensors {
        if let Some(first) = tensors.first() {
            same_dtype::<B>("stack", first, tensor)?;
        }
        parts.push(B::unsqueeze(tensor, axis)?);
    }
    B::cat(&parts, axis)
}

/// Per dimension: a new axis in front of it, `expand`ed to `times`, then merged into it by `reshape`.
pub fn repeat<B: Backend>(tensor: &B::FloatTensor, times: Vec<usize>) -> Result<B::FloatTensor> {
    let shape = B::shape(tensor);
    if times.len() != shape.rank() {
        return Err(Error::invalid_value("repeat", "times", times, "one count per dimension of the tensor"));
    }
    let mut tiled = tensor.clone();
    for (axis, &count) in times.iter().enumerate() {
        if count == 1 {
            continue;
        }
        let mut dims = B::shape(&tiled).dims().to_vec();
        let stretched = B::unsqueeze(&tiled, axis)?;
        let mut expanded = dims.clone();
        expanded.insert(axis, count);
        let expanded = B::expand(&stretched, Shape::new(expanded))?;
        dims[axis] =
            dims[axis].checked_mul(count).ok_or(Error::SizeOverflow { op: "repeat", what: "a repeated length" })?;
        tiled = B::reshape(&expanded, Shape::new(dims))?;
    }
    Ok(tiled)
}

/// `cat` of the entries before `start`, `source`, and the entries after it.
pub fn slice_assign<B: Backend>(
    tensor: &B::FloatTensor,
    axis: usize,
    start: usize,
    source: &B::FloatTensor,
) -> Result<B::FloatTensor> {
    same_dtype::<B>("slice_assign", tensor, source)?;
    let (shape, source_shape) = (B::shape(tensor), B::shape(source));
    shape.check_axis("slice_assign", axis)?;
    let len = source_shape.dims().get(axis).copied().unwrap_or(0);
    if source_shape != shape.with_dim("slice_assign", axis, len)? {
        return Err(Error::ShapeMismatch { op: "slice_assign", lhs: shape, rhs: source_shape });
    }
    shape.check_narrow(axis, start, len)?;
    let size = shape.dims()[axis];
    let before = B::narrow(tensor, axis, 0, start)?;
    let after = B::narrow(tensor, axis, start + len, size - start - len)?;
    B::cat(&[before, source.clone(), after], axis)
}
