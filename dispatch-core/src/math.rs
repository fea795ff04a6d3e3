//! Scalar functions that std lacks or that every backend must compute alike: `erf` and what is built on it, and
//! the NaN rules of `maximum`, `minimum` and `clamp`.

use crate::error::{Error, Result};

/// The error function, to within an ulp of `f32`: its Taylor series in `f64` below 4 (where `erf` rounds to 1 in
/// `f32` above), which converges at every such `x` with ten digits to spare after cancellation.
pub fn erf(x: f32) -> f32 {
    let x = f64::from(x);
    if x.is_nan() {
        return f32::NAN;
    }
    if x.abs() >= 4.0 {
        return x.signum() as f32;
    }
    // erf(x) = 2/sqrt(pi) * sum_n (-1)^n x^(2n+1) / (n! (2n+1))
    let (mut term, mut sum, square) = (x, x, x * x);
    for n in 1..200 {
        term *= -square / n as f64;
        let next = term / (2 * n + 1) as f64;
        sum += next;
        if next.abs() < 1e-17 * sum.abs() {
            break;
        }
    }
    (sum * std::f64::consts::FRAC_2_SQRT_PI) as f32
}

/// The exact GELU, `x * Φ(x)` with `Φ(x) = (1 + erf(x / sqrt 2)) / 2`.
pub fn gelu(x: f32) -> f32 {
    let cdf = 0.5 * (1.0 + f64::from(erf((f64::from(x) * std::f64::consts::FRAC_1_SQRT_2) as f32)));
    (f64::from(x) * cdf) as f32
}

/// `x * sigmoid(x)`.
pub fn silu(x: f32) -> f32 {
    x / (1.0 + (-x).exp())
}

/// The larger of two values; NaN if either is NaN (as candle's CPU kernel gives, and unlike `f32::max`).
pub fn maximum(a: f32, b: f32) -> f32 {
    if a.is_nan() || b.is_nan() {
        f32::NAN
    } else if a >= b {
        a
    } else {
        b
    }
}

/// The smaller of two values; NaN if either is NaN.
pub fn minimum(a: f32, b: f32) -> f32 {
    if a.is_nan() || b.is_nan() {
        f32::NAN
    } else if a <= b {
        a
    } else {
        b
    }
}

/// `x` clamped to `[min, max]`; NaN stays NaN.
pub fn clamp(x: f32, min: f32, max: f32) -> f32 {
    if x.is_nan() { x } else { x.max(min).min(max) }
}

/// `clamp`'s bounds must be numbers with `min <= max`.
pub fn check_clamp_bounds(min: f32, max: f32) -> Result<()> {
    if min <= max {
        Ok(())
    } else {
        Err(Error::invalid("clamp", format!("needs min <= max (and neither NaN), got min {min}, max {max}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn erf_matches_known_values() {
        // erf at these points, to 10 digits (Abramowitz and Stegun, table 7.1).
        for (x, expected) in [
            (0.0, 0.0),
            (0.1, 0.112_462_916_0),
            (0.5, 0.520_499_877_8),
            (1.0, 0.842_700_792_9),
            (2.0, 0.995_322_265_0),
            (3.0, 0.999_977_909_5),
            (-1.0, -0.842_700_792_9),
        ] {
            assert!((f64::from(erf(x)) - expected).abs() < 1e-7, "erf({x}) = {}", erf(x));
        }
        assert_eq!((erf(5.0), erf(-5.0)), (1.0, -1.0));
        assert!(erf(f32::NAN).is_nan());
    }

    #[test]
    fn maximum_and_minimum_propagate_nan() {
        assert!(maximum(f32::NAN, 1.0).is_nan() && maximum(1.0, f32::NAN).is_nan());
        assert!(minimum(f32::NAN, 1.0).is_nan());
        assert_eq!((maximum(-0.5, 2.0), minimum(-0.5, 2.0)), (2.0, -0.5));
    }
}
