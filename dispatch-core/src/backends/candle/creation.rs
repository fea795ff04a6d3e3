//! Creation and inspection: candle tensors from host values and back (each allocation checked first), their dtype,
//! conversions between dtypes and moves between devices.

use candle_core::Tensor;

use super::device::CandleDevice;
use super::error::{OrBackend, candle_dtype, float_dtype};
use super::layout::shape_of;
use super::memory::{check_output, empty_output, filled, from_f64_values};
use crate::dtype::DType;
use crate::error::Result;
use crate::shape::Shape;
use crate::transfers::{counted_read, counted_write};

pub(super) fn from_vec(data: Vec<f32>, shape: Shape, device: &CandleDevice) -> Result<Tensor> {
    shape.check_tensor_shape("from_vec")?;
    shape.check_data_len("from_vec", data.len())?;
    counted_write(data.len(), Tensor::from_vec(data, shape.dims(), device.as_candle()).or_backend("from_vec"))
}

pub(super) fn from_f64_vec(data: Vec<f64>, shape: Shape, dtype: DType, device: &CandleDevice) -> Result<Tensor> {
    shape.check_tensor_shape("from_f64_vec")?;
    shape.check_data_len("from_f64_vec", data.len())?;
    counted_write(data.len(), from_f64_values("from_f64_vec", data, &shape, dtype, device.as_candle()))
}

pub(super) fn full(shape: Shape, value: f64, dtype: DType, device: &CandleDevice) -> Result<Tensor> {
    shape.check_tensor_shape("full")?;
    filled("full", &shape, value, dtype, device.as_candle())
}

pub(super) fn to_vec(tensor: &Tensor) -> Result<Vec<f32>> {
    DType::check_expected("to_vec", DType::F32, float_dtype("to_vec", tensor)?)?;
    counted_read(host_values("to_vec", tensor, candle_core::DType::F32))
}

pub(super) fn to_f64_vec(tensor: &Tensor) -> Result<Vec<f64>> {
    float_dtype("to_f64_vec", tensor)?;
    counted_read(host_values("to_f64_vec", tensor, candle_core::DType::F64))
}

/// candle's own conversion, but from `F64` to `F16` or `BF16`: candle (through `half`) rounds those twice, so they
/// are converted on the host, rounding once.
pub(super) fn cast(tensor: &Tensor, dtype: DType) -> Result<Tensor> {
    let target = candle_dtype(dtype);
    check_output("cast", tensor.device(), tensor.elem_count(), target)?;
    if let Some(empty) = empty_output("cast", &shape_of(tensor), target, tensor.device())? {
        return Ok(empty);
    }
    if float_dtype("cast", tensor)? == DType::F64 && matches!(dtype, DType::F16 | DType::BF16) {
        // Two copies: the values down, and up again once rounded.
        let values = counted_read(host_values("cast", tensor, candle_core::DType::F64))?;
        let count = values.len();
        return counted_write(count, from_f64_values("cast", values, &shape_of(tensor), dtype, tensor.device()));
    }
    tensor.to_dtype(target).or_backend("cast")
}

pub(super) fn device(tensor: &Tensor) -> CandleDevice {
    CandleDevice::from_candle(tensor.device().clone())
}

/// A move of a tensor of any kind (float, int or bool): room for the copy is checked on the CPU.
pub(super) fn to_device(tensor: &Tensor, device: &CandleDevice) -> Result<Tensor> {
    if !tensor.device().same_device(device.as_candle()) {
        check_output("to_device", device.as_candle(), tensor.elem_count(), tensor.dtype())?;
    }
    tensor.to_device(device.as_candle()).or_backend("to_device")
}

/// The elements of a tensor in host memory, row-major, as `dtype` (`F32` or `F64`, converted from the tensor's own).
pub(super) fn host_values<T: candle_core::WithDType>(
    op: &'static str,
    tensor: &Tensor,
    dtype: candle_core::DType,
) -> Result<Vec<T>> {
    // The values land in host memory, wherever the tensor lives.
    check_output(op, &candle_core::Device::Cpu, tensor.elem_count(), dtype)?;
    if tensor.elem_count() == 0 {
        // No kernel for no elements (see `empty_output`).
        return Ok(Vec::new());
    }
    tensor.flatten_all().and_then(|flat| flat.to_dtype(dtype)).and_then(|flat| flat.to_vec1()).or_backend(op)
}
