//! Exhaustive, panic-free device dispatch for tensor backends.
//!
//! Annotate your own device enum with `#[derive(Dispatch)]`: the derive generates a backend that dispatches every
//! op to the variant picked at run time (candle, ndarray, an autodiff decorator over either, your own backend),
//! with no wildcard arm and no panic, and turns misuse into compile errors at your line.

#![warn(missing_docs)]

#[doc(hidden)]
#[path = "private/mod.rs"]
pub mod __private01;
pub mod backend;
pub mod backends;
pub mod device;
pub mod device_name;
pub mod distributed;
pub mod dtype;
pub mod error;
pub mod gradients;
// The CPU element kernels that both built-in backends run, and when they split across threads.
#[cfg(any(feature = "candle", feature = "ndarray"))]
mod kernels;
mod math;
pub mod memory;
#[cfg(any(feature = "candle", feature = "ndarray"))]
pub mod parallel;
mod random;
pub mod shape;
pub mod tensor;
pub mod transfers;

pub use backend::{Backend, HostOp, HostTensor, HostValues};
pub use backends::BaseBackend;
pub use device::{AutodiffDevice, DeviceOf, Dispatch, ParseDeviceError, Route};
pub use dispatch_derive::{Dispatch, extension};
pub use distributed::DistributedDevice;
pub use dtype::DType;
pub use error::{ArgumentValue, Error, RankRule, Result};
pub use gradients::{AutodiffBackend, Gradients, TensorId};
pub use shape::Shape;
pub use tensor::{BoolTensor, IntTensor, Tensor};
pub use transfers::{HostTransfers, host_transfers, record_host_transfer};
