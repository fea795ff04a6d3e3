//! Element-wise defaults: seeded creation, host ops, comparisons, masks and float functions, on the host.

use std::sync::Arc;

use super::{broadcast_source, map, zip};
use crate::backend::{Backend, HostOp, HostTensor};
use crate::error::{Error, Result};
use crate::shape::Shape;
use crate::{math, memory, random};

/// Seeded on the host, so the same seed gives the same values on every backend.
pub fn random_uniform<B: Backend>(
    shape: Shape,
    low: f32,
    high: f32,
    seed: u64,
    device: &B::Device,
) -> Result<B::FloatTensor> {
    let data = random::uniform(&shape, low, high, seed, "random_uniform")?;
    B::from_vec(data, shape, device)
}

/// Seeded on the host, like [`random_uniform`].
pub fn random_normal<B: Backend>(
    shape: Shape,
    mean: f32,
    std: f32,
    seed: u64,
    device: &B::Device,
) -> Result<B::FloatTensor> {
    let data = random::normal(&shape, mean, std, seed, "random_normal")?;
    B::from_vec(data, shape, device)
}

/// Through host memory: the values out, the op, the result back on the tensor's device.
pub fn host_op<B: Backend>(tensor: &B::FloatTensor, op: Arc<dyn HostOp>) -> Result<B::FloatTensor> {
    let input = HostTensor { data: B::to_vec(tensor)?, shape: B::shape(tensor) };
    let output = op.forward(input)?;
    B::from_vec(output.data, output.shape, &B::device(tensor))
}

/// The float comparisons, each tensor against tensor (broadcasting) and tensor against a scalar.
macro_rules! float_comparisons {
    ($($name:ident, $scalar_name:ident: $compare:expr;)*) => {$(
        /// On the host, broadcasting.
        pub fn $name<B: Backend>(lhs: &B::FloatTensor, rhs: &B::FloatTensor) -> Result<B::BoolTensor> {
            let (a, b) = (B::to_vec(lhs)?, B::to_vec(rhs)?);
            let compare: fn(f32, f32) -> bool = $compare;
            let (values, shape) =
                zip(stringify!($name), (&a, &B::shape(lhs)), (&b, &B::shape(rhs)), |x, y| Ok(compare(x, y)))?;
            B::bool_from_vec(values, shape, &B::device(lhs))
        }

        /// On the host.
        pub fn $scalar_name<B: Backend>(tensor: &B::FloatTensor, scalar: f32) -> Result<B::BoolTensor> {
            let compare: fn(f32, f32) -> bool = $compare;
            let values = map(stringify!($scalar_name), &B::to_vec(tensor)?, |x| compare(x, scalar))?;
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
    let (mask_shape, true_shape, false_shape) = (B::bool_shape(mask), B::shape(on_true), B::shape(on_false));
    let shape = Shape::broadcast(op, &Shape::broadcast(op, &mask_shape, &true_shape)?, &false_shape)?;
    let (picks, a, b) = (B::bool_to_vec(mask)?, B::to_vec(on_true)?, B::to_vec(on_false)?);
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
    B::from_vec(values, shape, &B::device(on_true))
}

/// On the host: `mask` broadcasts to `tensor`'s shape, which the output keeps.
pub fn mask_fill<B: Backend>(tensor: &B::FloatTensor, mask: &B::BoolTensor, value: f32) -> Result<B::FloatTensor> {
    let op = "mask_fill";
    let (shape, mask_shape) = (B::shape(tensor), B::bool_shape(mask));
    if Shape::broadcast(op, &shape, &mask_shape)? != shape {
        return Err(Error::ShapeMismatch { op, lhs: shape, rhs: mask_shape });
    }
    let (values, picks) = (B::to_vec(tensor)?, B::bool_to_vec(mask)?);
    let (filled, _) = zip(op, (&values, &shape), (&picks, &mask_shape), |x, fill| Ok(if fill { value } else { x }))?;
    B::from_vec(filled, shape, &B::device(tensor))
}

/// The float functions of one tensor: on the host, element by element.
macro_rules! float_unaries {
    ($($(#[$doc:meta])* $name:ident: $function:expr;)*) => {$(
        $(#[$doc])*
        pub fn $name<B: Backend>(tensor: &B::FloatTensor) -> Result<B::FloatTensor> {
            let function: fn(f32) -> f32 = $function;
            let values = map(stringify!($name), &B::to_vec(tensor)?, function)?;
            B::from_vec(values, B::shape(tensor), &B::device(tensor))
        }
    )*};
}

float_unaries! {
    /// On the host.
    sqrt: f32::sqrt;
    /// On the host.
    recip: f32::recip;
    /// On the host.
    abs: f32::abs;
    /// On the host.
    sin: f32::sin;
    /// On the host.
    cos: f32::cos;
    /// On the host, in `f64`.
    erf: math::erf;
    /// On the host, in `f64`.
    gelu: math::gelu;
    /// On the host.
    silu: math::silu;
}

/// On the host; `min <= max` is required (NaN bounds are refused).
pub fn clamp<B: Backend>(tensor: &B::FloatTensor, min: f32, max: f32) -> Result<B::FloatTensor> {
    math::check_clamp_bounds(min, max)?;
    let values = map("clamp", &B::to_vec(tensor)?, |x| math::clamp(x, min, max))?;
    B::from_vec(values, B::shape(tensor), &B::device(tensor))
}

/// On the host, broadcasting.
pub fn maximum<B: Backend>(lhs: &B::FloatTensor, rhs: &B::FloatTensor) -> Result<B::FloatTensor> {
    let (a, b) = (B::to_vec(lhs)?, B::to_vec(rhs)?);
    let (values, shape) = zip("maximum", (&a, &B::shape(lhs)), (&b, &B::shape(rhs)), |x, y| Ok(math::maximum(x, y)))?;
    B::from_vec(values, shape, &B::device(lhs))
}

/// On the host, broadcasting.
pub fn minimum<B: Backend>(lhs: &B::FloatTensor, rhs: &B::FloatTensor) -> Result<B::FloatTensor> {
    let (a, b) = (B::to_vec(lhs)?, B::to_vec(rhs)?);
    let (values, shape) = zip("minimum", (&a, &B::shape(lhs)), (&b, &B::shape(rhs)), |x, y| Ok(math::minimum(x, y)))?;
    B::from_vec(values, shape, &B::device(lhs))
}
