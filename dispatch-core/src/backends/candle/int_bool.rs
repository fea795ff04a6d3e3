//! Int and bool tensors: candle `I64` and `U8` (0 or 1) tensors from and to host values, their shapes, their
//! conversions, and the logic of bool tensors, each on candle's kernels. Int arithmetic is in `arithmetic`.

mod arithmetic;
mod wrapping;

use candle_core::{DType as CandleDType, Tensor};

pub(super) use self::arithmetic::{
    IntOp, int_add_scalar, int_arithmetic, int_compare, int_div, int_eq_scalar, int_mul_scalar, int_sum,
};

use super::device::CandleDevice;
use super::error::{OrBackend, candle_dtype};
use super::indices::{constant, counting};
use super::layout::shape_of;
use super::memory::{check_output, check_output_like, empty_like, empty_output};
use super::operands::check_kind;
use crate::dtype::DType;
use crate::error::Result;
use crate::memory;
use crate::shape::Shape;
use crate::transfers::{counted_read, counted_write};

pub(super) fn int_from_vec(data: Vec<i64>, shape: Shape, device: &CandleDevice) -> Result<Tensor> {
    shape.check_tensor_shape("int_from_vec")?;
    shape.check_data_len("int_from_vec", data.len())?;
    counted_write(data.len(), Tensor::from_vec(data, shape.dims(), device.as_candle()).or_backend("int_from_vec"))
}

pub(super) fn int_to_vec(tensor: &Tensor) -> Result<Vec<i64>> {
    check_output("int_to_vec", &candle_core::Device::Cpu, tensor.elem_count(), tensor.dtype())?;
    if tensor.elem_count() == 0 {
        return Ok(Vec::new());
    }
    counted_read(tensor.flatten_all().and_then(|flat| flat.to_vec1()).or_backend("int_to_vec"))
}

pub(super) fn bool_from_vec(data: Vec<bool>, shape: Shape, device: &CandleDevice) -> Result<Tensor> {
    shape.check_tensor_shape("bool_from_vec")?;
    shape.check_data_len("bool_from_vec", data.len())?;
    let mut bytes = memory::try_vec("bool_from_vec", data.len())?;
    bytes.extend(data.into_iter().map(u8::from));
    counted_write(bytes.len(), Tensor::from_vec(bytes, shape.dims(), device.as_candle()).or_backend("bool_from_vec"))
}

pub(super) fn bool_to_vec(tensor: &Tensor) -> Result<Vec<bool>> {
    check_output("bool_to_vec", &candle_core::Device::Cpu, tensor.elem_count(), tensor.dtype())?;
    if tensor.elem_count() == 0 {
        return Ok(Vec::new());
    }
    let bytes: Vec<u8> = counted_read(tensor.flatten_all().and_then(|flat| flat.to_vec1()).or_backend("bool_to_vec"))?;
    Ok(bytes.into_iter().map(|byte| byte != 0).collect())
}

/// `start..end` counted on the device, then shifted by `start`: every value lies in `start..end`, so the shift
/// cannot overflow.
pub(super) fn arange(start: i64, end: i64, device: &CandleDevice) -> Result<Tensor> {
    let op = "arange";
    let len = usize::try_from(i128::from(end) - i128::from(start)).unwrap_or(0);
    let shape = Shape::new([len]);
    shape.check_tensor_shape(op)?;
    let offsets = counting(op, len, device.as_candle())?;
    if len == 0 || start == 0 {
        return Ok(offsets);
    }
    offsets.broadcast_add(&constant(start, device.as_candle()).or_backend(op)?).or_backend(op)
}

/// The same elements under another shape; a strided tensor is copied into row-major order first.
pub(super) fn int_reshape(tensor: &Tensor, shape: &Shape) -> Result<Tensor> {
    check_kind("int_reshape", CandleDType::I64, [tensor])?;
    shape_of(tensor).check_reshape(shape)?;
    if let Some(empty) = empty_output("int_reshape", shape, tensor.dtype(), tensor.device())? {
        return Ok(empty);
    }
    if !tensor.is_contiguous() {
        check_output_like("int_reshape", tensor)?;
    }
    tensor.reshape(shape.dims()).or_backend("int_reshape")
}

