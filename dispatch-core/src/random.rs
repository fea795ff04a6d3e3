//! Seeded random numbers generated on the host, so the same seed gives the same tensor on every backend (candle's
//! CPU generator cannot be seeded).

use crate::error::{Error, Result};
use crate::memory;
use crate::shape::Shape;

/// SplitMix64: tiny, fast, and statistically sound for initialising weights.
struct SplitMix64(u64);

impl SplitMix64 {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `[0, 1)` with 53 bits of precision.
    fn next_unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
}

pub(crate) fn uniform(shape: &Shape, low: f32, high: f32, seed: u64, op: &'static str) -> Result<Vec<f32>> {
    shape.check_tensor_shape(op)?;
    if !(low.is_finite() && high.is_finite() && low < high) {
        return Err(Error::invalid(op, format!("needs finite bounds with low < high, got [{low}, {high})")));
    }
    let mut rng = SplitMix64(seed);
    let (low, span) = (f64::from(low), f64::from(high) - f64::from(low));
    let mut values = memory::try_vec(op, shape.num_elements())?;
    // Rounding to f32 can land on `high` itself; keep the interval half-open.
    values.extend((0..shape.num_elements()).map(|_| ((low + span * rng.next_unit()) as f32).min(high.next_down())));
    Ok(values)
}

pub(crate) fn normal(shape: &Shape, mean: f32, std: f32, seed: u64, op: &'static str) -> Result<Vec<f32>> {
    shape.check_tensor_shape(op)?;
    if !(mean.is_finite() && std.is_finite() && std >= 0.0) {
        return Err(Error::invalid(op, format!("needs a finite mean and a finite std >= 0, got {mean} and {std}")));
    }
    let mut rng = SplitMix64(seed);
    let count = shape.num_elements();
    let mut values = memory::try_vec(op, count)?;
    let (mean, std) = (f64::from(mean), f64::from(std));
    while values.len() < count {
        // Box-Muller: two uniforms give two independent standard normals. `1 - u` keeps the log argument in (0, 1].
        let radius = (-2.0 * (1.0 - rng.next_unit()).ln()).sqrt();
        let angle = std::f64::consts::TAU * rng.next_unit();
        for z in [radius * angle.cos(), radius * angle.sin()] {
            if values.len() < count {
                values.push((mean + std * z) as f32);
            }
        }
    }
    Ok(values)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uniform_is_seeded_and_in_range() {
        let shape = Shape::new([1000]);
        let a = uniform(&shape, -2.0, 3.0, 7, "t").unwrap();
        assert_eq!(a, uniform(&shape, -2.0, 3.0, 7, "t").unwrap());
        assert_ne!(a, uniform(&shape, -2.0, 3.0, 8, "t").unwrap());
        assert!(a.iter().all(|&x| (-2.0..3.0).contains(&x)));
        let mean = a.iter().sum::<f32>() / 1000.0;
        assert!((mean - 0.5).abs() < 0.2, "mean {mean}");
    }

    #[test]
    fn normal_has_the_asked_moments() {
        let data = normal(&Shape::new([20_000]), 1.5, 0.5, 3, "t").unwrap();
        let mean = data.iter().map(|&x| f64::from(x)).sum::<f64>() / data.len() as f64;
        let var = data.iter().map(|&x| (f64::from(x) - mean).powi(2)).sum::<f64>() / data.len() as f64;
        assert!((mean - 1.5).abs() < 0.02, "mean {mean}");
        assert!((var.sqrt() - 0.5).abs() < 0.02, "std {}", var.sqrt());
    }

    #[test]
    fn a_valid_shape_too_large_for_memory_is_an_error() {
        let huge = Shape::new([1 << 60]);
        assert!(huge.check_tensor_shape("t").is_ok());
        for result in [uniform(&huge, 0.0, 1.0, 0, "t"), normal(&huge, 0.0, 1.0, 0, "t")] {
            assert!(matches!(result, Err(Error::OutOfMemory { op: "t", bytes }) if bytes == 1 << 62), "{result:?}");
        }
    }

    #[test]
    fn bad_arguments_are_errors() {
        let shape = Shape::new([3]);
        assert!(uniform(&shape, 1.0, 1.0, 0, "t").is_err());
        assert!(uniform(&shape, f32::NAN, 1.0, 0, "t").is_err());
        assert!(normal(&shape, 0.0, -1.0, 0, "t").is_err());
        assert!(normal(&Shape::new(Vec::new()), 0.0, 1.0, 0, "t").is_err());
    }
}
