//! Room for candle's outputs. candle allocates host buffers with allocations that abort the process when they fail,
//! so every op checks its output's size with [`crate::memory`] first, or fills a buffer allocated fallibly.
//! Device memory (CUDA, Metal) is not checked here: a failed GPU allocation is an error candle returns.

use candle_core::{DType, Device, Tensor};

use super::error::OrBackend;
use crate::error::Result;
use crate::memory;
use crate::shape::Shape;

/// Checks that an output of `elements` values of `dtype` can be allocated on `device`, before candle allocates it.
pub(super) fn check_output(op: &'static str, device: &Device, elements: usize, dtype: DType) -> Result<()> {
    if device.is_cpu() { memory::check_room(op, elements, dtype.size_in_bytes()) } else { Ok(()) }
}

/// Checks the room for an output of `tensor`'s size, device and element type.
pub(super) fn check_output_like(op: &'static str, tensor: &Tensor) -> Result<()> {
    check_output(op, tensor.device(), tensor.elem_count(), tensor.dtype())
}

/// An `f32` tensor of `shape` filled with `value`: on the CPU from a buffer allocated fallibly, elsewhere by candle.
pub(super) fn filled(op: &'static str, shape: &Shape, value: f32, device: &Device) -> Result<Tensor> {
    if device.is_cpu() {
        let data = memory::try_filled(op, shape.num_elements(), value)?;
        Tensor::from_vec(data, shape.dims(), device).or_backend(op)
    } else {
        Tensor::full(value, shape.dims(), device).or_backend(op)
    }
}