/// The values rounded once to `dtype`. candle converts an `i64` to `F32` and `F64` rounding once; to `F16` and
/// `BF16` its CPU kernel would round twice (through `f32`), and CUDA has no kernel for either, so those two go
/// through `F32` in a way that rounds once.
pub(super) fn int_to_float(tensor: &Tensor, dtype: DType) -> Result<Tensor> {
    let op = "int_to_float";
    check_kind(op, CandleDType::I64, [tensor])?;
    check_output(op, tensor.device(), tensor.elem_count(), candle_dtype(dtype))?;
    if let Some(empty) = empty_output(op, &shape_of(tensor), candle_dtype(dtype), tensor.device())? {
        return Ok(empty);
    }
    let converted = match dtype {
        DType::F32 | DType::F64 => tensor.to_dtype(candle_dtype(dtype)),
        DType::F16 => to_f16(tensor),
        DType::BF16 => to_bf16(tensor),
    };
    converted.or_backend(op)
}

/// Beyond 65520 in magnitude every `i64` rounds to an infinite `F16`, as `±2^24` does; up to `2^24` an `i64` is
/// an exact `F32`, which rounds to `F16` once.
fn to_f16(tensor: &Tensor) -> candle_core::Result<Tensor> {
    let (device, bound) = (tensor.device(), 1i64 << 24);
    let clamped = tensor.broadcast_maximum(&constant(-bound, device)?)?.broadcast_minimum(&constant(bound, device)?)?;
    clamped.to_dtype(CandleDType::F32)?.to_dtype(CandleDType::F16)
}

/// `v` rounded once to `BF16`. `s`, the `F32` nearest `v`, rounds to the `BF16` value `r` nearest `s`. That is
/// the one nearest `v` too, unless `s` lies exactly halfway between `r` and the next `BF16` value beyond it,
/// `2s - r`, while `v` lies beyond `s` (the halfway tie was an artefact of rounding `v` to `s`): then it is `2s - r`.
/// `s - r` and `2s - r` are exact in `F32`; `s` back in `i64` saturates at `2^63` only where `s = r`.
fn to_bf16(tensor: &Tensor) -> candle_core::Result<Tensor> {
    let device = tensor.device();
    let nearest = tensor.to_dtype(CandleDType::F32)?;
    let rounded = nearest.to_dtype(CandleDType::BF16)?;
    let offset = nearest.sub(&rounded.to_dtype(CandleDType::F32)?)?;
    let far = nearest.add(&offset)?;
    let far_rounded = far.to_dtype(CandleDType::BF16)?;
    let zero = constant(0f32, device)?;
    let halfway = far_rounded.to_dtype(CandleDType::F32)?.eq(&far)?.mul(&offset.broadcast_ne(&zero)?)?;
    let back = nearest.to_dtype(CandleDType::I64)?;
    let above = offset.broadcast_gt(&zero)?.mul(&tensor.gt(&back)?)?;
    let below = offset.broadcast_lt(&zero)?.mul(&tensor.lt(&back)?)?;
    halfway.mul(&above.maximum(&below)?)?.where_cond(&far_rounded, &rounded)
}

/// 0 and 1 are exact in every dtype, so candle's own conversion of its `U8` tensor serves.
pub(super) fn bool_to_float(tensor: &Tensor, dtype: DType) -> Result<Tensor> {
    check_output("bool_to_float", tensor.device(), tensor.elem_count(), candle_dtype(dtype))?;
    if let Some(empty) = empty_output("bool_to_float", &shape_of(tensor), candle_dtype(dtype), tensor.device())? {
        return Ok(empty);
    }
    tensor.to_dtype(candle_dtype(dtype)).or_backend("bool_to_float")
}

