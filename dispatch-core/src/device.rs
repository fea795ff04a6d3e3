//! Devices: what single-backend ops accept, the naming contract of every backend's device type, what
//! `#[derive(Dispatch)]` implements for the user's enum, and the devices an `#[autodiff]` and a `#[distributed]`
//! variant hold.

use std::convert::Infallible;
use std::fmt::{self, Debug, Display};
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use crate::backend::Backend;
pub use crate::backend::{BackendDevice, DeviceOf};
pub use crate::device_name::ParseDeviceError;
#[cfg(feature = "mpi")]
use crate::distributed::mpi::MpiWorld;

/// Implemented by `#[derive(Dispatch)]` for the user's device enum (and for the local enum it generates).
///
/// Code written once over `D: Dispatch` runs on every derived enum: a local device takes single-backend ops
/// (`Tensor::<D::Backend>::zeros([2], &local)`), and `D::Backend: AutodiffBackend` says the enum has an
/// `#[autodiff]` variant.
///
/// As a [`BackendDevice`], a derived enum names each device (`candle`, `candle:cuda:1`, `autodiff:candle:cuda:1`,
/// `cluster:candle,candle:cuda:1`) and lists the devices [`available`](BackendDevice::available) here: those of
/// each variant's device type, in the enum's declaration order; an `#[autodiff]` variant contributes one device per
/// available base device, and a `#[distributed]` variant none, since its ranks are the other variants' devices,
/// already listed, and how many of them to group is the user's choice, not something found on the machine.
pub trait Dispatch: BackendDevice {
    /// The generated dispatch backend; its devices are the local variants.
    type Backend: Backend<Device = Self::Local>;
    /// `Self` for an enum without `#[distributed]` variants, else the generated enum of all other variants.
    /// Single-backend ops of [`Dispatch::Backend`] accept it.
    type Local: Dispatch<Local = Self::Local, Backend = Self::Backend, Base = Self::Base> + DeviceOf<Self::Backend>;
    /// The generated enum of the `#[backend]` variants alone, which an `#[autodiff]` variant wraps; `Infallible`
    /// for an enum without an `#[autodiff]` variant.
    type Base: Clone + Debug + PartialEq + Send + Sync + 'static;
    /// What a `#[distributed]` variant holds, `DistributedDevice<Self>`; `Infallible` for an enum without one.
    /// Both implement `DistributedOf<Self>`, which lets `distributed::run` accept any device of the enum.
    type Distributed: DistributedOf<Self> + Clone + Debug + PartialEq + Send + Sync + 'static;

    /// The bare name of every compiled-in variant, as `FromStr` reads it alone: one per variant, and
    /// `autodiff:<base>` for each base of an `#[autodiff]` variant. A bare `#[backend]` name stands for its device
    /// type's `Default` device, and `name:<device>` for any other (`candle:cuda:1`); a bare `#[distributed]` name
    /// stands for two in-process ranks on the first local device. These are the choices a bad name lists.
    fn names() -> &'static [&'static str];

    /// Splits the device into a local device (single-backend ops) or the distributed device (collectives).
    fn route(&self) -> Route<Self::Local, Self::Distributed>;

    /// Whether the device is a `#[distributed]` variant.
    fn is_distributed(&self) -> bool;
}

/// A device after routing: either local, or distributed.
#[derive(Clone, Debug, PartialEq)]
pub enum Route<L, C> {
    /// Single-backend ops accept it.
    Local(L),
    /// Only distributed-aware ops accept it.
    Distributed(C),
}

/// The device of an `#[autodiff]` variant: one of the enum's `#[backend]` devices, whose backend `Autodiff` wraps.
///
/// It can only hold a base device, so an autodiff device inside an autodiff device cannot be built.
pub struct AutodiffDevice<D: Dispatch> {
    base: D::Base,
}

impl<D: Dispatch> AutodiffDevice<D> {
    /// The autodiff device over `base`.
    pub fn new(base: D::Base) -> Self {
        Self { base }
    }

    /// The base device, whose backend `Autodiff` wraps.
    pub fn base(&self) -> &D::Base {
        &self.base
    }

    /// The base device, by value.
    pub fn into_base(self) -> D::Base {
        self.base
    }
}

// Written by hand: a derive would demand `D: Clone` etc. of the enum instead of its base devices.
impl<D: Dispatch> Clone for AutodiffDevice<D> {
    fn clone(&self) -> Self {
        Self { base: self.base.clone() }
    }
}

impl<D: Dispatch> Debug for AutodiffDevice<D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("AutodiffDevice").field(&self.base).finish()
    }
}

impl<D: Dispatch> PartialEq for AutodiffDevice<D> {
    fn eq(&self, other: &Self) -> bool {
        self.base == other.base
    }
}

/// Writes the base device's name; the enum's `Display` puts the variant's name in front (`autodiff:candle`).
impl<D: Dispatch> Display for AutodiffDevice<D>
where
    D::Base: Display,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        Display::fmt(&self.base, f)
    }
}

impl<D: Dispatch> FromStr for AutodiffDevice<D>
where
    D::Base: FromStr<Err = ParseDeviceError>,
{
    type Err = ParseDeviceError;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        name.parse().map(Self::new)
    }
}

// The distributed device is defined here, beside `Dispatch`, because each names the other: `Dispatch::Distributed`
// is bounded by `DistributedOf<Self>`, and `DistributedDevice<D>` holds `D::Local`s. Its constructors, `run` and the
// rest of its impls are in `distributed/device.rs`.

/// A group of ranks, each rank a local device of the derived enum `D` (any of its backends; ranks may differ,
/// since collectives work on host memory).
///
/// Two engines run the same API: ranks that are threads of this process ([`DistributedDevice::in_process`],
/// the default, no set-up), and one process per rank started by `mpirun` (`DistributedDevice::mpi`, cargo
/// feature `mpi`). Cloning is cheap; clones share the group.
pub struct DistributedDevice<D: Dispatch> {
    pub(crate) group: Arc<GroupSpec<D>>,
}

pub(crate) struct GroupSpec<D: Dispatch> {
    pub(crate) engine: EngineSpec<D>,
    pub(crate) timeout: Duration,
}

pub(crate) enum EngineSpec<D: Dispatch> {
    InProcess {
        ranks: Vec<D::Local>,
    },
    #[cfg(feature = "mpi")]
    Mpi {
        local: D::Local,
        world: Arc<MpiWorld>,
    },
}

/// What a `#[distributed]` variant holds, as the enum `D` sees it: a [`DistributedDevice<D>`], or `Infallible`
/// for an enum without such a variant. Lets [`crate::distributed::run`] take any derived device.
pub trait DistributedOf<D: Dispatch> {
    /// The distributed device the variant holds.
    fn as_distributed(&self) -> &DistributedDevice<D>;
}

impl<D: Dispatch> DistributedOf<D> for DistributedDevice<D> {
    fn as_distributed(&self) -> &DistributedDevice<D> {
        self
    }
}

impl<D: Dispatch> DistributedOf<D> for Infallible {
    fn as_distributed(&self) -> &DistributedDevice<D> {
        match *self {}
    }
}
