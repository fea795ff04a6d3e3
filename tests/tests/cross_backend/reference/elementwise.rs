//! Element-wise float ops, comparisons and masks.

use super::zip;
use crate::support::program::{Binary, Compare, Scalar, Unary};
use crate::support::values::{Bools, Floats, Outcome, dtype_mismatch, invalid, mismatch, round_to};

pub fn binary(op: Binary, a: &Floats, b: &Floats) -> Outcome<Floats> {
    dtype_mismatch(a.dtype, b.dtype)?;
    let f: fn(f64, f64) -> f64 = match op {
        Binary::Add => |x, y| x + y,
        Binary::Sub => |x, y| x - y,
        Binary::Mul => |x, y| x * y,
        Binary::Div => |x, y| x / y,
        Binary::Maximum => |x, y| if x.is_nan() || y.is_nan() { f64::NAN } else { x.max(y) },
        Binary::Minimum => |x, y| if x.is_nan() || y.is_nan() { f64::NAN } else { x.min(y) },
        Binary::GeluBackward => |x, g| g * gelu_derivative(x),
    };
    let (dims, values) = zip(&a.dims, &b.dims, |i, j| f(a.values[i], b.values[j]))?;
    Ok(Floats::new(dims, values, a.dtype))
}

/// Every scalar argument is first rounded to the tensor's dtype.
pub fn scalar(op: Scalar, a: &Floats, scalar: f64) -> Floats {
    let s = round_to(a.dtype, scalar);
    let f = |x: f64| match op {
        Scalar::Add => x + s,
        Scalar::Mul => x * s,
        Scalar::Powf => x.powf(s),
        Scalar::Greater => f64::from(u8::from(x > s)),
    };
    Floats::new(a.dims.clone(), a.values.iter().map(|&x| f(x)).collect(), a.dtype)
}

pub fn clamp(a: &Floats, min: f64, max: f64) -> Outcome<Floats> {
    // NaN bounds fail this too.
    if min.partial_cmp(&max).is_none_or(|order| order.is_gt()) {
        return invalid(format!("clamp to [{min}, {max}]"));
    }
    let (min, max) = (round_to(a.dtype, min), round_to(a.dtype, max));
    let values = a.values.iter().map(|&x| if x.is_nan() { x } else { x.max(min).min(max) }).collect();
    Ok(Floats::new(a.dims.clone(), values, a.dtype))
}

pub fn unary(op: Unary, a: &Floats) -> Floats {
    Floats::new(a.dims.clone(), a.values.iter().map(|&x| apply_unary(op, x)).collect(), a.dtype)
}

pub fn apply_unary(op: Unary, x: f64) -> f64 {
    match op {
        Unary::Neg => -x,
        Unary::Exp => x.exp(),
        Unary::Log => x.ln(),
        Unary::Relu => {
            if x < 0.0 {
                0.0
            } else {
                x
            }
        }
        Unary::Sigmoid => 1.0 / (1.0 + (-x).exp()),
        Unary::Tanh => x.tanh(),
        Unary::Sqrt => x.sqrt(),
        Unary::Recip => 1.0 / x,
        Unary::Abs => x.abs(),
        Unary::Sin => x.sin(),
        Unary::Cos => x.cos(),
        Unary::Erf => erf(x),
        Unary::Gelu => x * normal_cdf(x),
        Unary::Silu => x / (1.0 + (-x).exp()),
    }
}

/// `Φ(x) + x φ(x)`, the derivative of the exact GELU.
pub fn gelu_derivative(x: f64) -> f64 {
    normal_cdf(x) + x * normal_density(x)
}

/// `φ(x) (2 - x²)`, the GELU's second derivative: `gelu_backward`'s derivative by its tensor.
pub fn gelu_second_derivative(x: f64) -> f64 {
    normal_density(x) * (2.0 - x * x)
}

/// `Φ(x)`, the standard normal CDF. Left of 0 it is `erfc(-x/√2) / 2`: `1 + erf` would cancel, and be exactly 0 from
/// about -8.5, where `Φ` (and the GELU, `x Φ(x)`) is still a normal `f32` down to about -13.
pub fn normal_cdf(x: f64) -> f64 {
    let z = x / std::f64::consts::SQRT_2;
    if z < 0.0 { 0.5 * erfc(-z) } else { 0.5 * (1.0 + erf(z)) }
}