pub(super) fn bool_to_int(tensor: &Tensor) -> Result<Tensor> {
    check_kind("bool_to_int", CandleDType::U8, [tensor])?;
    check_output("bool_to_int", tensor.device(), tensor.elem_count(), CandleDType::I64)?;
    if let Some(empty) = empty_output("bool_to_int", &shape_of(tensor), CandleDType::I64, tensor.device())? {
        return Ok(empty);
    }
    tensor.to_dtype(CandleDType::I64).or_backend("bool_to_int")
}

/// The bool ops of two tensors: on 0 and 1, `and` is the minimum and `or` the maximum.
#[derive(Clone, Copy)]
pub(super) enum Logic {
    And,
    Or,
}

pub(super) fn bool_logic(logic: Logic, lhs: &Tensor, rhs: &Tensor) -> Result<Tensor> {
    let op = match logic {
        Logic::And => "bool_and",
        Logic::Or => "bool_or",
    };
    check_kind(op, CandleDType::U8, [lhs, rhs])?;
    let shape = Shape::broadcast(op, &shape_of(lhs), &shape_of(rhs))?;
    check_output(op, lhs.device(), shape.num_elements(), CandleDType::U8)?;
    if let Some(empty) = empty_output(op, &shape, CandleDType::U8, lhs.device())? {
        return Ok(empty);
    }
    match logic {
        Logic::And => lhs.broadcast_minimum(rhs),
        Logic::Or => lhs.broadcast_maximum(rhs),
    }
    .or_backend(op)
}

pub(super) fn bool_not(tensor: &Tensor) -> Result<Tensor> {
    check_kind("bool_not", CandleDType::U8, [tensor])?;
    check_output_like("bool_not", tensor)?;
    if let Some(empty) = empty_like("bool_not", tensor)? {
        return Ok(empty);
    }
    constant(0u8, tensor.device()).and_then(|zero| tensor.broadcast_eq(&zero)).or_backend("bool_not")
}

/// Whether any element holds (`any`), or every element (`all`): the maximum or the minimum of the flags, as a
/// `[1]` tensor; over no elements, the value that `or` or `and` starts from.
pub(super) fn bool_reduce(op: &'static str, tensor: &Tensor, any: bool) -> Result<Tensor> {
    check_kind(op, CandleDType::U8, [tensor])?;
    if tensor.elem_count() == 0 {
        return constant(u8::from(!any), tensor.device()).or_backend(op);
    }
    let flat = tensor.flatten_all().or_backend(op)?;
    let reduced = if any { flat.max_keepdim(0) } else { flat.min_keepdim(0) };
    reduced.or_backend(op)
}

#[cfg(test)]
mod tests {
    use crate::backend::Backend;
    use crate::backends::{Candle, CandleDevice};
    use crate::dtype::DType;
    use crate::shape::Shape;

    /// Each value rounded once to `F16` and `BF16`: ties, values just past a tie that rounding to `f32` first
    /// would turn into one, and values beyond the range of `F16`.
    #[test]
    fn ints_round_once_to_half_precision() {
        let tie = (1i64 << 24) + (1 << 16);
        let values = [tie - 1, tie, tie + 1, -(tie + 1), 2049, 2051, 65519, 65520, i64::MAX, i64::MIN, (1 << 40) + 1];
        let device = CandleDevice::cpu();
        let ints = Candle::int_from_vec(values.to_vec(), Shape::new([values.len()]), &device).unwrap();
        for dtype in [DType::F16, DType::BF16] {
            let floats = Candle::int_to_float(&ints, dtype).unwrap();
            let expected: Vec<f64> = values
                .iter()
                .map(|&value| match dtype {
                    DType::F16 => f64::from(crate::dtype::f16_of(exact(value))),
                    _ => f64::from(crate::dtype::bf16_of(exact(value))),
                })
                .collect();
            assert_eq!(Candle::to_f64_vec(&floats).unwrap(), expected, "{dtype:?}");
        }
    }

    /// The values above as `f64`: exact but for `i64::MAX`, whose nearest `f64` (2^63) rounds alike.
    fn exact(value: i64) -> f64 {
        value as f64
    }
}
