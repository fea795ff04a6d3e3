//! The element types a float tensor can hold, carried at run time on the tensor as candle carries them.

mod rules;

use std::fmt;

/// The element type of a float tensor.
///
/// candle and ndarray store all four (a third-party backend may refuse a dtype with an `Err`). candle computes
/// each natively. ndarray computes `F32` and `F64` natively and
/// `F16`/`BF16` in `f32`, rounding every result to the tensor's dtype, so the values match a native half-precision
/// kernel up to that kernel's own rounding of intermediate steps. Ops never promote: an op on two float tensors
/// of different dtypes is an [`Error::DTypeMismatch`](crate::error::Error::DTypeMismatch); [`cast`](crate::Backend::cast) converts explicitly.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum DType {
    /// IEEE 754 single precision, the default of every constructor that takes `f32` data.
    #[default]
    F32,
    /// IEEE 754 double precision.
    F64,
    /// IEEE 754 half precision (5 exponent bits, 10 mantissa bits).
    F16,
    /// bfloat16 (8 exponent bits, 7 mantissa bits): `f32`'s range at lower precision.
    BF16,
}

impl DType {
    /// Every dtype, in the order of the enum.
    pub const ALL: [DType; 4] = [DType::F32, DType::F64, DType::F16, DType::BF16];