/// The complementary error function `1 - erf(z)` of `z >= 0`: below 2 from `erf` (its relative error there stays
/// under 1e-13), from 2 on the continued fraction `erfc(z) = e^(-z²)/√π · 1/(z + (1/2)/(z + 1/(z + (3/2)/(z +
/// ...))))` (Abramowitz and Stegun 7.1.14), evaluated from its 200th level up, every term positive.
fn erfc(z: f64) -> f64 {
    if z.is_nan() || z < 2.0 {
        return 1.0 - erf(z);
    }
    let fraction = (1..=200).rev().fold(z, |tail, n| z + (f64::from(n) / 2.0) / tail);
    (-z * z).exp() / std::f64::consts::PI.sqrt() / fraction
}

/// `φ(x)`, the standard normal density.
pub fn normal_density(x: f64) -> f64 {
    (-x * x / 2.0).exp() / (2.0 * std::f64::consts::PI).sqrt()
}

/// The error function, from its series `erf(x) = 2/√π · e^(-x²) · Σ (2x²)^n x / (1·3·5···(2n+1))` (Abramowitz and
/// Stegun 7.1.6): every term positive, so no cancellation, to a few ulps for |x| up to 6; beyond, erf is ±1 in f64.
pub fn erf(x: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    if x.abs() > 6.0 {
        return 1f64.copysign(x);
    }
    let (mut term, mut sum, mut n) = (x, x, 0.0);
    while term.abs() > sum.abs() * 1e-18 {
        n += 1.0;
        term *= 2.0 * x * x / (2.0 * n + 1.0);
        sum += term;
    }
    (2.0 / std::f64::consts::PI.sqrt() * (-x * x).exp() * sum).clamp(-1.0, 1.0)
}

fn holds(op: Compare, x: f64, y: f64) -> bool {
    match op {
        Compare::Eq => x == y,
        Compare::Ne => x != y,
        Compare::Lt => x < y,
        Compare::Le => x <= y,
        Compare::Gt => x > y,
        Compare::Ge => x >= y,
    }
}

pub fn compare(op: Compare, a: &Floats, b: &Floats) -> Outcome<Bools> {
    dtype_mismatch(a.dtype, b.dtype)?;
    let (dims, values) = zip(&a.dims, &b.dims, |i, j| holds(op, a.values[i], b.values[j]))?;
    Ok(Bools { dims, values })
}

pub fn compare_scalar(op: Compare, a: &Floats, scalar: f64) -> Bools {
    let s = round_to(a.dtype, scalar);
    Bools { dims: a.dims.clone(), values: a.values.iter().map(|&x| holds(op, x, s)).collect() }
}

/// `on_true` where the mask holds, else `on_false`, the three broadcast together.
pub fn mask_where(mask: &Bools, on_true: &Floats, on_false: &Floats) -> Outcome<Floats> {
    dtype_mismatch(on_true.dtype, on_false.dtype)?;
    let (picked_dims, picks) = zip(&mask.dims, &on_true.dims, |m, t| (mask.values[m], t))?;
    let (dims, values) = zip(&picked_dims, &on_false.dims, |p, f| {
        let (pick, t) = picks[p];
        if pick { on_true.values[t] } else { on_false.values[f] }
    })?;
    Ok(Floats::new(dims, values, on_true.dtype))
}

/// `value` where the mask holds; the mask broadcasts to the tensor's dims without growing them.
pub fn mask_fill(tensor: &Floats, mask: &Bools, value: f64) -> Outcome<Floats> {
    let value = round_to(tensor.dtype, value);
    let (dims, values) = zip(&tensor.dims, &mask.dims, |t, m| if mask.values[m] { value } else { tensor.values[t] })?;
    if dims != tensor.dims {
        return mismatch(format!("a mask of {:?} grows a tensor of {:?}", mask.dims, tensor.dims));
    }
    Ok(Floats::new(dims, values, tensor.dtype))
}
