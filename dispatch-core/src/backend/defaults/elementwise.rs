//! Element-wise defaults: seeded creation, host ops, comparisons, masks and float functions, on the host.

use std::sync::Arc;

use super::{broadcast_source, host_tensor_like, host_tensor_of, map, same_dtype, values_like, zip};
use crate::backend::{Backend, HostOp};
use crate::dtype::{self, DType};
use crate::error::Result;
use crate::shape::Shape;
use crate::{math, memory, random};

/// `data` as `f64`, then `from_f64_vec` with dtype `F32`.
pub fn from_vec<B: Backend>(data: Vec<f32>, shape: Shape, device: &B::Device) -> Result<B::FloatTensor> {
    B::from_f64_vec(map("from_vec", &data, f64::from)?, shape, DType::F32, device)
}

/// `to_f64_vec` of an `F32` tensor, each value exactly an `f32`; another dtype is an error rather than a silent
/// rounding.
pub fn to_vec<B: Backend>(tensor: &B::FloatTensor) -> Result<Vec<f32>> {
    dtype::check_expected("to_vec", DType::F32, B::dtype(tensor))?;
    map("to_vec", &B::to_f64_vec(tensor)?, |value| value as f32)
}

/// Seeded on the host, so the same seed gives the same values on every backend.
pub fn random_uniform<B: Backend>(
    shape: Shape,
    low: f64,
    high: f64,
    seed: u64,
    dtype: DType,
    device: &B::Device,
) -> Result<B::FloatTensor> {
    let op = "random_uniform";
    if dtype == DType::F32 {
        return B::from_vec(random::uniform(&shape, (low, high), seed, dtype, op)?, shape, device);
    }
    B::from_f64_vec(random::uniform(&shape, (low, high), seed, dtype, op)?, shape, dtype, device)
}

/// Seeded on the host, like [`random_uniform`].
pub fn random_normal<B: Backend>(
    shape: Shape,
    mean: f64,
    std: f64,
    seed: u64,
    dtype: DType,
    device: &B::Device,
) -> Result<B::FloatTensor> {
    let op = "random_normal";
    if dtype == DType::F32 {
        return B::from_vec(random::normal(&shape, (mean, std), seed, dtype, op)?, shape, device);
    }
    B::from_f64_vec(random::normal(&shape, (mean, std), seed, dtype, op)?, shape, dtype, device)
}

/// Through host memory: the values out (as `f32`, what host ops compute in), the op, the result back on the
/// tensor's device in the tensor's dtype.
pub fn host_op<B: Backend>(tensor: &B::FloatTensor, op: Arc<dyn HostOp>) -> Result<B::FloatTensor> {
    let output = op.forward(host_tensor_of::<B>(tensor)?)?;
    host_tensor_like::<B>(output, tensor)
}

/// The float comparisons, each tensor against tensor (broadcasting) and tensor against a scalar.
macro_rules! float_comparisons {
    ($($name:ident, $scalar_name:ident: $compare:expr;)*) => {$(
        /// On the host, broadcasting.
        pub fn $name<B: Backend>(lhs: &B::FloatTensor, rhs: &B::FloatTensor) -> Result<B::BoolTensor> {
            same_dtype::<B>(stringify!($name), lhs, rhs)?;
            let (a, b) = (B::to_f64_vec(lhs)?, B::to_f64_vec(rhs)?);
            let compare: fn(f64, f64) -> bool = $compare;
            let (values, shape) =
                zip(stringify!($name), (&a, &B::shape(lhs)), (&b, &B::shape(rhs)), |x, y| Ok(compare(x, y)))?;
            B::bool_from_vec(values, shape, &B::device(lhs))
        }

        /// On the host.
        pub fn $scalar_name<B: Backend>(tensor: &B::FloatTensor, scalar: f64) -> Result<B::BoolTensor> {
            let compare: fn(f64, f64) -> bool = $compare;
            let scalar = B::dtype(tensor).round(scalar);
            let values = map(stringify!($scalar_name), &B::to_f64_vec(tensor)?, |x| compare(x, scalar))?;
            B::bool_from_vec(values, B::shape(tensor), &B::device(tensor))
        }
    )*};
}

float_comparisons! {
    eq, eq_scalar: |a, b| a == b;
    ne, ne_scalar: |a, b| a != b;
    lt, lt_scalar: |a, b| a < b;
    le, le_scalar: |a, b| a <= b;
    gt, gt_scalar: |a, b| a > b;
    ge, ge_scalar: |a, b| a >= b;
}

