//! The element types a float tensor can hold, carried at run time on the tensor as candle carries them.

use std::fmt;

use crate::error::{Error, Result};

/// The element type of a float tensor.
///
/// candle and ndarray store all four (a third-party backend may refuse a dtype with an `Err`). candle computes
/// each natively. ndarray computes `F32` and `F64` natively and
/// `F16`/`BF16` in `f32`, rounding every result to the tensor's dtype, so the values match a native half-precision
/// kernel up to that kernel's own rounding of intermediate steps. Ops never promote: an op on two float tensors
/// of different dtypes is an [`Error::DTypeMismatch`]; [`cast`](crate::Backend::cast) converts explicitly.
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
            DType::F16 => half::f16::from_f64(value).to_f64(),
            DType::BF16 => half::bf16::from_f64(value).to_f64(),
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

/// Both operands of `op` have one dtype, or an [`Error::DTypeMismatch`] naming both.
pub(crate) fn check_same(op: &'static str, lhs: DType, rhs: DType) -> Result<()> {
    if lhs == rhs { Ok(()) } else { Err(Error::DTypeMismatch { op, lhs, rhs }) }
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
    fn a_mismatch_names_both_dtypes() {
        let error = check_same("add", DType::F32, DType::F64).unwrap_err();
        assert_eq!(error.to_string(), "`add` mixes dtypes `f32` and `f64`; cast one with `cast` first");
    }
}
