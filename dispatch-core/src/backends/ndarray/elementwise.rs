//! Element-wise ops: binary ops broadcast with numpy rules, unary ops map every element.

use ndarray::{IxDyn, Zip};

use super::tensor::{NdArrayTensor, check_output};
use crate::error::{Error, Result};
use crate::shape::Shape;

/// Applies `f` to the operands broadcast to their common shape; the shapes are checked first because
/// `ndarray` panics on a mismatch.
pub(super) fn binary(
    op: &'static str,
    lhs: &NdArrayTensor,
    rhs: &NdArrayTensor,
    f: impl Fn(f32, f32) -> f32,
) -> Result<NdArrayTensor> {
    let (lhs_shape, rhs_shape) = (lhs.shape(), rhs.shape());
    let shape = Shape::broadcast(op, &lhs_shape, &rhs_shape)?;
    let (lhs_view, rhs_view) = (lhs.view(), rhs.view());
    let (Some(lhs_view), Some(rhs_view)) =
        (lhs_view.broadcast(IxDyn(shape.dims())), rhs_view.broadcast(IxDyn(shape.dims())))
    else {
        return Err(Error::shape_mismatch(op, &lhs_shape, &rhs_shape));
    };
    check_output(op, shape.num_elements())?;
    Ok(NdArrayTensor::new(Zip::from(&lhs_view).and(&rhs_view).map_collect(|&a, &b| f(a, b))))
}

/// Applies `f` to every element; the result keeps the input's memory order, so a contiguous input is mapped as
/// one slice.
pub(super) fn unary(op: &'static str, tensor: &NdArrayTensor, f: impl Fn(f32) -> f32) -> Result<NdArrayTensor> {
    check_output(op, tensor.shared().len())?;
    Ok(NdArrayTensor::new(tensor.shared().mapv(f)))
}

pub(super) fn relu(x: f32) -> f32 {
    // `max` ignores NaN, as candle's relu does, so both backends map NaN to 0.
    x.max(0.0)
}

pub(super) fn sigmoid(x: f32) -> f32 {
    // The same expression as the candle backend, so both round alike; it saturates to 0 and 1 without NaN.
    1.0 / (1.0 + (-x).exp())
}

pub(super) fn greater(x: f32, threshold: f32) -> f32 {
    if x > threshold { 1.0 } else { 0.0 }
}
