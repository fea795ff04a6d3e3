//! Indexing: int tensors pick entries of float ones (`index_select`, `gather`, `embedding`), add values back at them
//! (`select_add`, `scatter_add`), or place ones (`one_hot`). Every index is checked before the output is
//! allocated; the float operands are walked as row-major slices, split at the indexed axis into `outer x len x
//! inner` blocks.

use ndarray::ArcArrayD;

use super::int_bool::NdArrayIntTensor;
use super::tensor::{
    Element, NdArrayTensor, array_of, row_major, row_major_values, with_array, with_arrays, with_element,
};
use crate::backend::defaults::split_at_axis;
use crate::dtype::DType;
use crate::error::{Error, RankRule, Result};
use crate::memory;
use crate::shape::Shape;

/// Each index of `indices`, in row-major order, as a position along an axis of `len` entries; the first one out
/// of range is an [`Error::IndexOutOfRange`] (made only then: an error built and dropped per index took 4% of the
/// LeNet step, in pooling's gather and scatter).
pub(super) fn positions(op: &'static str, indices: &ArcArrayD<i64>, len: usize) -> Result<Vec<usize>> {
    let mut positions = memory::try_vec(op, indices.len())?;
    for &index in indices {
        let position = usize::try_from(index).ok().filter(|&position| position < len);
        positions.push(position.ok_or_else(|| Error::IndexOutOfRange { op, index, len })?);
    }
    Ok(positions)
}

/// The positions a 1-D int tensor names along an axis of `len` entries.
fn picks(op: &'static str, indices: &NdArrayIntTensor, len: usize) -> Result<Vec<usize>> {
    let shape = indices.shape();
    if shape.rank() != 1 {
        return Err(Error::unexpected_rank(op, "indices", RankRule::Exactly(1), &shape));
    }
    positions(op, indices.array(), len)
}

pub(super) fn index_select(tensor: &NdArrayTensor, axis: usize, indices: &NdArrayIntTensor) -> Result<NdArrayTensor> {
    let op = "index_select";
    let shape = tensor.shape();
    shape.check_axis(op, axis)?;
    let picks = picks(op, indices, shape.dims()[axis])?;
    let output_shape = shape.with_dim(op, axis, picks.len())?;
    with_array!(tensor, |array| {
        let values = row_major(op, array.view())?;
        let selected = select_blocks(op, &values, split_at_axis(&shape, axis), &picks)?;
        Ok(NdArrayTensor::shared_as(tensor.dtype(), array_of(op, output_shape.dims(), selected)?.into_shared()))
    })
}

/// The `inner`-long blocks at `picks` of each of the `outer` runs of `len` blocks of `values`, in that order.
fn select_blocks<E: Copy>(
    op: &'static str,
    values: &[E],
    (outer, len, inner): (usize, usize, usize),
    picks: &[usize],
) -> Result<Vec<E>> {
    let mut output = memory::try_vec(op, outer.saturating_mul(picks.len()).saturating_mul(inner))?;
    for o in 0..outer {
        for &pick in picks {
            let start = (o * len + pick) * inner;
            output.extend_from_slice(&values[start..start + inner]);
        }
    }
    Ok(output)
}

pub(super) fn select_add(
    tensor: &NdArrayTensor,
    axis: usize,
    indices: &NdArrayIntTensor,
    source: &NdArrayTensor,
) -> Result<NdArrayTensor> {
    let op = "select_add";
    with_arrays!(op, tensor, source, |array, added| {
        let (shape, source_shape) = (tensor.shape(), source.shape());
        shape.check_axis(op, axis)?;
        let picks = picks(op, indices, shape.dims()[axis])?;
        if shape.with_dim(op, axis, picks.len())? != source_shape {
            return Err(Error::ShapeMismatch { op, lhs: shape, rhs: source_shape });
        }
        let (outer, len, inner) = split_at_axis(&shape, axis);
        let (mut output, added) = (row_major_values(op, array)?, row_major(op, added.view())?);
        for o in 0..outer {
            for (k, &pick) in picks.iter().enumerate() {
                let (to, from) = ((o * len + pick) * inner, (o * picks.len() + k) * inner);
                add_into(&mut output[to..to + inner], &added[from..from + inner]);
            }
        }
        Ok(NdArrayTensor::output(tensor.dtype(), array_of(op, shape.dims(), output)?))
    })
}

fn add_into<E: Element>(sums: &mut [E], added: &[E]) {
    for (sum, &value) in sums.iter_mut().zip(added) {
        *sum += value;
    }
}

/// `gather` and `scatter_add`'s checks: `indices` has the tensor's rank and sizes but along `axis`; its positions,
/// and the split `(outer, len, inner)` of the tensor and `picked`, the indices' size along `axis`.
struct Lanes {
    positions: Vec<usize>,
    outer: usize,
    len: usize,
    inner: usize,
    picked: usize,
}