    /// The lowercase name, as candle and numpy spell it (`f32`, `bf16`).
    pub fn name(self) -> &'static str {
        match self {
            DType::F32 => "f32",
            DType::F64 => "f64",
            DType::F16 => "f16",
            DType::BF16 => "bf16",
        }
    }

    /// The bytes one element takes.
    pub fn size_in_bytes(self) -> usize {
        match self {
            DType::F32 => 4,
            DType::F64 => 8,
            DType::F16 | DType::BF16 => 2,
        }
    }

    /// `value` rounded to the nearest value of this dtype (ties to even), as an `f64`: what a tensor of this
    /// dtype stores for it.
    pub fn round(self, value: f64) -> f64 {
        match self {
            DType::F32 => f64::from(value as f32),
            DType::F64 => value,
            DType::F16 => f64::from(f16_of(value)),
            DType::BF16 => f64::from(bf16_of(value)),
        }
    }

    /// The largest value of this dtype below `bound` (a finite number).
    pub(crate) fn largest_below(self, bound: f64) -> f64 {
        let rounded = self.round(bound);
        if rounded < bound {
            return rounded;
        }
        // The bit patterns of a half type order its values like sign and magnitude: one step toward -infinity.
        let step_down = |bits: u16| match (bits & 0x7fff == 0, bits & 0x8000 == 0) {
            (true, _) => 0x8001,
            (false, true) => bits - 1,
            (false, false) => bits + 1,
        };
        match self {
            DType::F32 => f64::from((rounded as f32).next_down()),
            DType::F64 => rounded.next_down(),
            DType::F16 => f64::from(half::f16::from_bits(step_down(f16_of(rounded).to_bits()))),
            DType::BF16 => f64::from(half::bf16::from_bits(step_down(bf16_of(rounded).to_bits()))),
        }
    }

    /// `value` rounded to this dtype, computed on from an `f32` (how ndarray keeps half-precision tensors).
    #[cfg_attr(not(feature = "ndarray"), allow(dead_code))]
    pub(crate) fn round_f32(self, value: f32) -> f32 {
        match self {
            DType::F32 | DType::F64 => value,
            DType::F16 => half::f16::from_f32(value).to_f32(),
            DType::BF16 => half::bf16::from_f32(value).to_f32(),
        }
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// `value` rounded once to the nearest `f16` (ties to even). `half`'s own `f16::from_f64` goes through `f32`, which
/// rounds twice: 2^-25 + 2^-60 would become 0 instead of 2^-24.
pub(crate) fn f16_of(value: f64) -> half::f16 {
    half::f16::from_f32(f32_rounded_to_odd(value))
}

/// `value` rounded once to the nearest `bf16` (ties to even); `half`'s `bf16::from_f64` rounds twice (1 + 2^-8 +
/// 2^-40 would become 1.0 instead of 1.0078125).
pub(crate) fn bf16_of(value: f64) -> half::bf16 {
    half::bf16::from_f32(f32_rounded_to_odd(value))
}

/// `value` as an `f32`, rounded to odd: truncated toward zero, with the last bit set when anything was dropped.
/// Rounding that once more to a format with at least two fewer significand bits (`f16`, `bf16`) gives the same
/// result as rounding `value` to it directly (Boldo and Melquiond), because the set last bit keeps "exactly half
/// way" apart from "just above or below half way".
fn f32_rounded_to_odd(value: f64) -> f32 {
    let nearest = value as f32;
    if value.is_nan() || f64::from(nearest) == value {
        return nearest;
    }
    // Step back to the neighbour on the zero side when rounding went away from zero (to infinity included).
    let truncated =
        if f64::from(nearest).abs() > value.abs() { f32::from_bits(nearest.to_bits() - 1) } else { nearest };
    f32::from_bits(truncated.to_bits() | 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rounding_keeps_what_each_dtype_can_hold() {
        let third = 1.0 / 3.0;
        assert_eq!(DType::F64.round(third), third);
        assert_eq!(DType::F32.round(third), f64::from(1.0_f32 / 3.0));
        // f16 has 10 mantissa bits: 1/3 is 0.333251953125; bf16 has 7: 0.333984375.
        assert_eq!(DType::F16.round(third), 0.333251953125);
        assert_eq!(DType::BF16.round(third), 0.333984375);
        assert_eq!(DType::F16.round(1e6), f64::INFINITY);
        assert_eq!(DType::BF16.round(1e6), 999424.0);
    }

    #[test]
    fn half_precision_rounds_an_f64_once() {
        let two = |exponent: i32| 2f64.powi(exponent);
        // Through f32 these round twice: first to the half-way point, then to even.
        assert_eq!(DType::BF16.round(1.0 + two(-8) + two(-40)), 1.0078125);
        assert_eq!(DType::F16.round(two(-25) + two(-60)), two(-24));
        assert_eq!(DType::F16.round(1.0 + two(-11) + two(-50)), 1.0 + two(-10));
        // Exactly half way still goes to even, below and above it to the nearest.
        assert_eq!(DType::BF16.round(1.0 + two(-8)), 1.0);
        assert_eq!(DType::BF16.round(1.0 + two(-8) - two(-40)), 1.0);
        assert_eq!(DType::BF16.round(-(1.0 + two(-8) + two(-40))), -1.0078125);
        assert_eq!(DType::F16.round(two(-25)), 0.0);
        // Beyond the largest finite value, to infinity; the largest f32 exceeds every bf16 but infinity's half way.
        assert_eq!(DType::F16.round(65520.0), f64::INFINITY);
        assert_eq!(DType::F16.round(65519.99), 65504.0);
        assert_eq!(DType::BF16.round(1e300), f64::INFINITY);
        assert_eq!(DType::BF16.round(-1e300), f64::NEG_INFINITY);
        assert_eq!(DType::BF16.round(f64::from(f32::MAX)), f64::INFINITY);
        assert!(DType::BF16.round(f64::NAN).is_nan());
        // The smallest subnormals of each, and values under half of them.
        assert_eq!(DType::BF16.round(two(-133)), two(-133));
        assert_eq!(DType::BF16.round(two(-134) + two(-160)), two(-133));
        assert_eq!(DType::BF16.round(two(-134)), 0.0);
        assert_eq!(DType::BF16.round(1e-300), 0.0);
    }

    #[test]
    fn half_precision_rounding_agrees_with_the_nearest_value_found_by_search() {
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        // Exponents over each format's subnormal and normal range, below its largest finite value.
        for (dtype, exponents) in [(DType::F16, -27..15), (DType::BF16, -136..127)] {
            for _ in 0..20_000 {
                let exponent = exponents.start + (next() % (exponents.end - exponents.start) as u64) as i32;
                let significand = 1.0 + (next() >> 12) as f64 / (1u64 << 52) as f64;
                let value = significand * 2f64.powi(exponent);
                assert_eq!(dtype.round(value), nearest_by_search(dtype, value), "{value:e} to {dtype}");
                assert_eq!(dtype.round(-value), -nearest_by_search(dtype, value), "{:e} to {dtype}", -value);
            }
        }
    }

    /// The nearest value of `dtype` to a positive `value` (ties to the even bit pattern), by binary search over the
    /// bit patterns of the positive finite values, which increase with the value they hold.
    fn nearest_by_search(dtype: DType, value: f64) -> f64 {
        let (largest, of_bits): (u16, fn(u16) -> f64) = match dtype {
            DType::F16 => (0x7bff, |bits| f64::from(half::f16::from_bits(bits))),
            _ => (0x7f7f, |bits| f64::from(half::bf16::from_bits(bits))),
        };
        let (mut low, mut high) = (0u16, largest);
        while high - low > 1 {
            let middle = low + (high - low) / 2;
            if of_bits(middle) <= value { low = middle } else { high = middle }
        }
        let (below, above) = (of_bits(low), of_bits(high));
        match (value - below).partial_cmp(&(above - value)) {
            Some(std::cmp::Ordering::Less) => below,
            Some(std::cmp::Ordering::Greater) => above,
            _ if low % 2 == 0 => below,
            _ => above,
        }
    }
}
