//! Creating float tensors and reading them: constructors, inspection, conversions between dtypes and devices.
//!
//! Every constructor of a float tensor names its dtype (candle's convention), except `from_vec`, whose `f32` data
//! says it; scalar arguments are `f64` and rounded once to the tensor's dtype.

use super::float::Tensor;
use crate::backend::Backend;
use crate::device::DeviceOf;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::shape::Shape;

impl<B: Backend> Tensor<B> {
    // Every constructor of a float tensor names its dtype (candle's convention), except `from_vec`, whose `f32`
    // data says it; scalar arguments are `f64` and rounded once to the tensor's dtype.

    /// An `F32` tensor holding `data` (row-major) with the given shape; [`Tensor::from_f64_vec`] makes any dtype.
    pub fn from_vec(data: Vec<f32>, shape: impl Into<Shape>, device: &(impl DeviceOf<B> + ?Sized)) -> Result<Self> {
        Self::wrap(B::from_vec(data, shape.into(), device.as_device()))
    }

    /// A tensor of `dtype` holding `data` (row-major, each value rounded to `dtype`) with the given shape.
    pub fn from_f64_vec(
        data: Vec<f64>,
        shape: impl Into<Shape>,
        dtype: DType,
        device: &(impl DeviceOf<B> + ?Sized),
    ) -> Result<Self> {
        Self::wrap(B::from_f64_vec(data, shape.into(), dtype, device.as_device()))
    }

    /// A tensor of `dtype` and the given shape with every element equal to `value` (rounded to `dtype`).
    pub fn full(
        shape: impl Into<Shape>,
        value: f64,
        dtype: DType,
        device: &(impl DeviceOf<B> + ?Sized),
    ) -> Result<Self> {
        Self::wrap(B::full(shape.into(), value, dtype, device.as_device()))
    }

    /// A tensor of `dtype` and the given shape filled with 0.0.
    pub fn zeros(shape: impl Into<Shape>, dtype: DType, device: &(impl DeviceOf<B> + ?Sized)) -> Result<Self> {
        Self::full(shape, 0.0, dtype, device)
    }

    /// A tensor of `dtype` and the given shape filled with 1.0.
    pub fn ones(shape: impl Into<Shape>, dtype: DType, device: &(impl DeviceOf<B> + ?Sized)) -> Result<Self> {
        Self::full(shape, 1.0, dtype, device)
    }

    /// A tensor of this one's shape, dtype and device with every element equal to `value`.
    pub fn full_like(&self, value: f64) -> Result<Self> {
        Self::full(self.shape(), value, self.dtype(), &self.device())
    }

    /// A tensor of this one's shape, dtype and device filled with 0.0.
    pub fn zeros_like(&self) -> Result<Self> {
        self.full_like(0.0)
    }

    /// A tensor of this one's shape, dtype and device filled with 1.0.
    pub fn ones_like(&self) -> Result<Self> {
        self.full_like(1.0)
    }

    /// Uniform samples of `dtype` in `[low, high)`; the same seed gives the same values on every backend.
    pub fn random_uniform(
        shape: impl Into<Shape>,
        (low, high): (f64, f64),
        seed: u64,
        dtype: DType,
        device: &(impl DeviceOf<B> + ?Sized),
    ) -> Result<Self> {
        Self::wrap(B::random_uniform(shape.into(), low, high, seed, dtype, device.as_device()))
    }

    /// Normal samples of `dtype` with the given `(mean, std)`; the same seed gives the same values on every
    /// backend.
    pub fn random_normal(
        shape: impl Into<Shape>,
        (mean, std): (f64, f64),
        seed: u64,
        dtype: DType,
        device: &(impl DeviceOf<B> + ?Sized),
    ) -> Result<Self> {
        Self::wrap(B::random_normal(shape.into(), mean, std, seed, dtype, device.as_device()))
    }

    /// The tensor's shape.
    pub fn shape(&self) -> Shape {
        B::shape(&self.primitive)
    }

    /// The size of each dimension.
    pub fn dims(&self) -> Vec<usize> {
        self.shape().dims().to_vec()
    }

    /// The device the tensor lives on.
    pub fn device(&self) -> B::Device {
        B::device(&self.primitive)
    }

    /// The elements of an `F32` tensor in row-major order. Another dtype is an
    /// [`Error::UnexpectedDType`], never a silent rounding: read it with [`Tensor::to_f64_vec`] (exact for every
    /// dtype), or `cast` it first.
    pub fn to_vec(&self) -> Result<Vec<f32>> {
        B::to_vec(&self.primitive)
    }

    /// The elements in row-major order, as `f64`: exact for every dtype.
    pub fn to_f64_vec(&self) -> Result<Vec<f64>> {
        B::to_f64_vec(&self.primitive)
    }

    /// The element type.
    pub fn dtype(&self) -> DType {
        B::dtype(&self.primitive)
    }

    /// The values converted to `dtype`; under autodiff the gradient is cast back to this tensor's dtype.
    pub fn cast(&self, dtype: DType) -> Result<Self> {
        Self::wrap(B::cast(&self.primitive, dtype))
    }

    /// The value of a one-element tensor, exact for every dtype.
    pub fn to_scalar(&self) -> Result<f64> {
        match self.to_f64_vec()?.as_slice() {
            [value] => Ok(*value),
            _ => Err(Error::unexpected_shape("to_scalar", "a one-element tensor", &self.shape())),
        }
    }

    /// The same values on another device of `B`; under autodiff the gradient flows back to this tensor.
    pub fn to_device(&self, device: &(impl DeviceOf<B> + ?Sized)) -> Result<Self> {
        Self::wrap(B::to_device(&self.primitive, device.as_device()))
    }
}
