//! How far a backend's value may be from the exact one.

use dispatch_core::DType;

/// Relative tolerance (absolute below magnitude 1) between a backend's value and the exact value (the reference
/// computing in `F64` on the same operands) rounded to the output's dtype: a few roundings of the dtype, at least
/// twice the largest deviation measured on candle, ndarray and the Autodiff of each (in brackets). The half
/// dtypes deviate most where a kernel rounds or accumulates in the dtype: candle's sums and convolutions, and the
/// transposed convolution, which both compose of several ops that each round (a value of 0.67 that cancels
/// larger terms comes out 6 BF16 roundings away).
pub fn tolerance(dtype: DType) -> f64 {
    match dtype {
        DType::F64 => 1e-14, // 1.1e-16, candle's `sum`
        DType::F32 => 1e-6,  // 3.7e-7, candle's `sum`
        DType::F16 => 4e-3,  // 1.5e-3, candle's `conv_transpose2d`
        DType::BF16 => 5e-2, // 2.3e-2, `conv_transpose2d`
    }
}

/// How far apart `a` and `b` are, relative to the larger magnitude (absolutely below 1): 0 for equal values, NaN
/// and infinities included, and infinite where one is NaN and the other not.
pub fn deviation(a: f64, b: f64) -> f64 {
    if a == b || (a.is_nan() && b.is_nan()) {
        return 0.0;
    }
    let deviation = (a - b).abs() / a.abs().max(b.abs()).max(1.0);
    if deviation.is_nan() { f64::INFINITY } else { deviation }
}
