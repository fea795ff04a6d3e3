//! The int and bool tensors of the ndarray backend, shared `i64` and `bool` arrays, and their ops: wrapping
//! arithmetic, comparisons and logic broadcasting with numpy rules, reductions and conversions.

use ndarray::{ArcArrayD, Array1, ArrayD, IxDyn};

use super::broadcast::{broadcast_pair, zip_broadcast};
use super::layout::reshaped;
use super::tensor::{Element, NdArrayTensor, check_output, ndarray_error, row_major_values, with_element};
use crate::backend::defaults::int_division_error;
use crate::dtype::DType;
use crate::error::Result;
use crate::memory;
use crate::shape::Shape;

/// Declares the tensor of one element type: from and to row-major values, and its shape.
macro_rules! element_tensor {
    ($(#[$doc:meta])* $name:ident($element:ty), $from_vec:literal, $to_vec:literal) => {
        $(#[$doc])*
        #[derive(Clone, Debug)]
        pub struct $name {
            array: ArcArrayD<$element>,
        }

        impl $name {
            /// Wraps an array computed by an op.
            pub(super) fn new(array: ArrayD<$element>) -> Self {
                Self { array: array.into_shared() }
            }

            pub(super) fn from_vec(data: Vec<$element>, shape: &Shape) -> Result<Self> {
                shape.check_tensor_shape($from_vec)?;
                shape.check_data_len($from_vec, data.len())?;
                let array = ArrayD::from_shape_vec(IxDyn(shape.dims()), data)
                    .map_err(|error| ndarray_error($from_vec, error))?;
                Ok(Self { array: array.into_shared() })
            }

            /// The array, for the native ops that read it.
            pub(super) fn array(&self) -> &ArcArrayD<$element> {
                &self.array
            }

            /// The dimensions of the array, outermost first.
            pub fn shape(&self) -> Shape {
                Shape::new(self.array.shape())
            }

            /// The elements in row-major order; [`Error::OutOfMemory`](crate::error::Error::OutOfMemory) if the copy
            /// cannot be allocated.
            pub fn to_vec(&self) -> Result<Vec<$element>> {
                row_major_values($to_vec, &self.array)
            }
        }
    };
}

element_tensor! {
    /// An int (`i64`) tensor of the [`NdArray`](super::NdArray) backend.
    NdArrayIntTensor(i64), "int_from_vec", "int_to_vec"
}

element_tensor! {
    /// A bool tensor of the [`NdArray`](super::NdArray) backend.
    NdArrayBoolTensor(bool), "bool_from_vec", "bool_to_vec"
}

// ---- int ops ---------------------------------------------------------------------------------------------------

/// `start, start + 1, ..., end - 1`; empty when `end <= start`.
pub(super) fn arange(start: i64, end: i64) -> Result<NdArrayIntTensor> {
    let len = usize::try_from(i128::from(end) - i128::from(start)).unwrap_or(0);
    let mut values = memory::try_vec("arange", len)?;
    // `offset < len <= end - start`, so `start + offset` is below `end`: the wrapping add never wraps.
    values.extend((0..len).map(|offset| start.wrapping_add(offset as i64)));
    Ok(NdArrayIntTensor::new(Array1::from_vec(values).into_dyn()))
}

/// `f` of the two int tensors, broadcasting.
pub(super) fn int_binary(
    op: &'static str,
    lhs: &NdArrayIntTensor,
    rhs: &NdArrayIntTensor,
    f: impl Fn(i64, i64) -> i64,
) -> Result<NdArrayIntTensor> {
    Ok(NdArrayIntTensor::new(zip_broadcast(op, &lhs.array, &rhs.array, f)?))
}

/// `lhs / rhs`, rounding toward zero. A zero divisor, or `i64::MIN / -1`, is the error the default gives, for the
/// first such pair in row-major order.
pub(super) fn int_div(lhs: &NdArrayIntTensor, rhs: &NdArrayIntTensor) -> Result<NdArrayIntTensor> {
    let op = "int_div";
    let mut undefined = false;
    let quotients = zip_broadcast(op, &lhs.array, &rhs.array, |a, b| {
        a.checked_div(b).unwrap_or_else(|| {
            undefined = true;
            0
        })
    })?;
    if undefined {
        // Only on failure: the pairs again, in row-major order, for the first divisor that has no quotient.
        let (dividends, divisors) = broadcast_pair(op, &lhs.array, &rhs.array)?;
        let divisor = dividends.iter().zip(divisors.iter()).find(|&(&a, &b)| a.checked_div(b).is_none());
        return Err(int_division_error(divisor.map_or(0, |(_, &b)| b)));
    }
    Ok(NdArrayIntTensor::new(quotients))
}

/// `f` of every element of an int tensor.
pub(super) fn int_map(op: &'static str, tensor: &NdArrayIntTensor, f: impl Fn(i64) -> i64) -> Result<NdArrayIntTensor> {
    check_output::<i64>(op, tensor.array.len())?;
    Ok(NdArrayIntTensor::new(tensor.array.mapv(f)))
}

/// The sum of every element, wrapping on overflow (so in any order).
pub(super) fn int_sum(tensor: &NdArrayIntTensor) -> NdArrayIntTensor {
    let sum = tensor.array.fold(0i64, |sum, &x| sum.wrapping_add(x));
    NdArrayIntTensor::new(Array1::from_elem(1, sum).into_dyn())
}

/// `holds(a, b)` of the two int tensors, broadcasting.
pub(super) fn int_compare(
    op: &'static str,
    lhs: &NdArrayIntTensor,
    rhs: &NdArrayIntTensor,
    holds: impl Fn(i64, i64) -> bool,
) -> Result<NdArrayBoolTensor> {
    Ok(NdArrayBoolTensor::new(zip_broadcast(op, &lhs.array, &rhs.array, holds)?))
}

pub(super) fn int_eq_scalar(tensor: &NdArrayIntTensor, scalar: i64) -> Result<NdArrayBoolTensor> {
    check_output::<bool>("int_eq_scalar", tensor.array.len())?;
    Ok(NdArrayBoolTensor::new(tensor.array.mapv(|x| x == scalar)))
}

/// The same elements under `shape`: shared when the array is row-major, else copied into row-major order.
pub(super) fn int_reshape(tensor: &NdArrayIntTensor, shape: &Shape) -> Result<NdArrayIntTensor> {
    tensor.shape().check_reshape(shape)?;
    Ok(NdArrayIntTensor { array: reshaped("int_reshape", &tensor.array, shape)? })
}

/// Each value rounded once to `dtype` (`F32` and `F64` by the cast itself; the half dtypes through `f64`, as the
/// other backends round them).
pub(super) fn int_to_float(tensor: &NdArrayIntTensor, dtype: DType) -> Result<NdArrayTensor> {
    with_element!(dtype, ints_as::<E>(&tensor.array, dtype))
}

fn ints_as<E: Element>(array: &ArcArrayD<i64>, dtype: DType) -> Result<NdArrayTensor> {
    check_output::<E>("int_to_float", array.len())?;
    let values = if matches!(dtype, DType::F32 | DType::F64) {
        array.mapv(|x| <E as num_traits::NumCast>::from(x).unwrap_or_else(E::nan))
    } else {
        array.mapv(|x| E::of_f64(dtype.round(x as f64)))
    };
    Ok(NdArrayTensor::shared_as(dtype, values.into_shared()))
}

// ---- bool ops --------------------------------------------------------------------------------------------------

/// `f` of the two bool tensors, broadcasting.
pub(super) fn bool_binary(
    op: &'static str,
    lhs: &NdArrayBoolTensor,
    rhs: &NdArrayBoolTensor,
    f: impl Fn(bool, bool) -> bool,
) -> Result<NdArrayBoolTensor> {
    Ok(NdArrayBoolTensor::new(zip_broadcast(op, &lhs.array, &rhs.array, f)?))
}

pub(super) fn bool_not(tensor: &NdArrayBoolTensor) -> Result<NdArrayBoolTensor> {
    check_output::<bool>("bool_not", tensor.array.len())?;
    Ok(NdArrayBoolTensor::new(tensor.array.mapv(|x| !x)))
}

/// Whether any element holds (false for none) or, with `all`, whether every one does (true for none).
pub(super) fn bool_reduce(tensor: &NdArrayBoolTensor, all: bool) -> NdArrayBoolTensor {
    let holds = if all { tensor.array.iter().all(|&x| x) } else { tensor.array.iter().any(|&x| x) };
    NdArrayBoolTensor::new(Array1::from_elem(1, holds).into_dyn())
}

pub(super) fn bool_to_int(tensor: &NdArrayBoolTensor) -> Result<NdArrayIntTensor> {
    check_output::<i64>("bool_to_int", tensor.array.len())?;
    Ok(NdArrayIntTensor::new(tensor.array.mapv(i64::from)))
}

pub(super) fn bool_to_float(tensor: &NdArrayBoolTensor, dtype: DType) -> Result<NdArrayTensor> {
    with_element!(dtype, bools_as::<E>(&tensor.array, dtype))
}

/// 1 and 0, which every dtype holds exactly.
fn bools_as<E: Element>(array: &ArcArrayD<bool>, dtype: DType) -> Result<NdArrayTensor> {
    check_output::<E>("bool_to_float", array.len())?;
    let values = array.mapv(|x| if x { E::one() } else { E::zero() });
    Ok(NdArrayTensor::shared_as(dtype, values.into_shared()))
}
