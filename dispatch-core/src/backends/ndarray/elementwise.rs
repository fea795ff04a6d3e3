//! Element-wise ops: binary ops broadcast with numpy rules, unary ops map every element. Each is written once,
//! generic over the element type, and the result keeps the operands' dtype.

use ndarray::{ArcArrayD, ArrayD, Zip};
use num_traits::Float;

use super::broadcast::broadcast_pair;
use super::buffers;
use super::tensor::{Element, NdArrayTensor, check_output, ndarray_error, with_arrays};
use crate::dtype::DType;
use crate::error::Result;
use crate::math;

/// `f` of the operands broadcast to their common shape; a large output of two row-major operands of one shape is
/// written into a kept buffer.
pub(super) fn zip_arrays<E: Element>(
    op: &'static str,
    dtype: DType,
    lhs: &ArcArrayD<E>,
    rhs: &ArcArrayD<E>,
    f: impl Fn(E, E) -> E,
) -> Result<NdArrayTensor> {
    let (lhs, rhs) = broadcast_pair(op, lhs, rhs)?;
    check_output::<E>(op, lhs.len())?;
    let array = match (lhs.as_slice(), rhs.as_slice()) {
        (Some(a), Some(b)) if buffers::reused(lhs.len()) => {
            let mut values = buffers::buffer::<E>(lhs.len());
            values.extend(a.iter().zip(b).map(|(&a, &b)| f(a, b)));
            ArrayD::from_shape_vec(lhs.raw_dim(), values).map_err(|error| ndarray_error(op, error))?
        }
        // A broadcast or strided operand: `Zip` walks it by its strides, into fresh memory it need not clear first.
        _ => Zip::from(&lhs).and(&rhs).map_collect(|&a, &b| f(a, b)),
    };
    Ok(NdArrayTensor::output(dtype, array))
}

/// `f` of every element; a large output is written into a kept buffer in row-major order, a small one keeps the
/// input's memory order.
pub(super) fn map_array<E: Element>(
    op: &'static str,
    dtype: DType,
    array: &ArcArrayD<E>,
    f: impl Fn(E) -> E,
) -> Result<NdArrayTensor> {
    check_output::<E>(op, array.len())?;
    if !buffers::reused(array.len()) {
        return Ok(NdArrayTensor::output(dtype, array.mapv(f)));
    }
    let mut values = buffers::buffer::<E>(array.len());
    match array.as_slice() {
        Some(slice) => values.extend(slice.iter().map(|&x| f(x))),
        None => values.extend(array.iter().map(|&x| f(x))),
    }
    let mapped = ArrayD::from_shape_vec(array.raw_dim(), values).map_err(|error| ndarray_error(op, error))?;
    Ok(NdArrayTensor::output(dtype, mapped))
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

/// `gelu_backward` in one pass: the composed default's steps per element, each rounded to the dtype as its op would
/// round it (a no-op for `F32` and `F64`), so the values are the default's bit for bit, without its ten
/// intermediate tensors.
pub(super) fn gelu_backward(tensor: &NdArrayTensor, gradient: &NdArrayTensor) -> Result<NdArrayTensor> {
    with_arrays!("gelu_backward", tensor, gradient, |x, g| gelu_backward_of::<E>(tensor, x, g))
}

fn gelu_backward_of<E: Element>(tensor: &NdArrayTensor, x: &ArcArrayD<E>, g: &ArcArrayD<E>) -> Result<NdArrayTensor> {
    let dtype = tensor.dtype();
    let half = matches!(dtype, DType::F16 | DType::BF16);
    let round = move |value: E| if half { E::of_f64(dtype.round(value.to_f64().unwrap_or(f64::NAN))) } else { value };
    let scalar = |value: f64| E::of_f64(tensor.scalar(value));
    let to_erf = scalar(std::f64::consts::FRAC_1_SQRT_2);
    let (one_half, minus_half, density_at_0) = (scalar(0.5), scalar(-0.5), scalar(math::NORMAL_DENSITY_AT_0));
    zip_arrays::<E>("gelu_backward", dtype, x, g, move |x, g| {
        let erf = round(math::erf(round(x * to_erf)));
        let cdf = round(round(erf + E::one()) * one_half);
        let density = round(round(round(round(x * x) * minus_half).exp()) * density_at_0);
        round(g * round(cdf + round(x * density)))
    })
}
