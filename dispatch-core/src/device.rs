//! Devices: what single-backend ops accept, what `#[derive(Dispatch)]` implements for the user's enum, and the
//! device an `#[autodiff]` variant holds.

use std::fmt::{self, Debug, Display};
use std::str::FromStr;

use crate::backend::Backend;
use crate::distributed::DistributedOf;

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
    fn as_device(&self) -> &B::Device;
}

/// Implemented by `#[derive(Dispatch)]` for the user's device enum (and for the local enum it generates).
pub trait Dispatch:
    Clone + Debug + PartialEq + Display + FromStr<Err = ParseDeviceError> + Send + Sync + 'static
{
    /// The generated dispatch backend; its devices are the local variants.
    type Backend: Backend<Device = Self::Local>;
    /// `Self` for an enum without `#[distributed]` variants, else the generated enum of all other variants.
    type Local: Dispatch<Local = Self::Local, Backend = Self::Backend, Base = Self::Base>;
    /// The generated enum of the `#[backend]` variants alone, which an `#[autodiff]` variant wraps; `Infallible`
    /// for an enum without an `#[autodiff]` variant.
    type Base: Clone + Debug + PartialEq + Send + Sync + 'static;
    /// What a `#[distributed]` variant holds, `DistributedDevice<Self>`; `Infallible` for an enum without one.
    /// Both implement `DistributedOf<Self>`, which lets `distributed::run` accept any device of the enum.
    type Distributed: DistributedOf<Self> + Clone + Debug + PartialEq + Send + Sync + 'static;

    /// The name of every compiled-in device, as `Display` writes them and `FromStr` reads them: one per variant
    /// (`autodiff:<base>` for each base of an `#[autodiff]` variant). A `#[backend]` variant's name stands for its
    /// device type's `Default`.
    fn names() -> &'static [&'static str];

    /// Splits the device into a local device (single-backend ops) or the distributed device (collectives).
    fn route(&self) -> Route<Self::Local, Self::Distributed>;

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
    pub fn new(base: D::Base) -> Self {
        Self { base }
    }

    pub fn base(&self) -> &D::Base {
        &self.base
    }

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

/// A device name that no compiled-in device answers to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseDeviceError {
    input: String,
    choices: Vec<&'static str>,
    reason: Option<String>,
}

impl ParseDeviceError {
    /// `input` names no device; `choices` are the names that would have been accepted.
    pub fn unknown(input: &str, choices: &[&'static str]) -> Self {
        Self { input: input.to_owned(), choices: choices.to_vec(), reason: None }
    }

    /// `input` names a device, but what follows the name is not valid for it.
    pub fn invalid(input: &str, reason: impl Into<String>) -> Self {
        Self { input: input.to_owned(), choices: Vec::new(), reason: Some(reason.into()) }
    }

    pub fn input(&self) -> &str {
        &self.input
    }

    pub fn choices(&self) -> &[&'static str] {
        &self.choices
    }
}

impl Display for ParseDeviceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.reason {
            Some(reason) => write!(f, "invalid device `{}`: {reason}", self.input),
            None if self.choices.is_empty() => {
                write!(f, "unknown device `{}`: no device is compiled in", self.input)
            }
            None => write!(f, "unknown device `{}`; expected one of: {}", self.input, self.choices.join(", ")),
        }
    }
}

impl std::error::Error for ParseDeviceError {}
