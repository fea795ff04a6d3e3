//! Reductions: over every element (shape `[1]`), or along one axis keeping it with size 1. Each is written once,
//! generic over the element type.

use ndarray::{ArcArrayD, ArrayD, ArrayView1, Axis, IxDyn};

use super::int_bool::NdArrayIntTensor;
use super::tensor::{Element, NdArrayTensor, check_output, with_array};
use crate::backend::defaults::EMPTY_AXIS;
use crate::error::{Error, Result};
use crate::shape::Shape;

pub(super) fn sum(tensor: &NdArrayTensor) -> NdArrayTensor {
    with_array!(tensor, |array| scalar(tensor, array.sum()))
}

/// The mean of no elements is NaN (0 times 1/0), as on every backend.
pub(super) fn mean(tensor: &NdArrayTensor) -> NdArrayTensor {
    with_array!(tensor, |array| scalar(tensor, array.sum() * reciprocal::<E>(array.len())))
}

pub(super) fn sum_dim(tensor: &NdArrayTensor, axis: usize) -> Result<NdArrayTensor> {
    with_array!(tensor, |array| {
        check_reduced_output::<E>("sum_dim", &tensor.shape(), axis)?;
        Ok(NdArrayTensor::output(tensor.dtype(), array.sum_axis(Axis(axis)).insert_axis(Axis(axis))))
    })
}

pub(super) fn mean_dim(tensor: &NdArrayTensor, axis: usize) -> Result<NdArrayTensor> {
    with_array!(tensor, |array| {
        check_reduced_output::<E>("mean_dim", &tensor.shape(), axis)?;
        let scale = reciprocal::<E>(array.len_of(Axis(axis)));
        let mut sums = array.sum_axis(Axis(axis)).insert_axis(Axis(axis));
        sums.mapv_inplace(|sum| sum * scale);
        Ok(NdArrayTensor::output(tensor.dtype(), sums))
    })
}

/// `x - max - log(sum(exp(x - max)))` per lane, the same order of operations as the candle backend.
pub(super) fn log_softmax(tensor: &NdArrayTensor, axis: usize) -> Result<NdArrayTensor> {
    let shape = tensor.shape();
    shape.check_axis("log_softmax", axis)?;
    with_array!(tensor, |array| {
        check_output::<E>("log_softmax", shape.num_elements())?;
        Ok(NdArrayTensor::output(tensor.dtype(), log_softmax_lanes(array, axis)))
    })
}

fn log_softmax_lanes<E: Element>(array: &ArcArrayD<E>, axis: usize) -> ArrayD<E> {
    let mut output = array.as_standard_layout().into_owned();
    for mut lane in output.lanes_mut(Axis(axis)) {
        let Some(max) = lane_max(lane.view()) else { continue };
        lane.mapv_inplace(|x| x - max);
        let log_sum_exp = lane.iter().map(|shifted| shifted.exp()).fold(E::zero(), |sum, x| sum + x).ln();
        lane.mapv_inplace(|shifted| shifted - log_sum_exp);
    }
    output
}

pub(super) fn argmax(tensor: &NdArrayTensor, axis: usize) -> Result<NdArrayIntTensor> {
    let shape = tensor.shape();
    shape.check_axis("argmax", axis)?;
    if shape.dims()[axis] == 0 {
        return Err(Error::unexpected_shape("argmax", EMPTY_AXIS, &shape));
    }
    check_reduced_output::<i64>("argmax", &shape, axis)?;
    let indices = with_array!(tensor, |array| array.map_axis(Axis(axis), |lane| first_max_index(lane) as i64));
    Ok(NdArrayIntTensor::new(indices.insert_axis(Axis(axis))))
}

/// Checks `axis` and the room for the output of a reduction along it, which keeps the axis with size 1. An
/// empty axis can make the output much larger than the input (`[0, n]` reduces to `[1, n]`).
fn check_reduced_output<T>(op: &'static str, shape: &Shape, axis: usize) -> Result<()> {
    check_output::<T>(op, shape.with_dim(op, axis, 1)?.num_elements())
}

/// `1 / count`, rounded once to the element type, exactly the factor the candle backend scales its means by.
fn reciprocal<E: Element>(count: usize) -> E {
    E::of_f64(1.0 / count as f64)
}

fn scalar<E: Element>(like: &NdArrayTensor, value: E) -> NdArrayTensor {
    NdArrayTensor::output(like.dtype(), ArrayD::from_elem(IxDyn(&[1]), value))
}

/// The largest entry, `None` for an empty lane. Like `first_max_index`, an entry replaces the current maximum only
/// when it is strictly greater, the rule candle uses, so both backends agree on ties and NaN.
fn lane_max<E: Element>(lane: ArrayView1<'_, E>) -> Option<E> {
    let mut values = lane.iter().copied();
    let first = values.next()?;
    Some(values.fold(first, |max, x| if max < x { x } else { max }))
}

fn first_max_index<E: Element>(lane: ArrayView1<'_, E>) -> usize {
    let mut best = (0, E::nan());
    for (index, &x) in lane.iter().enumerate() {
        if index == 0 || best.1 < x {
            best = (index, x);
        }
    }
    best.0
}
