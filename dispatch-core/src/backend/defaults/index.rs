//! Indexing defaults: picking from float tensors by int tensors and adding back, on the host; embedding composed
//! from index_select.

use super::host_values::{same_dtype, split_at_axis, strides, values_like};
use crate::backend::Backend;
use crate::dtype::DType;
use crate::error::{Error, RankRule, Result};
use crate::memory;
use crate::shape::Shape;

/// The values of an int tensor of indices, each checked against `len`, the size of the axis they index.
fn in_range<B: Backend>(op: &'static str, indices: &B::IntTensor, len: usize) -> Result<Vec<usize>> {
    B::int_to_vec(indices)?
        .into_iter()
        .map(|index| {
            usize::try_from(index).ok().filter(|&index| index < len).ok_or_else(|| Error::IndexOutOfRange {
                op,
                index,
                len,
            })
        })
        .collect()
}

/// The indices of a 1-D int tensor, each checked against `len`, the size of the axis they index.
fn checked_indices<B: Backend>(op: &'static str, indices: &B::IntTensor, len: usize) -> Result<Vec<usize>> {
    let shape = B::int_shape(indices);
    if shape.rank() != 1 {
        return Err(Error::unexpected_rank(op, "indices", RankRule::Exactly(1), &shape));
    }
    in_range::<B>(op, indices, len)
}

/// On the host.
pub fn index_select<B: Backend>(
    tensor: &B::FloatTensor,
    axis: usize,
    indices: &B::IntTensor,
) -> Result<B::FloatTensor> {
    let shape = B::shape(tensor);
    shape.check_axis("index_select", axis)?;
    let (outer, len, inner) = split_at_axis(&shape, axis);
    let picks = checked_indices::<B>("index_select", indices, len)?;
    let output_shape = shape.with_dim("index_select", axis, picks.len())?;
    let values = B::to_f64_vec(tensor)?;
    let mut output = memory::try_vec("index_select", output_shape.num_elements())?;
    for o in 0..outer {
        for &pick in &picks {
            let start = (o * len + pick) * inner;
            output.extend_from_slice(&values[start..start + inner]);
        }
    }
    values_like::<B>(output, output_shape, tensor)
}

/// On the host.
pub fn select_add<B: Backend>(
    tensor: &B::FloatTensor,
    axis: usize,
    indices: &B::IntTensor,
    source: &B::FloatTensor,
) -> Result<B::FloatTensor> {
    same_dtype::<B>("select_add", tensor, source)?;
    let (shape, source_shape) = (B::shape(tensor), B::shape(source));
    shape.check_axis("select_add", axis)?;
    let (outer, len, inner) = split_at_axis(&shape, axis);
    let picks = checked_indices::<B>("select_add", indices, len)?;
    if shape.with_dim("select_add", axis, picks.len())? != source_shape {
        return Err(Error::ShapeMismatch { op: "select_add", lhs: shape, rhs: source_shape });
    }
    let (mut output, added) = (B::to_f64_vec(tensor)?, B::to_f64_vec(source)?);
    for o in 0..outer {
        for (k, &pick) in picks.iter().enumerate() {
            let (to, from) = ((o * len + pick) * inner, (o * picks.len() + k) * inner);
            for i in 0..inner {
                output[to + i] += added[from + i];
            }
        }
    }
    values_like::<B>(output, shape, tensor)
}

/// `index_select` of the flattened ids, reshaped to `ids.shape + [width]`.
pub fn embedding<B: Backend>(weights: &B::FloatTensor, ids: &B::IntTensor) -> Result<B::FloatTensor> {
    let (weights_shape, ids_shape) = (B::shape(weights), B::int_shape(ids));
    if weights_shape.rank() != 2 {
        return Err(Error::unexpected_rank(
            "embedding",
            "weights [vocabulary, width]",
            RankRule::Exactly(2),
            &weights_shape,
        ));
    }
    let flat = B::int_reshape(ids, Shape::new([ids_shape.num_elements()]))?;
    let rows = B::index_select(weights, 0, &flat)?;
    let mut dims = ids_shape.dims().to_vec();
    dims.push(weights_shape.dims()[1]);
    B::reshape(&rows, Shape::new(dims))
}

