//! Element-wise defaults: the float functions of one tensor and the bounds, on the host; the ops that take an
//! operand by value, `gelu_backward` and `adam_step`, through the backend's own ops.

use super::host_values::{map, same_dtype, values_like, zip};
use std::f64::consts::FRAC_1_SQRT_2;

use crate::backend::{AdamStep, Backend, adam_output_shape};
use crate::error::Result;
use crate::math;
use crate::shape::Shape;

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

/// The ops given their first operand, by default the op that borrows it: the operand is dropped after, and the output
/// is in new memory.
macro_rules! given_operand {
    ($($name:ident: $op:ident($operand:ident, $other:ident: $other_type:ty);)*) => {$(
        #[doc = concat!("`", stringify!($op), "`.")]
        pub fn $name<B: Backend>($operand: B::FloatTensor, $other: $other_type) -> Result<B::FloatTensor> {
            B::$op(&$operand, $other)
        }
    )*};
}

given_operand! {
    add_into: add(lhs, rhs: &B::FloatTensor);
    sub_into: sub(lhs, rhs: &B::FloatTensor);
    mul_into: mul(lhs, rhs: &B::FloatTensor);
    div_into: div(lhs, rhs: &B::FloatTensor);
    add_scalar_into: add_scalar(tensor, scalar: f64);
    mul_scalar_into: mul_scalar(tensor, scalar: f64);
}

/// `gradient * (Φ(x) + x φ(x))` through the backend's own ops, broadcasting; each op rounds to the dtype. A backend
/// that fuses it takes the same steps per element, in this order (ndarray's kernel gives these values bit for bit).
pub fn gelu_backward<B: Backend>(tensor: &B::FloatTensor, gradient: &B::FloatTensor) -> Result<B::FloatTensor> {
    // Checked first, so bad operands are this op's error rather than that of a step inside it.
    same_dtype::<B>("gelu_backward", tensor, gradient)?;
    Shape::broadcast("gelu_backward", &B::shape(tensor), &B::shape(gradient))?;
    // Nested: a statement's temporaries are dropped at its end, so `erf` and the exponent's steps do not stay alive
    // (and in memory) to the last line.
    let cdf = B::mul_scalar(&B::add_scalar(&B::erf(&B::mul_scalar(tensor, FRAC_1_SQRT_2)?)?, 1.0)?, 0.5)?;
    let density = B::mul_scalar(&B::exp(&B::mul_scalar(&B::mul(tensor, tensor)?, -0.5)?)?, math::NORMAL_DENSITY_AT_0)?;
    B::mul(gradient, &B::add(&cdf, &B::mul(tensor, &density)?)?)
}

/// Through the backend's own ops, each rounding to the dtype, in the order of dispatch-nn's optimizers before this
/// op: a backend that fuses it takes the same steps per element (ndarray's kernel gives these values bit for bit).
pub fn adam_step<B: Backend>(
    parameter: &B::FloatTensor,
    gradient: &B::FloatTensor,
    moments: &B::FloatTensor,
    options: AdamStep,
) -> Result<B::FloatTensor> {
    let op = "adam_step";
    same_dtype::<B>(op, parameter, gradient)?;
    same_dtype::<B>(op, parameter, moments)?;
    let shape = B::shape(parameter);
    adam_output_shape(&shape, &B::shape(gradient), &B::shape(moments))?;
    let scalars = options.scalars(op)?;
    let moment = |row| B::reshape(&B::narrow(moments, 0, row, 1)?, shape.clone());
    let parameter = match scalars.decay {
        Some(decay) => B::mul_scalar(parameter, decay)?,
        None => parameter.clone(),
    };
    let gradient = match scalars.penalty {
        Some(penalty) => B::add(gradient, &B::mul_scalar(&parameter, penalty)?)?,
        None => gradient.clone(),
    };
    let ((beta1, rest1), (beta2, rest2)) = (scalars.first, scalars.second);
    let first = B::add(&B::mul_scalar(&moment(0)?, beta1)?, &B::mul_scalar(&gradient, rest1)?)?;
    let second = B::mul_scalar(&B::mul(&gradient, &gradient)?, rest2)?;
    let second = B::add(&B::mul_scalar(&moment(1)?, beta2)?, &second)?;
    let denominator = B::add_scalar(&B::sqrt(&B::mul_scalar(&second, scalars.second_correction)?)?, scalars.eps)?;
    let step = B::div(&B::mul_scalar(&first, scalars.step_size)?, &denominator)?;
    B::stack(&[B::sub(&parameter, &step)?, first, second], 0)
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