/// On the host: the three operands broadcast to one shape.
pub fn mask_where<B: Backend>(
    mask: &B::BoolTensor,
    on_true: &B::FloatTensor,
    on_false: &B::FloatTensor,
) -> Result<B::FloatTensor> {
    let op = "mask_where";
    same_dtype::<B>(op, on_true, on_false)?;
    let (mask_shape, true_shape, false_shape) = (B::bool_shape(mask), B::shape(on_true), B::shape(on_false));
    let shape = Shape::broadcast_three(op, &mask_shape, &true_shape, &false_shape)?;
    let (picks, a, b) = (B::bool_to_vec(mask)?, B::to_f64_vec(on_true)?, B::to_f64_vec(on_false)?);
    let out = shape.dims();
    let mut values = memory::try_vec(op, shape.num_elements())?;
    for index in 0..shape.num_elements() {
        let value = if picks[broadcast_source(index, out, mask_shape.dims())] {
            a[broadcast_source(index, out, true_shape.dims())]
        } else {
            b[broadcast_source(index, out, false_shape.dims())]
        };
        values.push(value);
    }
    values_like::<B>(values, shape, on_true)
}

/// On the host: `mask` broadcasts to `tensor`'s shape, which the output keeps.
pub fn mask_fill<B: Backend>(tensor: &B::FloatTensor, mask: &B::BoolTensor, value: f64) -> Result<B::FloatTensor> {
    let op = "mask_fill";
    let (shape, mask_shape) = (B::shape(tensor), B::bool_shape(mask));
    Shape::check_mask_fits(op, &shape, &mask_shape)?;
    let (values, picks) = (B::to_f64_vec(tensor)?, B::bool_to_vec(mask)?);
    let (filled, _) = zip(op, (&values, &shape), (&picks, &mask_shape), |x, fill| Ok(if fill { value } else { x }))?;
    values_like::<B>(filled, shape, tensor)
}

/// The float functions of one tensor: on the host, element by element.
macro_rules! float_unaries {
    ($($(#[$doc:meta])* $name:ident: $function:expr;)*) => {$(
        $(#[$doc])*
        pub fn $name<B: Backend>(tensor: &B::FloatTensor) -> Result<B::FloatTensor> {
            let function: fn(f64) -> f64 = $function;
            let values = map(stringify!($name), &B::to_f64_vec(tensor)?, function)?;
            values_like::<B>(values, B::shape(tensor), tensor)
        }
    )*};
}

float_unaries! {
    /// On the host.
    sqrt: f64::sqrt;
    /// On the host.
    recip: f64::recip;
    /// On the host.
    abs: f64::abs;
    /// On the host.
    sin: f64::sin;
    /// On the host.
    cos: f64::cos;
    /// On the host.
    erf: math::erf;
    /// On the host.
    gelu: math::gelu;
    /// On the host.
    silu: math::silu;
}

/// On the host; `min <= max` is required (NaN bounds are refused).
pub fn clamp<B: Backend>(tensor: &B::FloatTensor, min: f64, max: f64) -> Result<B::FloatTensor> {
    math::check_clamp_bounds(min, max)?;
    let dtype = B::dtype(tensor);
    let (min, max) = (dtype.round(min), dtype.round(max));
    let values = map("clamp", &B::to_f64_vec(tensor)?, |x| math::clamp(x, min, max))?;
    values_like::<B>(values, B::shape(tensor), tensor)
}

/// On the host, broadcasting.
pub fn maximum<B: Backend>(lhs: &B::FloatTensor, rhs: &B::FloatTensor) -> Result<B::FloatTensor> {
    same_dtype::<B>("maximum", lhs, rhs)?;
    let (a, b) = (B::to_f64_vec(lhs)?, B::to_f64_vec(rhs)?);
    let (values, shape) = zip("maximum", (&a, &B::shape(lhs)), (&b, &B::shape(rhs)), |x, y| Ok(math::maximum(x, y)))?;
    values_like::<B>(values, shape, lhs)
}

/// On the host, broadcasting.
pub fn minimum<B: Backend>(lhs: &B::FloatTensor, rhs: &B::FloatTensor) -> Result<B::FloatTensor> {
    same_dtype::<B>("minimum", lhs, rhs)?;
    let (a, b) = (B::to_f64_vec(lhs)?, B::to_f64_vec(rhs)?);
    let (values, shape) = zip("minimum", (&a, &B::shape(lhs)), (&b, &B::shape(rhs)), |x, y| Ok(math::minimum(x, y)))?;
    values_like::<B>(values, shape, lhs)
}