fn lanes(op: &'static str, shape: &Shape, axis: usize, indices: &NdArrayIntTensor) -> Result<Lanes> {
    shape.check_axis(op, axis)?;
    let index_shape = indices.shape();
    let matches = index_shape.rank() == shape.rank()
        && index_shape.dims().iter().zip(shape.dims()).enumerate().all(|(d, (a, b))| d == axis || a == b);
    if !matches {
        return Err(Error::ShapeMismatch { op, lhs: shape.clone(), rhs: index_shape });
    }
    let (outer, len, inner) = split_at_axis(shape, axis);
    let positions = positions(op, indices.array(), len)?;
    Ok(Lanes { positions, outer, len, inner, picked: index_shape.dims()[axis] })
}

impl Lanes {
    /// `f(index, place)` for each index of the indices, in row-major order, and the row-major place in the tensor
    /// it names.
    fn for_each(&self, mut f: impl FnMut(usize, usize)) {
        let Self { positions, outer, len, inner, picked } = self;
        for o in 0..*outer {
            for j in 0..*picked {
                let first = (o * picked + j) * inner;
                for (i, &position) in positions[first..first + inner].iter().enumerate() {
                    f(first + i, (o * len + position) * inner + i);
                }
            }
        }
    }
}

pub(super) fn gather(tensor: &NdArrayTensor, axis: usize, indices: &NdArrayIntTensor) -> Result<NdArrayTensor> {
    let op = "gather";
    let lanes = lanes(op, &tensor.shape(), axis, indices)?;
    with_array!(tensor, |array| {
        let values = row_major(op, array.view())?;
        let mut output = memory::try_vec(op, lanes.positions.len())?;
        lanes.for_each(|_, place| output.push(values[place]));
        Ok(NdArrayTensor::shared_as(tensor.dtype(), array_of(op, indices.shape().dims(), output)?.into_shared()))
    })
}

pub(super) fn scatter_add(
    tensor: &NdArrayTensor,
    axis: usize,
    indices: &NdArrayIntTensor,
    source: &NdArrayTensor,
) -> Result<NdArrayTensor> {
    let op = "scatter_add";
    with_arrays!(op, tensor, source, |array, added| {
        let shape = tensor.shape();
        let lanes = lanes(op, &shape, axis, indices)?;
        let (index_shape, source_shape) = (indices.shape(), source.shape());
        if index_shape != source_shape {
            return Err(Error::ShapeMismatch { op, lhs: index_shape, rhs: source_shape });
        }
        let (mut output, added) = (row_major_values(op, array)?, row_major(op, added.view())?);
        lanes.for_each(|index, place| output[place] += added[index]);
        Ok(NdArrayTensor::output(tensor.dtype(), array_of(op, shape.dims(), output)?))
    })
}

/// The rows of `weights` that `ids` name, one after another.
pub(super) fn embedding(weights: &NdArrayTensor, ids: &NdArrayIntTensor) -> Result<NdArrayTensor> {
    let op = "embedding";
    let weights_shape = weights.shape();
    let [vocabulary, width] = <[usize; 2]>::try_from(weights_shape.dims())
        .map_err(|_| Error::unexpected_rank(op, "weights [vocabulary, width]", RankRule::Exactly(2), &weights_shape))?;
    let rows = positions(op, ids.array(), vocabulary)?;
    let output_shape = Shape::new([ids.shape().dims(), &[width]].concat());
    output_shape.check_tensor_shape(op)?;
    with_array!(weights, |array| {
        let values = row_major(op, array.view())?;
        let picked = select_blocks(op, &values, (1, vocabulary, width), &rows)?;
        Ok(NdArrayTensor::shared_as(weights.dtype(), array_of(op, output_shape.dims(), picked)?.into_shared()))
    })
}

/// Rows of `classes` zeros with a one at each index.
pub(super) fn one_hot(indices: &NdArrayIntTensor, classes: usize, dtype: DType) -> Result<NdArrayTensor> {
    let output_shape = Shape::new([indices.shape().dims(), &[classes]].concat());
    output_shape.check_tensor_shape("one_hot")?;
    with_element!(dtype, one_hot_in::<E>(indices, dtype, &output_shape))
}

/// Zeros and ones, which every dtype holds, so nothing is rounded.
fn one_hot_in<E: Element>(indices: &NdArrayIntTensor, dtype: DType, output_shape: &Shape) -> Result<NdArrayTensor> {
    let op = "one_hot";
    let classes = output_shape.dim_from_end(0);
    let mut output = memory::try_filled(op, output_shape.num_elements(), E::zero())?;
    for (row, class) in positions(op, indices.array(), classes)?.into_iter().enumerate() {
        output[row * classes + class] = E::one();
    }
    Ok(NdArrayTensor::shared_as(dtype, array_of(op, output_shape.dims(), output)?.into_shared()))
}
