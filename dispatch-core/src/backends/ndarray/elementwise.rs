//! Element-wise ops: binary ops broadcast with numpy rules, unary ops map every element. Each is written once,
//! generic over the element type, and the result keeps the operands' dtype.

use ndarray::ArcArrayD;
use num_traits::Float;

use super::broadcast::zip_broadcast;
use super::tensor::{Element, NdArrayTensor, check_output};
use crate::dtype::DType;
use crate::error::Result;

/// `f` of the operands broadcast to their common shape.
pub(super) fn zip_arrays<E: Element>(
    op: &'static str,
    dtype: DType,
    lhs: &ArcArrayD<E>,
    rhs: &ArcArrayD<E>,
    f: impl Fn(E, E) -> E,
) -> Result<NdArrayTensor> {
    Ok(NdArrayTensor::output(dtype, zip_broadcast(op, lhs, rhs, f)?))
}

/// `f` of every element; the result keeps the input's memory order, so a contiguous input is mapped as one slice.
pub(super) fn map_array<E: Element>(
    op: &'static str,
    dtype: DType,
    array: &ArcArrayD<E>,
    f: impl Fn(E) -> E,
) -> Result<NdArrayTensor> {
    check_output::<E>(op, array.len())?;
    Ok(NdArrayTensor::output(dtype, array.mapv(f)))
}

/// `$f` (a closure of one element of type `E`) of every element of the tensor.
macro_rules! unary {
    ($op:literal, $tensor:expr, $f:expr) => {{
        let tensor: &NdArrayTensor = $tensor;
        $crate::backends::ndarray::tensor::with_array!(tensor, |array| {
            $crate::backends::ndarray::elementwise::map_array::<E>($op, tensor.dtype(), array, $f)
        })
    }};
}
pub(super) use unary;

/// `$f` (a closure of two elements of type `E`) of the two tensors, broadcasting; they must share a dtype.
macro_rules! binary {
    ($op:literal, $lhs:expr, $rhs:expr, $f:expr) => {{
        let lhs: &NdArrayTensor = $lhs;
        $crate::backends::ndarray::tensor::with_arrays!($op, lhs, $rhs, |a, b| {
            $crate::backends::ndarray::elementwise::zip_arrays::<E>($op, lhs.dtype(), a, b, $f)
        })
    }};
}
pub(super) use binary;

pub(super) fn relu<E: Float>(x: E) -> E {
    // `max` ignores NaN, as candle's relu does, so both backends map NaN to 0.
    x.max(E::zero())
}

pub(super) fn sigmoid<E: Float>(x: E) -> E {
    // The same expression as the candle backend, so both round alike; it saturates to 0 and 1 without NaN.
    E::one() / (E::one() + (-x).exp())
}
