//! The traits through which the expansion touches each variant's field, each saying in its own words what is wrong
//! with a field that does not fit, and the one error the expansion builds.

use std::fmt::{self, Display};

use crate::backend::Backend;
use crate::device::{AutodiffDevice, BackendDevice, Dispatch, ParseDeviceError};
use crate::distributed::DistributedDevice;
use crate::error::Error;

/// The error of `to_device` moving a tensor that records an autodiff graph from `from` to `to`, a device of another
/// backend.
pub fn to_device_would_cut_the_graph(from: impl Display, to: impl Display) -> Error {
    Error::GraphCut { op: "to_device", from: from.to_string(), to: to.to_string() }
}

/// Never implemented: the bound that keeps an enum with `#[distributed]` variants out of single-backend ops.
#[diagnostic::on_unimplemented(
    message = "`{D}` holds `#[distributed]` variants, so it cannot be handed to a single-backend op",
    label = "a device that may be distributed",
    note = "route it first: `match device.route() {{ Route::Local(device) => ..., Route::Distributed(cluster) => \
            ... }}`"
)]
pub trait RouteFirst<D>: Backend {
    fn local(device: &D) -> &Self::Device;
}

/// The field of a `#[backend(B)]` variant: `D`, `B`'s device.
///
/// The expansion names `D` as `<B as BackendPath>::Device`, spanned at the backend path, while this bound is spanned
/// at the field: a `B` that is no backend is then reported at its path, with every other use of it, and not once
/// more at the field, as a `B: BackendPath` bound here would be.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not the device of backend `{B}`",
    label = "a `#[backend({B})]` variant holds `{D}`, the device of `{B}`",
    note = "write the field as `{D}`"
)]
pub trait BackendField<B, D>: Sized {
    fn backend_device(&self) -> &D;
    fn from_backend_device(device: D) -> Self;
}

// Through `Same` rather than `impl .. for D`: a mismatch is then an unmet bound, reported with the message above,
// instead of a type mismatch that rustc words itself.
#[diagnostic::do_not_recommend]
impl<B, D, T: Same<D>> BackendField<B, D> for T {
    #[inline]
    fn backend_device(&self) -> &D {
        self.same()
    }

    #[inline]
    fn from_backend_device(device: D) -> Self {
        T::from_same(device)
    }
}

/// Type equality as a bound: implemented only for `T: Same<T>`.
pub trait Same<U> {
    fn same(&self) -> &U;
    fn from_same(value: U) -> Self;
}

impl<T> Same<T> for T {
    #[inline]
    fn same(&self) -> &T {
        self
    }

    #[inline]
    fn from_same(value: T) -> T {
        value
    }
}

/// The field of an `#[autodiff]` variant: `AutodiffDevice<Self>`.
#[diagnostic::on_unimplemented(
    message = "an `#[autodiff]` variant holds `AutodiffDevice<Self>`, not `{Self}`",
    label = "expected `dispatch_core::AutodiffDevice<Self>`",
    note = "the autodiff device holds one of the enum's `#[backend]` devices, which `Autodiff` wraps"
)]
pub trait AutodiffField<D: Dispatch>: Sized {
    fn base(&self) -> &D::Base;
    fn from_base(base: D::Base) -> Self;
}

impl<D: Dispatch> AutodiffField<D> for AutodiffDevice<D> {
    #[inline]
    fn base(&self) -> &D::Base {
        AutodiffDevice::base(self)
    }

    #[inline]
    fn from_base(base: D::Base) -> Self {
        AutodiffDevice::new(base)
    }
}

/// The field of a `#[distributed]` variant: `DistributedDevice<Self>`.
#[diagnostic::on_unimplemented(
    message = "a `#[distributed]` variant holds `DistributedDevice<Self>`, not `{Self}`",
    label = "expected `dispatch_core::DistributedDevice<Self>`",
    note = "the distributed device is a group of ranks, each a local device of the enum"
)]
pub trait DistributedField<D: Dispatch>: Sized {
    fn distributed(&self) -> &DistributedDevice<D>;
    fn from_distributed(device: DistributedDevice<D>) -> Self;
}

impl<D: Dispatch> DistributedField<D> for DistributedDevice<D> {
    #[inline]
    fn distributed(&self) -> &DistributedDevice<D> {
        self
    }

    #[inline]
    fn from_distributed(device: DistributedDevice<D>) -> Self {
        device
    }
}

/// The device a `#[backend]` variant's bare name stands for: the device type's default, which `Display` writes as
/// the name alone and `FromStr` builds from it.
#[diagnostic::on_unimplemented(
    message = "`{Self}` has no default device, so `FromStr` cannot build this variant from its name",
    label = "`Display` and `FromStr` need `{Self}: Default`, the device the variant's bare name stands for",
    note = "implement `Default` for the device type, picking the device a bare name should mean"
)]
pub trait DefaultDevice: Sized {
    fn default_device() -> Self;
}

#[diagnostic::do_not_recommend]
impl<T: Default> DefaultDevice for T {
    #[inline]
    fn default_device() -> Self {
        T::default()
    }
}

/// How a `#[backend]` variant names its device, through the device type's [`BackendDevice`] contract: its name
/// alone for the device type's default device, else `name:<device>`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a backend device: it does not implement `dispatch_core::device::BackendDevice`",
    label = "a `#[backend]` variant's device is written, read back and listed through `BackendDevice`",
    note = "the device type of every backend implements `BackendDevice`: `Display` and `FromStr` that read back \
            what they write, and `available()`"
)]
pub trait DeviceNames: Sized {
    /// Writes `name` for `default`, `name:<device>` for any other device.
    fn write_name(&self, name: &str, default: &Self, f: &mut fmt::Formatter<'_>) -> fmt::Result;
    /// Reads the `<device>` of `name:<device>`.
    fn parse_device(device: &str) -> Result<Self, ParseDeviceError>;
    /// [`BackendDevice::available`].
    fn available_devices() -> Vec<Self>;
}

#[diagnostic::do_not_recommend]
impl<T: BackendDevice> DeviceNames for T {
    fn write_name(&self, name: &str, default: &Self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self == default { f.write_str(name) } else { crate::device_name::write_qualified(f, name, self) }
    }

    #[inline]
    fn parse_device(device: &str) -> Result<Self, ParseDeviceError> {
        device.parse()
    }

    #[inline]
    fn available_devices() -> Vec<Self> {
        T::available()
    }
}
