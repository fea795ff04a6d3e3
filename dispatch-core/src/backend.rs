//! The contract every backend fulfils: real backends (candle, ndarray), the `Autodiff` decorator, and the dispatch
//! backends that `#[derive(Dispatch)]` generates. Model code is written once against it, through `Tensor<B>`.
//!
//! Every op takes its operands by reference and returns a new tensor. Every op that can fail on bad input returns
//! `Err` and never panics: implementations check shapes and axes (see [`Shape`]) before calling into libraries whose
//! ops panic on mismatch.

use std::fmt::Debug;
use std::sync::Arc;

use crate::device::DeviceOf;
use crate::error::Result;
use crate::gradients::{Gradients, TensorId};
use crate::random;
use crate::shape::Shape;

/// A tensor backend: a device type, a float tensor primitive, and the ops on it.
///
/// The element type is `f32` throughout.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a dispatch backend",
    label = "not a `dispatch_core::Backend`",
    note = "a backend implements `dispatch_core::Backend`, like `dispatch_core::backends::Candle` or `NdArray`"
)]
pub trait Backend: Clone + Debug + Send + Sync + 'static {
    /// Where tensors of this backend live; named, read back and found on the machine through
    /// [`BackendDevice`](crate::device::BackendDevice).
    type Device: DeviceOf<Self> + crate::device::BackendDevice;
    /// The backend's own tensor handle; cheap to clone (reference counted).
    type FloatTensor: Clone + Debug + Send + Sync + 'static;

    /// A stable lowercase name (`candle`, `ndarray`, `autodiff<candle>`).
    fn name() -> String;

    // ---- creation and inspection -------------------------------------------------------------------------------

    /// A tensor holding `data` in row-major order. `data.len()` must equal the shape's element count.
    fn from_vec(data: Vec<f32>, shape: Shape, device: &Self::Device) -> Result<Self::FloatTensor>;
    /// A tensor filled with `value`.
    fn full(shape: Shape, value: f32, device: &Self::Device) -> Result<Self::FloatTensor>;
    /// The elements in row-major order.
    fn to_vec(tensor: &Self::FloatTensor) -> Result<Vec<f32>>;
    /// The tensor's shape.
    fn shape(tensor: &Self::FloatTensor) -> Shape;
    /// The device the tensor lives on.
    fn device(tensor: &Self::FloatTensor) -> Self::Device;
    /// The same values on another device of this backend.
    fn to_device(tensor: &Self::FloatTensor, device: &Self::Device) -> Result<Self::FloatTensor>;

    /// Uniform samples in `[low, high)` from a seeded generator: the same seed gives the same values on every
    /// backend.
    fn random_uniform(
        shape: Shape,
        low: f32,
        high: f32,
        seed: u64,
        device: &Self::Device,
    ) -> Result<Self::FloatTensor> {
        let data = random::uniform(&shape, low, high, seed, "random_uniform")?;
        Self::from_vec(data, shape, device)
    }

    /// Normal samples with the given mean and standard deviation, seeded like [`Backend::random_uniform`].
    fn random_normal(shape: Shape, mean: f32, std: f32, seed: u64, device: &Self::Device) -> Result<Self::FloatTensor> {
        let data = random::normal(&shape, mean, std, seed, "random_normal")?;
        Self::from_vec(data, shape, device)
    }

    // ---- element-wise, broadcasting with numpy rules (a row vector over a matrix is a bias add) ----------------

    /// Element-wise `lhs + rhs`.
    fn add(lhs: &Self::FloatTensor, rhs: &Self::FloatTensor) -> Result<Self::FloatTensor>;
    /// Element-wise `lhs - rhs`.
    fn sub(lhs: &Self::FloatTensor, rhs: &Self::FloatTensor) -> Result<Self::FloatTensor>;
    /// Element-wise `lhs * rhs`.
    fn mul(lhs: &Self::FloatTensor, rhs: &Self::FloatTensor) -> Result<Self::FloatTensor>;
    /// Element-wise `lhs / rhs`; division by zero gives IEEE infinities.
    fn div(lhs: &Self::FloatTensor, rhs: &Self::FloatTensor) -> Result<Self::FloatTensor>;

    /// `tensor + scalar`, element-wise.
    fn add_scalar(tensor: &Self::FloatTensor, scalar: f32) -> Result<Self::FloatTensor>;
    /// `tensor * scalar`, element-wise.
    fn mul_scalar(tensor: &Self::FloatTensor, scalar: f32) -> Result<Self::FloatTensor>;
    /// `tensor ^ exponent`, element-wise.
    fn powf_scalar(tensor: &Self::FloatTensor, exponent: f32) -> Result<Self::FloatTensor>;
    /// 1.0 where `tensor > threshold`, else 0.0. Not differentiable (its gradient is zero almost everywhere).
    fn greater_scalar(tensor: &Self::FloatTensor, threshold: f32) -> Result<Self::FloatTensor>;

    /// `-tensor`, element-wise.
    fn neg(tensor: &Self::FloatTensor) -> Result<Self::FloatTensor>;
    /// `e ^ tensor`, element-wise.
    fn exp(tensor: &Self::FloatTensor) -> Result<Self::FloatTensor>;
    /// Natural logarithm.
    fn log(tensor: &Self::FloatTensor) -> Result<Self::FloatTensor>;
    /// `max(tensor, 0)`, element-wise.
    fn relu(tensor: &Self::FloatTensor) -> Result<Self::FloatTensor>;
    /// `1 / (1 + e ^ -tensor)`, element-wise.
    fn sigmoid(tensor: &Self::FloatTensor) -> Result<Self::FloatTensor>;
    /// The hyperbolic tangent, element-wise.
    fn tanh(tensor: &Self::FloatTensor) -> Result<Self::FloatTensor>;

    // ---- linear algebra and layout ------------------------------------------------------------------------------

    /// Matrix product of two 2-D tensors, or of two 3-D batches with equal batch size.
    fn matmul(lhs: &Self::FloatTensor, rhs: &Self::FloatTensor) -> Result<Self::FloatTensor>;
    /// Swaps two dimensions (a transpose when they are the last two).
    fn swap_dims(tensor: &Self::FloatTensor, dim0: usize, dim1: usize) -> Result<Self::FloatTensor>;
    /// The same elements, in row-major order, under another shape with the same element count.
    fn reshape(tensor: &Self::FloatTensor, shape: Shape) -> Result<Self::FloatTensor>;
    /// `len` entries of `axis` starting at `start`.
    fn narrow(tensor: &Self::FloatTensor, axis: usize, start: usize, len: usize) -> Result<Self::FloatTensor>;
    /// Concatenation along `axis`; every other dimension must agree.
    fn cat(tensors: &[Self::FloatTensor], axis: usize) -> Result<Self::FloatTensor>;

    // ---- reductions ---------------------------------------------------------------------------------------------

    /// Sum of every element, as a tensor of shape `[1]`.
    fn sum(tensor: &Self::FloatTensor) -> Result<Self::FloatTensor>;
    /// Mean of every element, as a tensor of shape `[1]`.
    fn mean(tensor: &Self::FloatTensor) -> Result<Self::FloatTensor>;
    /// Sum along `axis`, keeping it with size 1.
    fn sum_dim(tensor: &Self::FloatTensor, axis: usize) -> Result<Self::FloatTensor>;
    /// Mean along `axis`, keeping it with size 1.
    fn mean_dim(tensor: &Self::FloatTensor, axis: usize) -> Result<Self::FloatTensor>;
    /// `x - log(sum(exp(x)))` along `axis`, computed stably (the max is subtracted first).
    fn log_softmax(tensor: &Self::FloatTensor, axis: usize) -> Result<Self::FloatTensor>;
    /// The index of the largest entry along `axis` (the first one on ties), as `f32`, keeping the axis with size
    /// 1. Not differentiable.
    fn argmax(tensor: &Self::FloatTensor, axis: usize) -> Result<Self::FloatTensor>;

    // ---- host ops (collectives) ---------------------------------------------------------------------------------

    /// Runs a function on the tensor's values in host memory, e.g. a collective of the distributed engine.
    /// `Autodiff` overrides this to record `op.backward` in the graph, so a loss that goes through a collective
    /// trains correctly.
    fn host_op(tensor: &Self::FloatTensor, op: Arc<dyn HostOp>) -> Result<Self::FloatTensor> {
        let input = HostTensor { data: Self::to_vec(tensor)?, shape: Self::shape(tensor) };
        let output = op.forward(input)?;
        Self::from_vec(output.data, output.shape, &Self::device(tensor))
    }
}

