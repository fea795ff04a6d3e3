//! Checks of a kernel's float operands that candle would otherwise report as a string: the dtypes dispatch models,
//! one device, one dtype.

use candle_core::Tensor;

use super::device::CandleDevice;
use super::error::float_dtype;
use crate::dtype::DType;
use crate::error::{Error, Result};

/// Checks that every tensor is a float tensor dispatch models, lives on the device of the first and has its dtype,
/// which candle would otherwise report as a string: an [`Error::UnsupportedDType`], [`Error::DeviceMismatch`] or
/// [`Error::DTypeMismatch`].
pub(super) fn check_operands<'a>(op: &'static str, tensors: impl IntoIterator<Item = &'a Tensor>) -> Result<()> {
    let mut tensors = tensors.into_iter();
    let Some(first) = tensors.next() else { return Ok(()) };
    let first_dtype = float_dtype(op, first)?;
    for other in tensors {
        check_same_device(op, first, other)?;
        DType::check_same(op, first_dtype, float_dtype(op, other)?)?;
    }
    Ok(())
}

/// A [`Error::DeviceMismatch`] unless `other` lives on `first`'s device (for operands of different kinds, whose
/// dtypes differ by design).
pub(super) fn check_same_device(op: &'static str, first: &Tensor, other: &Tensor) -> Result<()> {
    if other.device().same_device(first.device()) {
        return Ok(());
    }
    Err(Error::device_mismatch(
        op,
        CandleDevice::from_candle(first.device().clone()),
        CandleDevice::from_candle(other.device().clone()),
    ))
}

/// Checks that every tensor holds `kind`, the dtype this backend gives int (`I64`) or bool (`U8`) tensors, and lives
/// on the first one's device: a tensor of another dtype (handed in through `from_primitive`) is an
/// [`Error::UnsupportedDType`], one elsewhere an [`Error::DeviceMismatch`].
pub(super) fn check_kind<'a>(
    op: &'static str,
    kind: candle_core::DType,
    tensors: impl IntoIterator<Item = &'a Tensor>,
) -> Result<()> {
    let mut tensors = tensors.into_iter();
    let Some(first) = tensors.next() else { return Ok(()) };
    for tensor in std::iter::once(first).chain(tensors) {
        if tensor.dtype() != kind {
            return Err(Error::UnsupportedDType { op, backend: "candle", dtype: tensor.dtype().as_str() });
        }
        check_same_device(op, first, tensor)?;
    }
    Ok(())
}
