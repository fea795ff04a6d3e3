//! Element-wise float ops, comparisons and masks.

use super::zip;
use crate::support::program::{Binary, Compare, Scalar, Unary};
use crate::support::values::{Bools, Floats, Outcome, dtype_mismatch, invalid, mismatch, round_to};
use dispatch_core::DType;
use dispatch_core::backend::AdamStep;

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

/// The scalars of one Adam step as every backend takes them, each rounded to the dtype as a scalar operand is.
pub struct AdamScalars {
    /// AdamW's `1 - lr wd`, and Adam's `wd`: each where it applies.
    pub decay: Option<f64>,
    pub penalty: Option<f64>,
    pub first: (f64, f64),
    pub second: (f64, f64),
    pub correction: f64,
    pub eps: f64,
    pub step_size: f64,
}

/// One column of an Adam step, exact: the parameter after AdamW's decay, the gradient after Adam's penalty, the
/// new moments, the denominator and the step taken.
pub struct AdamColumn {
    pub decayed: f64,
    pub gradient: f64,
    pub first: f64,
    pub second: f64,
    pub denominator: f64,
    pub step: f64,
}

impl AdamScalars {
    /// Refuses options out of range, as every backend must (NaN is in no range).
    pub fn of(options: &AdamStep, dtype: DType) -> Outcome<Self> {
        let (beta1, beta2) = options.betas;
        let at_least_0 = [options.lr, options.eps, options.weight_decay].iter().all(|&x| x >= 0.0);
        let rates = [beta1, beta2].iter().all(|beta| (0.0..1.0).contains(beta));
        if !at_least_0 || !rates || options.step == 0 {
            return invalid(format!("adam_step with {options:?}"));
        }
        let s = |x: f64| round_to(dtype, x);
        let t = i32::try_from(options.step).unwrap_or(i32::MAX);
        let decays = options.weight_decay != 0.0;
        Ok(Self {
            decay: (decays && options.decoupled).then(|| s(1.0 - options.lr * options.weight_decay)),
            penalty: (decays && !options.decoupled).then(|| s(options.weight_decay)),
            first: (s(beta1), s(1.0 - beta1)),
            second: (s(beta2), s(1.0 - beta2)),
            correction: s(1.0 / (1.0 - beta2.powi(t))),
            eps: s(options.eps),
            step_size: s(options.lr / (1.0 - beta1.powi(t))),
        })
    }

    pub fn column(&self, p: f64, g: f64, m: f64, v: f64) -> AdamColumn {
        let decayed = self.decay.map_or(p, |decay| p * decay);
        let gradient = self.penalty.map_or(g, |penalty| g + decayed * penalty);
        let first = self.first.0 * m + self.first.1 * gradient;
        let second = self.second.0 * v + self.second.1 * gradient * gradient;
        let denominator = (second * self.correction).sqrt() + self.eps;
        let step = first * self.step_size / denominator;
        AdamColumn { decayed, gradient, first, second, denominator, step }
    }
}

/// The rows `[parameter, first moment, second moment]` of one Adam step of `parameter`.
pub fn adam_step(parameter: &Floats, gradient: &Floats, moments: &Floats, options: &AdamStep) -> Outcome<Floats> {
    dtype_mismatch(parameter.dtype, gradient.dtype)?;
    dtype_mismatch(parameter.dtype, moments.dtype)?;
    if gradient.dims != parameter.dims {
        return mismatch(format!("adam_step of {:?} with a gradient of {:?}", parameter.dims, gradient.dims));
    }
    let rows = [&[2], &parameter.dims[..]].concat();
    if moments.dims != rows {
        return invalid(format!("adam_step of {:?} with moments of {:?}", parameter.dims, moments.dims));
    }
    let scalars = AdamScalars::of(options, parameter.dtype)?;
    let n = parameter.values.len();
    let columns: Vec<AdamColumn> = (0..n)
        .map(|i| scalars.column(parameter.values[i], gradient.values[i], moments.values[i], moments.values[n + i]))
        .collect();
    let values = [
        columns.iter().map(|c| c.decayed - c.step).collect::<Vec<_>>(),
        columns.iter().map(|c| c.first).collect(),
        columns.iter().map(|c| c.second).collect(),
    ]
    .concat();
    Ok(Floats::new([&[3], &parameter.dims[..]].concat(), values, parameter.dtype))
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
