//! Reductions: over every element (shape `[1]`), or along one axis keeping it with size 1.

use ndarray::{ArrayD, ArrayView1, Axis, IxDyn};

use super::kinds::NdArrayIntTensor;
use super::tensor::{NdArrayTensor, check_output};
use crate::error::{Error, Result};
use crate::shape::Shape;

pub(super) fn sum(tensor: &NdArrayTensor) -> NdArrayTensor {
    scalar(tensor.shared().sum())
}

/// The mean of no elements is NaN (0 times 1/0), as on every backend.
pub(super) fn mean(tensor: &NdArrayTensor) -> NdArrayTensor {
    let array = tensor.shared();
    scalar(array.sum() * reciprocal(array.len()))
}

pub(super) fn sum_dim(tensor: &NdArrayTensor, axis: usize) -> Result<NdArrayTensor> {
    check_reduced_output("sum_dim", &tensor.shape(), axis)?;
    Ok(NdArrayTensor::new(tensor.shared().sum_axis(Axis(axis)).insert_axis(Axis(axis))))
}

pub(super) fn mean_dim(tensor: &NdArrayTensor, axis: usize) -> Result<NdArrayTensor> {
    check_reduced_output("mean_dim", &tensor.shape(), axis)?;
    let array = tensor.shared();
    let scale = reciprocal(array.len_of(Axis(axis)));
    let mut sums = array.sum_axis(Axis(axis)).insert_axis(Axis(axis));
    sums.mapv_inplace(|sum| sum * scale);
    Ok(NdArrayTensor::new(sums))
}

/// `x - max - log(sum(exp(x - max)))` per lane, the same order of operations as the candle backend.
pub(super) fn log_softmax(tensor: &NdArrayTensor, axis: usize) -> Result<NdArrayTensor> {
    let shape = tensor.shape();
    shape.check_axis("log_softmax", axis)?;
    check_output("log_softmax", shape.num_elements())?;
    let mut output = tensor.shared().as_standard_layout().into_owned();
    for mut lane in output.lanes_mut(Axis(axis)) {
        let Some(max) = lane_max(lane.view()) else { continue };
        lane.mapv_inplace(|x| x - max);
        let log_sum_exp = lane.iter().map(|shifted| shifted.exp()).sum::<f32>().ln();
        lane.mapv_inplace(|shifted| shifted - log_sum_exp);
    }
    Ok(NdArrayTensor::new(output))
}

pub(super) fn argmax(tensor: &NdArrayTensor, axis: usize) -> Result<NdArrayIntTensor> {
    let shape = tensor.shape();
    shape.check_axis("argmax", axis)?;
    if shape.dims()[axis] == 0 {
        return Err(Error::invalid(
            "argmax",
            format!("axis {axis} of shape {shape} is empty: it has no largest entry"),
        ));
    }
    check_reduced_output("argmax", &shape, axis)?;
    let indices = tensor.shared().map_axis(Axis(axis), |lane| first_max_index(lane) as i64);
    Ok(NdArrayIntTensor::new(indices.insert_axis(Axis(axis))))
}

/// Checks `axis` and the room for the output of a reduction along it, which keeps the axis with size 1. An
/// empty axis can make the output much larger than the input (`[0, n]` reduces to `[1, n]`).
fn check_reduced_output(op: &'static str, shape: &Shape, axis: usize) -> Result<()> {
    check_output(op, shape.with_dim(op, axis, 1)?.num_elements())
}

/// `1 / count`, rounded once to `f32`, exactly the factor the candle backend scales its means by.
fn reciprocal(count: usize) -> f32 {
    (1.0 / count as f64) as f32
}

fn scalar(value: f32) -> NdArrayTensor {
    NdArrayTensor::new(ArrayD::from_elem(IxDyn(&[1]), value))
}

/// The largest entry, `None` for an empty lane. Like `first_max_index`, an entry replaces the current maximum only
/// when it is strictly greater, the rule candle uses, so both backends agree on ties and NaN.
fn lane_max(lane: ArrayView1<'_, f32>) -> Option<f32> {
    let mut values = lane.iter().copied();
    let first = values.next()?;
    Some(values.fold(first, |max, x| if max < x { x } else { max }))
}

fn first_max_index(lane: ArrayView1<'_, f32>) -> usize {
    let mut best = (0, f32::NAN);
    for (index, &x) in lane.iter().enumerate() {
        if index == 0 || best.1 < x {
            best = (index, x);
        }
    }
    best.0
}
