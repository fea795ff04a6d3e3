//! The contract every backend fulfils: real backends (candle, ndarray), the `Autodiff` decorator, and the dispatch
//! backends that `#[derive(Dispatch)]` generates. Model code is written once against it, through `Tensor<B>`.
//!
//! Every op takes its operands by reference and returns a new tensor. Every op that can fail on bad input returns
//! `Err` and never panics: implementations check shapes and axes (see [`Shape`]) before calling into libraries whose
//! ops panic on mismatch. The ops are listed once, in `backend/ops.rs`, and the trait's methods are expanded from
//! that list.

pub mod defaults;
mod ops;
pub(crate) mod window;

pub use window::{Conv1dOptions, Conv2dOptions, Window2d};

use crate::device::DeviceOf;
use crate::error::Result;
use crate::gradients::{Gradients, TensorId};
use crate::shape::Shape;
use std::fmt::Debug;

/// A tensor backend: a device type, float, int and bool tensor primitives, and the ops on them.
///
/// Float tensors hold one of four dtypes ([`DType`](crate::DType)), carried at run time; int tensors hold `i64`,
/// bool tensors `bool`. Only the primitives of each kind (from and to host memory, shape, device, moves, and for
/// floats dtype and cast) must be written; every other op that has a default computes on the host (in `f64`,
/// returning the operands' dtype) and may be overridden with a native kernel.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a dispatch backend",
    label = "not a `dispatch_core::Backend`",
    note = "a backend implements `dispatch_core::Backend`, like `dispatch_core::backends::Candle` or `NdArray`"
)]
pub trait Backend: Clone + Debug + Send + Sync + 'static {
    /// Where tensors of this backend live; named, read back and found on the machine through
    /// [`BackendDevice`](crate::device::BackendDevice).
    type Device: DeviceOf<Self> + crate::device::BackendDevice;
    /// The backend's own float tensor handle; cheap to clone (reference counted).
    type FloatTensor: Clone + Debug + Send + Sync + 'static;
    /// The backend's own int (`i64`) tensor handle; cheap to clone.
    type IntTensor: Clone + Debug + Send + Sync + 'static;
    /// The backend's own bool tensor handle; cheap to clone.
    type BoolTensor: Clone + Debug + Send + Sync + 'static;

    /// A stable lowercase name (`candle`, `ndarray`, `autodiff<candle>`).
    fn name() -> String;

    // Every op, from the one list in `backend/ops.rs`.
    crate::for_each_op! { __backend_trait_methods {} }
}

crate::for_each_op! { __op_names {} }

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
#[diagnostic::on_unimplemented(
    message = "`{Self}` records no gradients: it is not an autodiff backend",
    label = "not an autodiff backend",
    note = "for a derived enum's backend, add an `#[autodiff]` variant to the device enum \
            (`#[autodiff] Autodiff(AutodiffDevice<Self>)`); for a backend `B` of its own, use `Autodiff<B>`"
)]
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

/// Values of a tensor in host memory, row-major, as `f32` whatever the tensor's dtype: what host ops (and so the
/// collectives) compute in. An `F64` tensor's values are rounded to `f32` on the way in (the one place a value of
/// an `F64` tensor passes through `f32`); the output is rounded back to the tensor's dtype.
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
