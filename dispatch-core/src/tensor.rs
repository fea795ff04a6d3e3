//! `Tensor<B>`: the handle model code is written against, once, generic over the backend; `IntTensor<B>` and
//! `BoolTensor<B>` for the other kinds.

mod elementwise;
mod indexing;
mod kinds;
mod layout;
mod module_ops;
mod reductions;

pub use kinds::{BoolTensor, IntTensor};

use std::fmt;
use std::sync::Arc;

use crate::backend::{AutodiffBackend, Backend, HostOp};
use crate::device::DeviceOf;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::gradients::{Gradients, TensorId};
use crate::shape::Shape;

/// A float tensor of backend `B`. Cloning is cheap: backends share storage.
pub struct Tensor<B: Backend> {
    primitive: B::FloatTensor,
}

impl<B: Backend> Clone for Tensor<B> {
    fn clone(&self) -> Self {
        Self { primitive: self.primitive.clone() }
    }
}

impl<B: Backend> fmt::Debug for Tensor<B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tensor")
            .field("backend", &B::name())
            .field("shape", &self.shape())
            .field("primitive", &self.primitive)
            .finish()
    }
}

impl<B: Backend> Tensor<B> {
    /// Wraps a backend's own tensor.
    pub fn from_primitive(primitive: B::FloatTensor) -> Self {
        Self { primitive }
    }

    /// The backend's own tensor.
    pub fn primitive(&self) -> &B::FloatTensor {
        &self.primitive
    }

    /// Unwraps the backend's own tensor.
    pub fn into_primitive(self) -> B::FloatTensor {
        self.primitive
    }

    pub(crate) fn wrap(primitive: Result<B::FloatTensor>) -> Result<Self> {
        primitive.map(Self::from_primitive)
    }

    // ---- creation -----------------------------------------------------------------------------------------------

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