/// A backend that does not record gradients itself, so [`crate::backends::Autodiff`] may wrap it.
///
/// Third-party backends opt in with `impl BaseBackend for MyBackend {}`. `Autodiff<B>` never implements it, and
/// the orphan rule keeps anyone else from implementing it for `Autodiff<B>`, so an autodiff backend inside an
/// autodiff backend cannot be named.
///
/// `Autodiff<B>` runs on `B`'s devices, so the device must also be a device of `Autodiff<B>`; the usual blanket
/// `impl<B: Backend<Device = MyDevice>> DeviceOf<B> for MyDevice` provides that. The bound sits here, on the
/// supertrait, so every `B: BaseBackend` carries it: a `where` clause on `Autodiff`'s impl instead would make the
/// compiler prove it through that same impl and overflow.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be wrapped in `Autodiff`: it is not a base backend",
    label = "`Autodiff` needs a backend that does not record gradients itself",
    note = "an autodiff backend inside an autodiff backend is not allowed; wrap the base backend once, e.g. \
            `Autodiff<Candle>`",
    note = "a third-party backend opts in with `impl dispatch_core::BaseBackend for MyBackend {{}}`"
)]
pub trait BaseBackend: Backend<Device: DeviceOf<crate::backends::Autodiff<Self>>> {}

