//! Index tensors made and checked on the device: counting sequences, constants, and the range check of int
//! tensors of indices. candle's own `arange` fills a host buffer and uploads it, and a scalar operand of its ops is
//! uploaded as a one-element tensor; these are built by candle's fill kernel instead, so nothing crosses to the
//! device. The one thing read back is a verdict: a check that input is valid reads one value, an error a few more.
//! On candle's CPU device the values already sit in host memory, so the checks read them in place instead: no copy,
//! no verdict.

use candle_core::{CpuStorage, DType, Device, Storage, Tensor, WithDType};

use super::error::OrBackend;
use super::memory::check_output;
use crate::error::{Error, Result};
use crate::transfers::record_host_transfer;

/// A one-element tensor holding `value`, made by candle's fill kernel; it broadcasts over any shape.
pub(super) fn constant<T: WithDType>(value: T, device: &Device) -> candle_core::Result<Tensor> {
    Tensor::full(value, 1, device)
}

/// A one-element tensor of `tensor`'s dtype holding `value`, which must be exact in every dtype (0, 1, NaN, an
/// infinity): candle converts it from `f64`.
pub(super) fn float_constant(value: f64, tensor: &Tensor) -> candle_core::Result<Tensor> {
    constant(value, tensor.device())?.to_dtype(tensor.dtype())
}

/// `0, 1, ..., len - 1` as an `I64` tensor: a one-element tensor of 0, doubled (with its length added to the new
/// half) until it is long enough, so `log2(len)` small kernels and no host values.
pub(super) fn counting(op: &'static str, len: usize, device: &Device) -> Result<Tensor> {
    check_output(op, device, len, DType::I64)?;
    if len == 0 {
        return Tensor::zeros(0, DType::I64, device).or_backend(op);
    }
    let counted = || {
        let mut values = Tensor::zeros(1, DType::I64, device)?;
        let mut have = 1;
        while have < len {
            let more = have.min(len - have);
            // `have` is below `len`, which fits in memory, so in `i64`.
            let next = values.narrow(0, 0, more)?.broadcast_add(&constant(have as i64, device)?)?;
            values = Tensor::cat(&[&values, &next], 0)?;
            have += more;
        }
        Ok(values)
    };
    counted().or_backend(op)
}

/// The value of a one-element tensor, read to the host (one counted copy).
pub(super) fn read_value<T: WithDType>(op: &'static str, tensor: &Tensor) -> Result<T> {
    let value = tensor.reshape(()).and_then(|scalar| scalar.to_scalar::<T>()).or_backend(op)?;
    record_host_transfer(1);
    Ok(value)
}

/// Whether any element of a `U8` tensor of flags is set: one reduction on the device, one value read.
pub(super) fn any_set(op: &'static str, flags: &Tensor) -> Result<bool> {
    if flags.elem_count() == 0 {
        return Ok(false);
    }
    let any = flags.flatten_all().and_then(|flat| flat.max(0)).or_backend(op)?;
    Ok(read_value::<u8>(op, &any)? != 0)
}

/// The row-major position of the first set element of a `U8` tensor of flags, one of which is set: the smallest
/// position that holds a flag, found on the device, one value read.
pub(super) fn first_set(op: &'static str, flags: &Tensor) -> Result<usize> {
    let len = flags.elem_count();
    let positions = counting(op, len, flags.device())?;
    let first = (|| {
        let beyond = constant(len as i64, flags.device())?.broadcast_as(len)?;
        flags.flatten_all()?.where_cond(&positions, &beyond)?.min(0)
    })()
    .or_backend(op)?;
    let position = read_value::<i64>(op, &first)?;
    // Below `len`, as one flag is set.
    usize::try_from(position).map_err(candle_core::Error::wrap).or_backend(op)
}
/// The first of `tensors` (`I64` tensors of one shape on candle's CPU device), in row-major order, whose values
/// `refuse`, read in place: they are in host memory already. `None` (nothing to read in place) on other devices.
pub(super) fn first_refused_in_place<const N: usize>(
    tensors: [&Tensor; N],
    refuse: impl Fn([i64; N]) -> bool,
) -> Option<Option<[i64; N]>> {
    let guards = tensors.map(|tensor| tensor.storage_and_layout().0);
    let values = guards.each_ref().map(|storage| match &**storage {
        Storage::Cpu(CpuStorage::I64(values)) => Some(values.as_slice()),
        _ => None,
    });
    if values.iter().any(Option::is_none) {
        return None;
    }
    let mut offsets = tensors.map(Tensor::strided_index);
    let mut next = || -> Option<[i64; N]> {
        let mut picked = [0; N];
        for ((value, offsets), slot) in values.iter().zip(&mut offsets).zip(&mut picked) {
            *slot = *value.and_then(|values| values.get(offsets.next()?))?;
        }
        Some(picked)
    };
    Some(std::iter::from_fn(&mut next).find(|&values| refuse(values)))
}

/// Checks that every index of an `I64` tensor lies in `0..len` (the size of the axis it indexes), on the device:
/// one value read when they all do. Otherwise an [`Error::IndexOutOfRange`] naming the first one outside, in
/// row-major order, as the host default names it.
pub(super) fn check_in_range(op: &'static str, indices: &Tensor, len: usize) -> Result<()> {
    check_output(op, indices.device(), indices.elem_count(), DType::U8)?;
    if indices.elem_count() == 0 {
        // None to check, and no kernel for no elements (see `memory::empty_output`).
        return Ok(());
    }
    // An axis longer than `i64::MAX` holds every index.
    let Ok(end) = i64::try_from(len) else { return Ok(()) };
    if let Some(outside) = first_refused_in_place([indices], |[index]| index < 0 || index >= end) {
        return match outside {
            Some([index]) => Err(Error::IndexOutOfRange { op, index, len }),
            None => Ok(()),
        };
    }
    let outside = (|| {
        let device = indices.device();
        let below = indices.broadcast_lt(&constant(0i64, device)?)?;
        let beyond = indices.broadcast_ge(&constant(end, device)?)?;
        below.maximum(&beyond)
    })()
    .or_backend(op)?;
    if !any_set(op, &outside)? {
        return Ok(());
    }
    let position = first_set(op, &outside)?;
    let index = indices.flatten_all().and_then(|flat| flat.narrow(0, position, 1)).or_backend(op)?;
    Err(Error::IndexOutOfRange { op, index: read_value::<i64>(op, &index)?, len })
}
