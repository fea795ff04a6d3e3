//! Int and bool defaults: arithmetic, comparisons, logic and casts, on the host.

use super::host_values::{map, zip};
use crate::backend::Backend;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::memory;
use crate::shape::Shape;

/// On the host.
pub fn arange<B: Backend>(start: i64, end: i64, device: &B::Device) -> Result<B::IntTensor> {
    let len = usize::try_from(i128::from(end) - i128::from(start)).unwrap_or(0);
    let mut values = memory::try_vec("arange", len)?;
    values.extend((0..len).map(|offset| start.wrapping_add(offset as i64)));
    B::int_from_vec(values, Shape::new([len]), device)
}

/// The int arithmetic of two tensors: on the host, broadcasting.
macro_rules! int_binaries {
    ($($(#[$doc:meta])* $name:ident: $combine:expr;)*) => {$(
        $(#[$doc])*
        pub fn $name<B: Backend>(lhs: &B::IntTensor, rhs: &B::IntTensor) -> Result<B::IntTensor> {
            let (a, b) = (B::int_to_vec(lhs)?, B::int_to_vec(rhs)?);
            let combine: fn(i64, i64) -> Result<i64> = $combine;
            let (values, shape) = zip(stringify!($name), (&a, &B::int_shape(lhs)), (&b, &B::int_shape(rhs)), combine)?;
            B::int_from_vec(values, shape, &B::int_device(lhs))
        }
    )*};
}

int_binaries! {
    /// On the host, broadcasting; wraps on overflow.
    int_add: |a, b| Ok(a.wrapping_add(b));
    /// On the host, broadcasting; wraps on overflow.
    int_sub: |a, b| Ok(a.wrapping_sub(b));
    /// On the host, broadcasting; wraps on overflow.
    int_mul: |a, b| Ok(a.wrapping_mul(b));
    /// On the host, broadcasting; a zero divisor or `i64::MIN / -1` is an `Err`.
    int_div: |a, b| a.checked_div(b).ok_or_else(|| int_division_error(b));
}

/// Why `a / divisor` has no `i64` result: a zero divisor, or `i64::MIN / -1`, the one quotient that overflows.
/// Shared with the candle backend, whose kernel checks the same on the device.
pub(crate) fn int_division_error(divisor: i64) -> Error {
    let expected =
        if divisor == 0 { "non-zero" } else { "other than -1 for the dividend i64::MIN (the quotient overflows)" };
    Error::invalid_value("int_div", "divisor", divisor, expected)
}

/// On the host; wraps on overflow.
pub fn int_add_scalar<B: Backend>(tensor: &B::IntTensor, scalar: i64) -> Result<B::IntTensor> {
    let values = map("int_add_scalar", &B::int_to_vec(tensor)?, |x| x.wrapping_add(scalar))?;
    B::int_from_vec(values, B::int_shape(tensor), &B::int_device(tensor))
}

/// On the host; wraps on overflow.
pub fn int_mul_scalar<B: Backend>(tensor: &B::IntTensor, scalar: i64) -> Result<B::IntTensor> {
    let values = map("int_mul_scalar", &B::int_to_vec(tensor)?, |x| x.wrapping_mul(scalar))?;
    B::int_from_vec(values, B::int_shape(tensor), &B::int_device(tensor))
}

/// On the host; wraps on overflow.
pub fn int_sum<B: Backend>(tensor: &B::IntTensor) -> Result<B::IntTensor> {
    let sum = B::int_to_vec(tensor)?.into_iter().fold(0i64, i64::wrapping_add);
    B::int_from_vec(vec![sum], Shape::new([1]), &B::int_device(tensor))
}

/// The int comparisons of two tensors: on the host, broadcasting.
macro_rules! int_comparisons {
    ($($name:ident: $compare:expr;)*) => {$(
        /// On the host, broadcasting.
        pub fn $name<B: Backend>(lhs: &B::IntTensor, rhs: &B::IntTensor) -> Result<B::BoolTensor> {
            let (a, b) = (B::int_to_vec(lhs)?, B::int_to_vec(rhs)?);
            let compare: fn(i64, i64) -> bool = $compare;
            let (values, shape) =
                zip(stringify!($name), (&a, &B::int_shape(lhs)), (&b, &B::int_shape(rhs)), |x, y| Ok(compare(x, y)))?;
            B::bool_from_vec(values, shape, &B::int_device(lhs))
        }
    )*};
}

int_comparisons! {
    int_eq: |a, b| a == b;
    int_lt: |a, b| a < b;
    int_le: |a, b| a <= b;
    int_gt: |a, b| a > b;
    int_ge: |a, b| a >= b;
}

/// On the host.
pub fn int_eq_scalar<B: Backend>(tensor: &B::IntTensor, scalar: i64) -> Result<B::BoolTensor> {
    let values = map("int_eq_scalar", &B::int_to_vec(tensor)?, |x| x == scalar)?;
    B::bool_from_vec(values, B::int_shape(tensor), &B::int_device(tensor))
}

/// Through the host: the same values, another shape.
pub fn int_reshape<B: Backend>(tensor: &B::IntTensor, shape: Shape) -> Result<B::IntTensor> {
    B::int_shape(tensor).check_reshape(&shape)?;
    B::int_from_vec(B::int_to_vec(tensor)?, shape, &B::int_device(tensor))
}

/// On the host.
pub fn int_to_float<B: Backend>(tensor: &B::IntTensor, dtype: DType) -> Result<B::FloatTensor> {
    let values = map("int_to_float", &B::int_to_vec(tensor)?, |x| x as f64)?;
    B::from_f64_vec(values, B::int_shape(tensor), dtype, &B::int_device(tensor))
}

/// On the host, broadcasting.
pub fn bool_and<B: Backend>(lhs: &B::BoolTensor, rhs: &B::BoolTensor) -> Result<B::BoolTensor> {
    let (a, b) = (B::bool_to_vec(lhs)?, B::bool_to_vec(rhs)?);
    let (values, shape) = zip("bool_and", (&a, &B::bool_shape(lhs)), (&b, &B::bool_shape(rhs)), |x, y| Ok(x && y))?;
    B::bool_from_vec(values, shape, &B::bool_device(lhs))
}

/// On the host, broadcasting.
pub fn bool_or<B: Backend>(lhs: &B::BoolTensor, rhs: &B::BoolTensor) -> Result<B::BoolTensor> {
    let (a, b) = (B::bool_to_vec(lhs)?, B::bool_to_vec(rhs)?);
    let (values, shape) = zip("bool_or", (&a, &B::bool_shape(lhs)), (&b, &B::bool_shape(rhs)), |x, y| Ok(x || y))?;
    B::bool_from_vec(values, shape, &B::bool_device(lhs))
}

/// On the host.
pub fn bool_not<B: Backend>(tensor: &B::BoolTensor) -> Result<B::BoolTensor> {
    let values = map("bool_not", &B::bool_to_vec(tensor)?, |x| !x)?;
    B::bool_from_vec(values, B::bool_shape(tensor), &B::bool_device(tensor))
}

/// On the host.
pub fn bool_any<B: Backend>(tensor: &B::BoolTensor) -> Result<B::BoolTensor> {
    let any = B::bool_to_vec(tensor)?.into_iter().any(|x| x);
    B::bool_from_vec(vec![any], Shape::new([1]), &B::bool_device(tensor))
}

/// On the host.
pub fn bool_all<B: Backend>(tensor: &B::BoolTensor) -> Result<B::BoolTensor> {
    let all = B::bool_to_vec(tensor)?.into_iter().all(|x| x);
    B::bool_from_vec(vec![all], Shape::new([1]), &B::bool_device(tensor))
}

/// On the host.
pub fn bool_to_int<B: Backend>(tensor: &B::BoolTensor) -> Result<B::IntTensor> {
    let values = map("bool_to_int", &B::bool_to_vec(tensor)?, i64::from)?;
    B::int_from_vec(values, B::bool_shape(tensor), &B::bool_device(tensor))
}

/// On the host.
pub fn bool_to_float<B: Backend>(tensor: &B::BoolTensor, dtype: DType) -> Result<B::FloatTensor> {
    let values = map("bool_to_float", &B::bool_to_vec(tensor)?, |x| if x { 1.0 } else { 0.0 })?;
    B::from_f64_vec(values, B::bool_shape(tensor), dtype, &B::bool_device(tensor))
}
