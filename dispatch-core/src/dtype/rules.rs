//! What an op asks of its operands' dtypes: the checks that turn a dtype an op cannot take into a typed error, kept
//! apart from the type itself, which the errors name.

use super::DType;
use crate::error::{Error, Result};

impl DType {
    /// A tensor of `actual` dtype is what `op` reads, or an [`Error::UnexpectedDType`].
    pub(crate) fn check_expected(op: &'static str, expected: DType, actual: DType) -> Result<()> {
        if expected == actual { Ok(()) } else { Err(Error::UnexpectedDType { op, expected, actual }) }
    }

    /// Both operands of `op` have one dtype, or an [`Error::DTypeMismatch`] naming both.
    pub(crate) fn check_same(op: &'static str, lhs: DType, rhs: DType) -> Result<()> {
        if lhs == rhs { Ok(()) } else { Err(Error::DTypeMismatch { op, lhs, rhs }) }
    }
}
