//! Seeded random numbers generated on the host, so the same seed gives the same tensor on every backend (candle's
//! CPU generator cannot be seeded).

use crate::dtype::DType;
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

/// The element a sample of `dtype` is handed back in: `f32` for `F32` (half the staging memory), else `f64`.
pub(crate) trait Sample: Copy {
    /// `value`, a value of the dtype, as this element (exact).
    fn of(value: f64) -> Self;
}

impl Sample for f32 {
    fn of(value: f64) -> f32 {
        value as f32
    }
}

impl Sample for f64 {
    fn of(value: f64) -> f64 {
        value
    }
}

/// Uniform samples in `[low, high)`, each rounded to `dtype` (and kept below `high`, which rounding could reach).
pub(crate) fn uniform<T: Sample>(
    shape: &Shape,
    (low, high): (f64, f64),
    seed: u64,
    dtype: DType,
    op: &'static str,
) -> Result<Vec<T>> {
    shape.check_tensor_shape(op)?;
    if !low.is_finite() {
        return Err(Error::invalid_value(op, "low", low, "finite"));
    }
    let below_high = dtype.largest_below(high);
    if !(high.is_finite() && low < high && dtype.round(low) <= below_high) {
        let expected = "finite and above `low`, with a value of the dtype in [low, high)";
        return Err(Error::invalid_value(op, "high", high, expected));
    }
    let mut rng = SplitMix64(seed);
    let span = high - low;
    let mut values = memory::try_vec(op, shape.num_elements())?;
    values.extend((0..shape.num_elements()).map(|_| T::of(dtype.round(low + span * rng.next_unit()).min(below_high))));
    Ok(values)
}

/// Normal samples, each rounded to `dtype`.
pub(crate) fn normal<T: Sample>(
    shape: &Shape,
    (mean, std): (f64, f64),
    seed: u64,
    dtype: DType,
    op: &'static str,
) -> Result<Vec<T>> {
    shape.check_tensor_shape(op)?;
    if !mean.is_finite() {
        return Err(Error::invalid_value(op, "mean", mean, "finite"));
    }
    if !(std.is_finite() && std >= 0.0) {
        return Err(Error::invalid_value(op, "std", std, "finite and >= 0"));
    }
    let mut rng = SplitMix64(seed);
    let count = shape.num_elements();
    let mut values = memory::try_vec(op, count)?;
    while values.len() < count {
        // Box-Muller: two uniforms give two independent standard normals. `1 - u` keeps the log argument in (0, 1].
        let radius = (-2.0 * (1.0 - rng.next_unit()).ln()).sqrt();
        let angle = std::f64::consts::TAU * rng.next_unit();
        for z in [radius * angle.cos(), radius * angle.sin()] {
            if values.len() < count {
                values.push(T::of(dtype.round(mean + std * z)));
            }
        }
    }
    Ok(values)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::RankRule;

    #[test]
    fn uniform_is_seeded_and_in_range() {
        let shape = Shape::new([1000]);
        let a: Vec<f64> = uniform(&shape, (-2.0, 3.0), 7, DType::F32, "t").unwrap();
        assert_eq!(a, uniform::<f64>(&shape, (-2.0, 3.0), 7, DType::F32, "t").unwrap());
        assert_ne!(a, uniform::<f64>(&shape, (-2.0, 3.0), 8, DType::F32, "t").unwrap());
        assert!(a.iter().all(|&x| (-2.0..3.0).contains(&x) && x == DType::F32.round(x)));
        let mean = a.iter().sum::<f64>() / 1000.0;
        assert!((mean - 0.5).abs() < 0.2, "mean {mean}");
    }

    #[test]
    fn samples_are_values_of_their_dtype_and_keep_below_high() {
        let shape = Shape::new([2000]);
        for dtype in DType::ALL {
            let samples: Vec<f64> = uniform(&shape, (0.0, 1.0), 5, dtype, "t").unwrap();
            assert!(samples.iter().all(|&x| (0.0..1.0).contains(&x) && x == dtype.round(x)), "{dtype}");
            let normals: Vec<f64> = normal(&shape, (0.1, 1.0), 5, dtype, "t").unwrap();
            assert!(normals.iter().all(|&x| x == dtype.round(x)), "{dtype}");
        }
        // bf16 holds 8 significant bits: most of [1, 1 + 2^-7) rounds up to its upper end, which stays out.
        let narrow: Vec<f64> = uniform(&shape, (1.0, 1.0078125), 3, DType::BF16, "t").unwrap();
        assert!(narrow.iter().all(|&x| x == 1.0), "{narrow:?}");
        // F64 keeps what f32 would round away.
        let fine: Vec<f64> = uniform(&Shape::new([100]), (1.0, 1.0 + 1e-12), 3, DType::F64, "t").unwrap();
        assert!(fine.iter().any(|&x| x > 1.0));
    }

    #[test]
    fn normal_has_the_asked_moments() {
        let data: Vec<f64> = normal(&Shape::new([20_000]), (1.5, 0.5), 3, DType::F32, "t").unwrap();
        let mean = data.iter().sum::<f64>() / data.len() as f64;
        let var = data.iter().map(|&x| (x - mean).powi(2)).sum::<f64>() / data.len() as f64;
        assert!((mean - 1.5).abs() < 0.02, "mean {mean}");
        assert!((var.sqrt() - 0.5).abs() < 0.02, "std {}", var.sqrt());
    }

    #[test]
    fn a_valid_shape_too_large_for_memory_is_an_error() {
        let huge = Shape::new([1 << 60]);
        assert!(huge.check_tensor_shape("t").is_ok());
        let results =
            [uniform::<f32>(&huge, (0.0, 1.0), 0, DType::F32, "t"), normal(&huge, (0.0, 1.0), 0, DType::F32, "t")];
        for result in results {
            assert!(matches!(result, Err(Error::OutOfMemory { op: "t", bytes }) if bytes == 1 << 62), "{result:?}");
        }
    }

    #[test]
    fn bad_arguments_are_errors() {
        let shape = Shape::new([3]);
        let refused = |result: Result<Vec<f64>>, parameter: &str| matches!(result, Err(Error::InvalidValue { op: "t", parameter: named, .. }) if named == parameter);
        assert!(refused(uniform(&shape, (1.0, 1.0), 0, DType::F32, "t"), "high"));
        assert!(refused(uniform(&shape, (f64::NAN, 1.0), 0, DType::F32, "t"), "low"));
        assert!(refused(uniform(&shape, (0.0, f64::INFINITY), 0, DType::F32, "t"), "high"));
        // Every sample would round to 1 + 2^-10, which is `high` itself, and the f16 below it is under `low`.
        let (low, high) = (1.0 + 2f64.powi(-11) + 2f64.powi(-13), 1.0 + 2f64.powi(-10));
        assert!(refused(uniform(&shape, (low, high), 0, DType::F16, "t"), "high"));
        assert!(refused(normal(&shape, (0.0, -1.0), 0, DType::F32, "t"), "std"));
        assert!(refused(normal(&shape, (f64::NAN, 1.0), 0, DType::F32, "t"), "mean"));
        let scalar = normal::<f64>(&Shape::new(Vec::new()), (0.0, 1.0), 0, DType::F32, "t");
        assert!(matches!(scalar, Err(Error::UnexpectedRank { expected: RankRule::AtLeast(1), .. })));
    }
}