    // ---- inspection ---------------------------------------------------------------------------------------------

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
            values => Err(Error::invalid(
                "to_scalar",
                format!("needs a one-element tensor, got shape {} ({} elements)", self.shape(), values.len()),
            )),
        }
    }

    /// The same values on another device of `B`; under autodiff the gradient flows back to this tensor.
    pub fn to_device(&self, device: &(impl DeviceOf<B> + ?Sized)) -> Result<Self> {
        Self::wrap(B::to_device(&self.primitive, device.as_device()))
    }

    // ---- element-wise -------------------------------------------------------------------------------------------

    /// Element-wise sum, broadcasting with numpy rules (a `[n]` row over a `[m, n]` matrix is a bias add).
    pub fn add(&self, other: &Self) -> Result<Self> {
        Self::wrap(B::add(&self.primitive, &other.primitive))
    }

    /// Element-wise `self - other`, broadcasting as [`Tensor::add`] does.
    pub fn sub(&self, other: &Self) -> Result<Self> {
        Self::wrap(B::sub(&self.primitive, &other.primitive))
    }

    /// Element-wise `self * other`, broadcasting as [`Tensor::add`] does.
    pub fn mul(&self, other: &Self) -> Result<Self> {
        Self::wrap(B::mul(&self.primitive, &other.primitive))
    }

    /// Element-wise `self / other`, broadcasting as [`Tensor::add`] does; division by zero gives IEEE infinities.
    pub fn div(&self, other: &Self) -> Result<Self> {
        Self::wrap(B::div(&self.primitive, &other.primitive))
    }

    /// `self + scalar`, element-wise (`scalar` rounded once to the tensor's dtype, as every scalar argument is).
    pub fn add_scalar(&self, scalar: f64) -> Result<Self> {
        Self::wrap(B::add_scalar(&self.primitive, scalar))
    }

    /// `self - scalar`, element-wise.
    pub fn sub_scalar(&self, scalar: f64) -> Result<Self> {
        self.add_scalar(-scalar)
    }

    /// `self * scalar`, element-wise.
    pub fn mul_scalar(&self, scalar: f64) -> Result<Self> {
        Self::wrap(B::mul_scalar(&self.primitive, scalar))
    }

    /// `self / scalar`, element-wise, as a product with `1 / scalar` computed in `f64`; a zero divisor is an `Err`
    /// (almost always a bug).
    pub fn div_scalar(&self, scalar: f64) -> Result<Self> {
        if scalar == 0.0 {
            return Err(Error::invalid("div_scalar", "division by zero"));
        }
        let reciprocal = 1.0 / scalar;
        if self.dtype().round(reciprocal).is_finite() {
            return self.mul_scalar(reciprocal);
        }
        // The reciprocal of a tiny divisor overflows the dtype to infinity, which would turn 0 / s into NaN.
        self.div(&Self::full([1], scalar, self.dtype(), &self.device())?)
    }

    /// `self ^ exponent`, element-wise.
    pub fn powf_scalar(&self, exponent: f64) -> Result<Self> {
        Self::wrap(B::powf_scalar(&self.primitive, exponent))
    }

    /// `self * self`, element-wise.
    pub fn square(&self) -> Result<Self> {
        self.mul(self)
    }

    /// 1.0 where the element is greater than `threshold`, else 0.0.
    pub fn greater_scalar(&self, threshold: f64) -> Result<Self> {
        Self::wrap(B::greater_scalar(&self.primitive, threshold))
    }

    /// `-self`, element-wise.
    pub fn neg(&self) -> Result<Self> {
        Self::wrap(B::neg(&self.primitive))
    }

    /// `e ^ self`, element-wise.
    pub fn exp(&self) -> Result<Self> {
        Self::wrap(B::exp(&self.primitive))
    }

    /// The natural logarithm, element-wise.
    pub fn log(&self) -> Result<Self> {
        Self::wrap(B::log(&self.primitive))
    }

    /// `max(self, 0)`, element-wise.
    pub fn relu(&self) -> Result<Self> {
        Self::wrap(B::relu(&self.primitive))
    }

    /// `1 / (1 + e ^ -self)`, element-wise.
    pub fn sigmoid(&self) -> Result<Self> {
        Self::wrap(B::sigmoid(&self.primitive))
    }

    /// The hyperbolic tangent, element-wise.
    pub fn tanh(&self) -> Result<Self> {
        Self::wrap(B::tanh(&self.primitive))
    }

    // ---- linear algebra and layout ------------------------------------------------------------------------------

    /// The matrix product over the last two dimensions; the dimensions in front (batches) broadcast, numpy style.
    pub fn matmul(&self, other: &Self) -> Result<Self> {
        Self::wrap(B::matmul(&self.primitive, &other.primitive))
    }

    /// Swaps the last two dimensions.
    pub fn transpose(&self) -> Result<Self> {
        let rank = self.shape().rank();
        if rank < 2 {
            return Err(Error::invalid(
                "transpose",
                format!("needs at least 2 dimensions, got shape {}", self.shape()),
            ));
        }
        self.swap_dims(rank - 2, rank - 1)
    }

    /// Swaps two dimensions (a transpose when they are the last two).
    pub fn swap_dims(&self, dim0: usize, dim1: usize) -> Result<Self> {
        Self::wrap(B::swap_dims(&self.primitive, dim0, dim1))
    }

    /// The same elements, in row-major order, under another shape with the same element count.
    pub fn reshape(&self, shape: impl Into<Shape>) -> Result<Self> {
        Self::wrap(B::reshape(&self.primitive, shape.into()))
    }

    /// `len` entries of `axis` starting at `start`.
    pub fn narrow(&self, axis: usize, start: usize, len: usize) -> Result<Self> {
        Self::wrap(B::narrow(&self.primitive, axis, start, len))
    }

    /// The dimensions reordered: dimension `i` of the result is dimension `axes[i]` of this tensor.
    pub fn permute(&self, axes: impl Into<Vec<usize>>) -> Result<Self> {
        Self::wrap(B::permute(&self.primitive, axes.into()))
    }

    /// A dimension of size 1 inserted before dimension `axis`.
    pub fn unsqueeze(&self, axis: usize) -> Result<Self> {
        Self::wrap(B::unsqueeze(&self.primitive, axis))
    }

    /// Dimension `axis`, of size 1, removed.
    pub fn squeeze(&self, axis: usize) -> Result<Self> {
        Self::wrap(B::squeeze(&self.primitive, axis))
    }

    /// Concatenation along `axis`; every other dimension must agree, and every tensor must be on one device.
    pub fn cat(tensors: &[Self], axis: usize) -> Result<Self> {
        let primitives: Vec<_> = tensors.iter().map(|tensor| tensor.primitive.clone()).collect();
        Self::wrap(B::cat(&primitives, axis))
    }

    // ---- reductions ---------------------------------------------------------------------------------------------

    /// Sum of every element, shape `[1]`.
    pub fn sum(&self) -> Result<Self> {
        Self::wrap(B::sum(&self.primitive))
    }

    /// Mean of every element, shape `[1]`.
    pub fn mean(&self) -> Result<Self> {
        Self::wrap(B::mean(&self.primitive))
    }

    /// Sum along `axis`, keeping it with size 1.
    pub fn sum_dim(&self, axis: usize) -> Result<Self> {
        Self::wrap(B::sum_dim(&self.primitive, axis))
    }

    /// Mean along `axis`, keeping it with size 1.
    pub fn mean_dim(&self, axis: usize) -> Result<Self> {
        Self::wrap(B::mean_dim(&self.primitive, axis))
    }

    /// `self - log(sum(exp(self)))` along `axis`, computed stably.
    pub fn log_softmax(&self, axis: usize) -> Result<Self> {
        Self::wrap(B::log_softmax(&self.primitive, axis))
    }

    /// `exp(self) / sum(exp(self))` along `axis`, computed stably.
    pub fn softmax(&self, axis: usize) -> Result<Self> {
        Self::wrap(B::softmax(&self.primitive, axis))
    }

    /// The index of the largest entry along `axis` (the first on ties), keeping the axis with size 1.
    pub fn argmax(&self, axis: usize) -> Result<IntTensor<B>> {
        IntTensor::wrap(B::argmax(&self.primitive, axis))
    }

    /// Runs a host function (e.g. a collective) on this tensor's values; differentiable under `Autodiff`.
    pub fn host_op(&self, op: Arc<dyn HostOp>) -> Result<Self> {
        Self::wrap(B::host_op(&self.primitive, op))
    }
}