/// A backend whose tensors can record a computation graph and run reverse-mode differentiation.
pub trait AutodiffBackend: Backend {
    /// Marks a tensor as a leaf whose gradient `backward` reports; returns the tracked tensor.
    fn require_grad(tensor: &Self::FloatTensor) -> Result<Self::FloatTensor>;
    /// The same values, cut from the graph.
    fn detach(tensor: &Self::FloatTensor) -> Result<Self::FloatTensor>;
    /// The identity under which `backward` reports this tensor's gradient; `None` if it records no graph.
    fn tensor_id(tensor: &Self::FloatTensor) -> Option<TensorId>;
    /// Reverse-mode differentiation of a one-element loss: the gradient of every leaf marked with
    /// `require_grad` that the loss depends on. The gradients are detached tensors of this backend.
    fn backward(loss: &Self::FloatTensor) -> Result<Gradients<Self>>;
}

/// Values of a tensor in host memory, row-major.
#[derive(Clone, Debug, PartialEq)]
pub struct HostTensor {
    /// The elements in row-major order.
    pub data: Vec<f32>,
    /// The shape the elements fill.
    pub shape: Shape,
}

/// A differentiable function evaluated on host memory: the extension point collectives use.
pub trait HostOp: Send + Sync + 'static {
    /// The op's name, as errors report it (`all_reduce`).
    fn name(&self) -> &'static str;
    /// Computes the output from the input's values.
    fn forward(&self, input: HostTensor) -> Result<HostTensor>;
    /// The vector-Jacobian product: given the gradient of the output, the gradient of the input.
    fn backward(&self, grad_output: HostTensor) -> Result<HostTensor>;
}
