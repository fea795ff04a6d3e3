//! Scalar functions that std lacks or that every backend must compute alike: `erf` and what is built on it, and
//! the NaN rules of `maximum`, `minimum` and `clamp`. Each is written once for `f32` and `f64`.

use num_traits::Float;

use crate::error::{Error, Result};

/// `value` as an `f64`; every float this crate computes in converts exactly.
fn wide<T: Float>(value: T) -> f64 {
    value.to_f64().unwrap_or(f64::NAN)
}

/// An `f64` rounded to `T`.
fn narrow<T: Float>(value: f64) -> T {
    T::from(value).unwrap_or_else(T::nan)
}

/// The error function, in `f64` (musl's `erf` by way of `libm`, within an ulp) and rounded to `T`.
pub fn erf<T: Float>(x: T) -> T {
    narrow(libm::erf(wide(x)))
}

/// The exact GELU, `x * Φ(x)`, computed in `f64` and rounded to `T`. `Φ(x)` is `(1 + erf(x / √2)) / 2` for
/// `x >= 0` and `erfc(-x / √2) / 2` left of 0, where `1 + erf` cancels: it was 2.3e-6 off at `x = -7` (24 `f32`
/// ulps), 8% at -8.2, and exactly 0 from -8.38, where the GELU is still a normal `f32`.
pub fn gelu<T: Float>(x: T) -> T {
    let x = wide(x);
    let z = x * std::f64::consts::FRAC_1_SQRT_2;
    let cdf = if z < 0.0 { 0.5 * libm::erfc(-z) } else { 0.5 * (1.0 + libm::erf(z)) };
    narrow(x * cdf)
}

/// `1/√(2π)`, the standard normal density at 0: `φ(x) = NORMAL_DENSITY_AT_0 · exp(-x²/2)`.
pub const NORMAL_DENSITY_AT_0: f64 = std::f64::consts::FRAC_1_SQRT_2 * std::f64::consts::FRAC_2_SQRT_PI * 0.5;

/// `x * sigmoid(x)`.
pub fn silu<T: Float>(x: T) -> T {
    x / (T::one() + (-x).exp())
}

/// The larger of two values; NaN if either is NaN (as candle's CPU kernel gives, and unlike `f32::max`).
pub fn maximum<T: Float>(a: T, b: T) -> T {
    if a.is_nan() || b.is_nan() {
        T::nan()
    } else if a >= b {
        a
    } else {
        b
    }
}

/// The smaller of two values; NaN if either is NaN.
pub fn minimum<T: Float>(a: T, b: T) -> T {
    if a.is_nan() || b.is_nan() {
        T::nan()
    } else if a <= b {
        a
    } else {
        b
    }
}

/// `x` clamped to `[min, max]`; NaN stays NaN.
pub fn clamp<T: Float>(x: T, min: T, max: T) -> T {
    if x.is_nan() { x } else { x.max(min).min(max) }
}

/// `clamp`'s bounds must be numbers with `min <= max`.
pub fn check_clamp_bounds(min: f64, max: f64) -> Result<()> {
    if min.is_nan() {
        Err(Error::invalid_value("clamp", "min", min, "a number"))
    } else if max.is_nan() || min > max {
        Err(Error::invalid_value("clamp", "max", max, "a number no smaller than `min`"))
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn erf_matches_known_values() {
        // erf at these points, to 10 digits (Abramowitz and Stegun, table 7.1).
        for (x, expected) in [
            (0.0_f32, 0.0),
            (0.1, 0.112_462_916_0),
            (0.5, 0.520_499_877_8),
            (1.0, 0.842_700_792_9),
            (2.0, 0.995_322_265_0),
            (3.0, 0.999_977_909_5),
            (-1.0, -0.842_700_792_9),
        ] {
            assert!(
                (f64::from(erf(x)) - expected).abs() < 1e-7 && (erf(f64::from(x)) - expected).abs() < 1e-8,
                "erf({x}) = {}",
                erf(x)
            );
        }
        assert_eq!((erf(5.0_f32), erf(-5.0_f32)), (1.0, -1.0));
        assert!(erf(f32::NAN).is_nan());
    }

    #[test]
    fn gelu_keeps_its_relative_precision_in_the_left_tail() {
        // x Φ(x) to 17 digits (mpmath at 50 digits).
        for (x, expected) in [
            (-9.0, -1.015_729_565_358_456_6e-18),
            (-7.0, -8.958_687_807_200_845e-12),
            (-5.0, -1.433_257_859_395_969_6e-6),
            (-3.0, -0.004_049_694_094_890_283_6),
            (-1.0, -0.158_655_253_931_457_05),
            (-0.5, -0.154_268_769_362_993_45),
            (0.5, 0.345_731_230_637_006_55),
            (2.0, 1.954_499_736_103_641_6),
        ] {
            let (in_f64, in_f32): (f64, f32) = (gelu(x), gelu(x as f32));
            assert!(((in_f64 - expected) / expected).abs() < 1e-14, "gelu({x}) = {in_f64} in f64");
            assert_eq!(in_f32, expected as f32, "gelu({x}) in f32");
        }
        assert_eq!(gelu(f32::INFINITY), f32::INFINITY);
        assert!(gelu(f64::NAN).is_nan());
    }

    #[test]
    fn maximum_and_minimum_propagate_nan() {
        assert!(maximum(f32::NAN, 1.0).is_nan() && maximum(1.0, f64::NAN).is_nan() && maximum(1.0, f32::NAN).is_nan());
        assert!(minimum(f32::NAN, 1.0).is_nan());
        assert_eq!((maximum(-0.5, 2.0), minimum(-0.5, 2.0)), (2.0, -0.5));
    }
}
