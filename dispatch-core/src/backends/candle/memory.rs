//! Room for candle's outputs. candle allocates host buffers with allocations that abort the process when they fail,
//! so every op checks its output's size with [`crate::memory`] first, or fills a buffer allocated fallibly.
//! Device memory (CUDA, Metal) is not checked here: a failed GPU allocation is an error candle returns.

use candle_core::{Device, Tensor};

use super::error::{OrBackend, candle_dtype};
use crate::dtype::DType;
use crate::error::Result;
use crate::memory;
use crate::shape::Shape;

/// Checks that an output of `elements` values of `dtype` can be allocated on `device`, before candle allocates it.
pub(super) fn check_output(
    op: &'static str,
    device: &Device,
    elements: usize,
    dtype: candle_core::DType,
) -> Result<()> {
    if device.is_cpu() { memory::check_room(op, elements, dtype.size_in_bytes()) } else { Ok(()) }
}

/// Checks the room for an output of `tensor`'s size, device and element type.
pub(super) fn check_output_like(op: &'static str, tensor: &Tensor) -> Result<()> {
    check_output(op, tensor.device(), tensor.elem_count(), tensor.dtype())
}

/// `f` of `operands` widened to `f32`, with its result rounded back to their dtype once, as the ndarray backend
/// computes 16-bit floats: for CPU operands of one of `dtypes`, which the CPU kernel `f` runs has no product of.
/// Every value of `f16` and `bf16` is an `f32`, so only the one rounding differs from exact. Room for each copy is
/// checked before it is made; `None` for other operands.
pub(super) fn through_f32<const N: usize>(
    op: &'static str,
    operands: [&Tensor; N],
    dtypes: &[candle_core::DType],
    f: impl FnOnce([&Tensor; N]) -> Result<Tensor>,
) -> Option<Result<Tensor>> {
    let dtype = operands.first()?.dtype();
    if !dtypes.contains(&dtype) || !operands.iter().all(|operand| operand.device().is_cpu()) {
        return None;
    }
    let widened = |tensor: &Tensor| {
        check_output(op, tensor.device(), tensor.elem_count(), candle_core::DType::F32)?;
        tensor.to_dtype(candle_core::DType::F32).or_backend(op)
    };
    let result = || {
        let widened = operands.map(widened).into_iter().collect::<Result<Vec<_>>>()?;
        let result = f(std::array::from_fn(|index| &widened[index]))?;
        check_output(op, result.device(), result.elem_count(), dtype)?;
        result.to_dtype(dtype).or_backend(op)
    };
    Some(result())
}

/// A tensor of `shape` with no element, of `dtype` on `device`, when `shape` holds none; `None` when there are
/// elements to compute. candle's CUDA kernels refuse a launch over no elements (`CUDA_ERROR_INVALID_VALUE`) and
/// most of candle's ops launch one all the same, so an op whose output is empty answers with this before candle
/// runs: zeros of no elements, which allocate nothing and launch no kernel.
pub(super) fn empty_output(
    op: &'static str,
    shape: &Shape,
    dtype: candle_core::DType,
    device: &Device,
) -> Result<Option<Tensor>> {
    if shape.num_elements() > 0 {
        return Ok(None);
    }
    Tensor::zeros(shape.dims(), dtype, device).map(Some).or_backend(op)
}

/// `empty_output` of `tensor`'s shape, dtype and device: the output of an op that keeps all three, when `tensor` is
/// empty.
pub(super) fn empty_like(op: &'static str, tensor: &Tensor) -> Result<Option<Tensor>> {
    empty_output(op, &Shape::new(tensor.dims()), tensor.dtype(), tensor.device())
}

/// A tensor of `dtype` and `shape` filled with `value` (rounded to `dtype`): on the CPU from a buffer allocated
/// fallibly, elsewhere by candle.
pub(super) fn filled(op: &'static str, shape: &Shape, value: f64, dtype: DType, device: &Device) -> Result<Tensor> {
    if let Some(empty) = empty_output(op, shape, candle_dtype(dtype), device)? {
        return Ok(empty);
    }
    if !device.is_cpu() {
        return Tensor::full(value, shape.dims(), device)
            .and_then(|full| full.to_dtype(candle_dtype(dtype)))
            .or_backend(op);
    }
    let count = shape.num_elements();
    match dtype {
        DType::F32 => host_tensor(op, shape, memory::try_filled(op, count, value as f32)?, device),
        DType::F64 => host_tensor(op, shape, memory::try_filled(op, count, value)?, device),
        DType::F16 => host_tensor(op, shape, memory::try_filled(op, count, crate::dtype::f16_of(value))?, device),
        DType::BF16 => host_tensor(op, shape, memory::try_filled(op, count, crate::dtype::bf16_of(value))?, device),
    }
}

/// A tensor of `dtype` holding `data`, each value rounded to `dtype`; the buffer of that dtype is allocated
/// fallibly.
pub(super) fn from_f64_values(
    op: &'static str,
    data: Vec<f64>,
    shape: &Shape,
    dtype: DType,
    device: &Device,
) -> Result<Tensor> {
    match dtype {
        DType::F32 => host_tensor(op, shape, converted(op, &data, |value| value as f32)?, device),
        DType::F64 => host_tensor(op, shape, data, device),
        DType::F16 => host_tensor(op, shape, converted(op, &data, crate::dtype::f16_of)?, device),
        DType::BF16 => host_tensor(op, shape, converted(op, &data, crate::dtype::bf16_of)?, device),
    }
}

fn converted<T>(op: &'static str, data: &[f64], convert: impl Fn(f64) -> T) -> Result<Vec<T>> {
    let mut values = memory::try_vec(op, data.len())?;
    values.extend(data.iter().map(|&value| convert(value)));
    Ok(values)
}

fn host_tensor<T: candle_core::WithDType>(
    op: &'static str,
    shape: &Shape,
    data: Vec<T>,
    device: &Device,
) -> Result<Tensor> {
    Tensor::from_vec(data, shape.dims(), device).or_backend(op)
}
