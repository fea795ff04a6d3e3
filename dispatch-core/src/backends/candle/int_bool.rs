//! Int and bool tensors: candle `I64` and `U8` (0 or 1) tensors from and to host values, and their conversions to
//! float tensors.

use candle_core::Tensor;

use super::Candle;
use super::CandleDevice;
use super::error::{OrBackend, candle_dtype};
use super::memory::check_output;
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
    let bytes: Vec<u8> = counted_read(tensor.flatten_all().and_then(|flat| flat.to_vec1()).or_backend("bool_to_vec"))?;
    Ok(bytes.into_iter().map(|byte| byte != 0).collect())
}

/// 0 and 1 are exact in every dtype, so candle's own conversion of its `U8` tensor serves.
pub(super) fn bool_to_float(tensor: &Tensor, dtype: DType) -> Result<Tensor> {
    check_output("bool_to_float", tensor.device(), tensor.elem_count(), candle_dtype(dtype))?;
    tensor.to_dtype(candle_dtype(dtype)).or_backend("bool_to_float")
}

/// candle's conversion rounds an `i64` once to `F32` or `F64`; for `F16` and `BF16` it would round twice (through
/// `f64` and `f32`), so those take the exact default.
pub(super) fn int_to_float(tensor: &Tensor, dtype: DType) -> Result<Tensor> {
    if matches!(dtype, DType::F16 | DType::BF16) {
        return crate::backend::defaults::int_to_float::<Candle>(tensor, dtype);
    }
    check_output("int_to_float", tensor.device(), tensor.elem_count(), candle_dtype(dtype))?;
    tensor.to_dtype(candle_dtype(dtype)).or_backend("int_to_float")
}