/// On the host.
pub fn one_hot<B: Backend>(indices: &B::IntTensor, classes: usize, dtype: DType) -> Result<B::FloatTensor> {
    let shape = B::int_shape(indices);
    let mut dims = shape.dims().to_vec();
    dims.push(classes);
    let output_shape = Shape::new(dims);
    output_shape.check_tensor_shape("one_hot")?;
    let mut output = memory::try_filled("one_hot", output_shape.num_elements(), 0.0)?;
    for (row, index) in B::int_to_vec(indices)?.into_iter().enumerate() {
        let out_of_range = || Error::IndexOutOfRange { op: "one_hot", index, len: classes };
        let class = usize::try_from(index).ok().filter(|&class| class < classes).ok_or_else(out_of_range)?;
        output[row * classes + class] = 1.0;
    }
    B::from_f64_vec(output, output_shape, dtype, &B::int_device(indices))
}

/// The shape checks of `gather` and `scatter_add`: `indices` matches `shape` but along `axis`; its values.
fn gather_indices<B: Backend>(
    op: &'static str,
    shape: &Shape,
    axis: usize,
    indices: &B::IntTensor,
) -> Result<Vec<usize>> {
    shape.check_axis(op, axis)?;
    let index_shape = B::int_shape(indices);
    let matches = index_shape.rank() == shape.rank()
        && index_shape.dims().iter().zip(shape.dims()).enumerate().all(|(d, (a, b))| d == axis || a == b);
    if !matches {
        return Err(Error::ShapeMismatch { op, lhs: shape.clone(), rhs: index_shape });
    }
    let len = shape.dims()[axis];
    in_range::<B>(op, indices, len)
}

/// The row-major position in `shape` of position `index` of `index_shape`, with its `axis` coordinate replaced.
fn gathered_position(index: usize, index_shape: &[usize], strides: &[usize], axis: usize, along: usize) -> usize {
    let (mut rest, mut position) = (index, 0);
    for (d, &size) in index_shape.iter().enumerate().rev() {
        let coordinate = rest % size;
        rest /= size;
        position += if d == axis { along } else { coordinate } * strides[d];
    }
    position
}

/// On the host.
pub fn gather<B: Backend>(tensor: &B::FloatTensor, axis: usize, indices: &B::IntTensor) -> Result<B::FloatTensor> {
    let shape = B::shape(tensor);
    let picks = gather_indices::<B>("gather", &shape, axis, indices)?;
    let (index_shape, input_strides, values) = (B::int_shape(indices), strides(shape.dims()), B::to_f64_vec(tensor)?);
    let mut output = memory::try_vec("gather", picks.len())?;
    for (index, &pick) in picks.iter().enumerate() {
        output.push(values[gathered_position(index, index_shape.dims(), &input_strides, axis, pick)]);
    }
    values_like::<B>(output, index_shape, tensor)
}

/// On the host.
pub fn scatter_add<B: Backend>(
    tensor: &B::FloatTensor,
    axis: usize,
    indices: &B::IntTensor,
    source: &B::FloatTensor,
) -> Result<B::FloatTensor> {
    same_dtype::<B>("scatter_add", tensor, source)?;
    let shape = B::shape(tensor);
    let picks = gather_indices::<B>("scatter_add", &shape, axis, indices)?;
    let (index_shape, source_shape) = (B::int_shape(indices), B::shape(source));
    if index_shape != source_shape {
        return Err(Error::ShapeMismatch { op: "scatter_add", lhs: index_shape, rhs: source_shape });
    }
    let (input_strides, added) = (strides(shape.dims()), B::to_f64_vec(source)?);
    let mut output = B::to_f64_vec(tensor)?;
    for (index, &pick) in picks.iter().enumerate() {
        output[gathered_position(index, index_shape.dims(), &input_strides, axis, pick)] += added[index];
    }
    values_like::<B>(output, shape, tensor)
}