/// Gradients, for backends that record them. Each method carries its `AutodiffBackend` bound itself, rather than
/// the `impl` block, so calling one on a backend that records no gradients is the bound's own error (saying to add
/// an `#[autodiff]` variant or use `Autodiff<B>`), not "no method named `backward`".
impl<B: Backend> Tensor<B> {
    /// This tensor as a leaf whose gradient `backward` reports.
    pub fn require_grad(&self) -> Result<Self>
    where
        B: AutodiffBackend,
    {
        Self::wrap(B::require_grad(&self.primitive))
    }

    /// The same values, cut from the graph.
    pub fn detach(&self) -> Result<Self>
    where
        B: AutodiffBackend,
    {
        Self::wrap(B::detach(&self.primitive))
    }

    /// The identity under which `backward` reports this tensor's gradient; `None` if it records no graph.
    pub fn id(&self) -> Option<TensorId>
    where
        B: AutodiffBackend,
    {
        B::tensor_id(&self.primitive)
    }

    /// Reverse-mode differentiation of this one-element loss.
    pub fn backward(&self) -> Result<Gradients<B>>
    where
        B: AutodiffBackend,
    {
        B::backward(&self.primitive)
    }

    /// This tensor's gradient in `gradients`, if it is a tracked leaf the loss depends on.
    pub fn grad(&self, gradients: &Gradients<B>) -> Option<Self>
    where
        B: AutodiffBackend,
    {
        self.id().and_then(|id| gradients.get(id)).cloned().map(Self::from_primitive)
    }
}
