//! The contract every backend fulfils: real backends (candle, ndarray), the `Autodiff` decorator, and the dispatch
//! backends that `#[derive(Dispatch)]` generates. Model code is written once against it, through `Tensor<B>`.
//!
//! Every op takes its operands by reference and returns a new tensor. Every op that can fail on bad input returns
//! `Err` and never panics: implementations check shapes and axes (see [`Shape`](crate::shape::Shape)) before calling into
//! libraries whose ops panic on mismatch. The ops are listed once, in `backend/ops.rs`, and the trait's methods are
//! expanded from that list.

pub mod defaults;
mod elementwise;
mod host_tensor;
mod ops;
pub(crate) mod window;

pub use elementwise::AdamStep;
pub(crate) use elementwise::{AdamScalars, adam_output_shape};
pub use host_tensor::{HostTensor, HostValues};
pub use window::{Conv1dOptions, Conv2dOptions, Window2d};

use crate::device_name::ParseDeviceError;
use crate::error::Result;
use std::fmt::{Debug, Display};
use std::str::FromStr;

/// A tensor backend: a device type, float, int and bool tensor primitives, and the ops on them.
///
/// Float tensors hold one of four dtypes ([`DType`](crate::dtype::DType)), carried at run time; int tensors hold `i64`,
/// bool tensors `bool`. Only the primitives of each kind (from and to host memory, shape, device, moves, and for
/// floats dtype and cast) must be written; every other op that has a default computes on the host (in `f64`,
/// returning the operands' dtype) and may be overridden with a native kernel.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a dispatch backend",
    label = "not a `dispatch_core::Backend`",
    note = "a backend implements `dispatch_core::Backend`, like `dispatch_core::backends::Candle` or `NdArray`"
)]
pub trait Backend: Clone + Debug + Send + Sync + 'static {
    /// Where tensors of this backend live; named, read back and found on the machine through [`BackendDevice`].
    type Device: DeviceOf<Self> + BackendDevice;
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

/// A differentiable function evaluated on host memory: the extension point collectives use.
///
/// Both directions receive values that hold the tensor's dtype exactly (`F64` values for an `F64` tensor, `F32`
/// for the others, see [`HostValues`]) and may return either element type: the result is rounded once, to the
/// dtype of the tensor (or gradient) it replaces.
pub trait HostOp: Send + Sync + 'static {
    /// The op's name, as errors report it (`all_reduce`).
    fn name(&self) -> &'static str;
    /// Computes the output from the input's values.
    fn forward(&self, input: HostTensor) -> Result<HostTensor>;
    /// The vector-Jacobian product: given the gradient of the output, the gradient of the input.
    fn backward(&self, grad_output: HostTensor) -> Result<HostTensor>;
}

/// A value that single-backend ops of `B` accept as a device: `B::Device` itself, and nothing that may be a
/// distributed device.
///
/// Backends implement it for their device type, for every backend using that device:
/// `impl<B: Backend<Device = MyDevice>> DeviceOf<B> for MyDevice { fn as_device(&self) -> &MyDevice { self } }`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a device of backend `{B}`",
    label = "expected a device of `{B}`"
)]
pub trait DeviceOf<B: Backend> {
    /// The device as `B` sees it.
    fn as_device(&self) -> &B::Device;
}

/// What a backend's device type promises, so that a device enum can write, read back and find its devices.
///
/// Every [`Backend::Device`] implements it; `#[derive(Dispatch)]` implements it for the
/// enums it generates and for the user's enum.
///
/// - `Display` writes a device and `FromStr` reads back an equal one: `x.to_string().parse() == Ok(x)` for every
///   device a user can build. The text contains no `,` and no whitespace, which separate the ranks of a cluster
///   (`cluster:candle,candle:cuda:1`); it may contain `:`.
/// - A bad name is a [`ParseDeviceError`] that lists the names accepted ([`ParseDeviceError::unknown`]) or says
///   what is wrong with the rest ([`ParseDeviceError::invalid`]).
/// - [`BackendDevice::available`] lists the devices usable on this machine at run time.
///
/// A derived enum writes a `#[backend]` variant as its name alone (`candle`) when its device is the device type's
/// `Default`, else as `name:<device>` (`candle:cuda:1`), and reads both.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a backend device: it does not implement `dispatch_core::device::BackendDevice`",
    label = "the device type of a backend implements `BackendDevice`",
    note = "`BackendDevice` is how devices are written (`Display`), read back (`FromStr`) and found on this \
            machine (`available`)"
)]
pub trait BackendDevice:
    Clone + Debug + PartialEq + Display + FromStr<Err = ParseDeviceError> + Send + Sync + 'static
{
    /// The devices usable on this machine at run time: compiled in and present (a GPU that opens), most capable
    /// first where the type has a preference. May be empty.
    fn available() -> Vec<Self>;

    /// The first of [`BackendDevice::available`]; `None` if no device is usable here.
    fn best_available() -> Option<Self> {
        Self::available().into_iter().next()
    }
}
