//! The candle device: a newtype over `candle_core::Device`, CPU by default.

use std::fmt;
use std::str::FromStr;

use crate::backend::Backend;
use crate::device::{DeviceOf, ParseDeviceError};

/// A device of the [`Candle`](super::Candle) backend: the CPU (the default), or a CUDA GPU with the `cuda` feature.
///
/// Displayed and parsed as `cpu` or `cuda:N`. Two devices are equal when candle considers them the same device.
#[derive(Clone, Debug)]
pub struct CandleDevice(candle_core::Device);

impl CandleDevice {
    pub fn cpu() -> Self {
        Self(candle_core::Device::Cpu)
    }

    /// The CUDA GPU with this ordinal; an `Err` if it cannot be opened.
    #[cfg(feature = "cuda")]
    pub fn cuda(ordinal: usize) -> crate::error::Result<Self> {
        candle_core::Device::new_cuda(ordinal)
            .map(Self)
            .map_err(|error| super::error::candle_error("CandleDevice::cuda", error))
    }

    pub fn from_candle(device: candle_core::Device) -> Self {
        Self(device)
    }

    pub fn as_candle(&self) -> &candle_core::Device {
        &self.0
    }
}

impl Default for CandleDevice {
    fn default() -> Self {
        Self::cpu()
    }
}

impl PartialEq for CandleDevice {
    fn eq(&self, other: &Self) -> bool {
        self.0.same_device(&other.0)
    }
}

impl fmt::Display for CandleDevice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0.location() {
            candle_core::DeviceLocation::Cpu => f.write_str("cpu"),
            candle_core::DeviceLocation::Cuda { gpu_id } => write!(f, "cuda:{gpu_id}"),
            candle_core::DeviceLocation::Metal { gpu_id } => write!(f, "metal:{gpu_id}"),
        }
    }
}

const DEVICE_NAMES: &[&str] = &["cpu", "cuda:<ordinal>"];

impl FromStr for CandleDevice {
    type Err = ParseDeviceError;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        if name == "cpu" {
            return Ok(Self::cpu());
        }
        let Some(ordinal) = name.strip_prefix("cuda:") else {
            return Err(ParseDeviceError::unknown(name, DEVICE_NAMES));
        };
        let ordinal: usize = ordinal
            .parse()
            .map_err(|_| ParseDeviceError::invalid(name, "the CUDA ordinal must be a non-negative integer"))?;
        open_cuda(name, ordinal)
    }
}

#[cfg(feature = "cuda")]
fn open_cuda(name: &str, ordinal: usize) -> Result<CandleDevice, ParseDeviceError> {
    CandleDevice::cuda(ordinal).map_err(|error| ParseDeviceError::invalid(name, error.to_string()))
}

#[cfg(not(feature = "cuda"))]
fn open_cuda(name: &str, _ordinal: usize) -> Result<CandleDevice, ParseDeviceError> {
    Err(ParseDeviceError::invalid(name, "dispatch-core was built without the `cuda` feature"))
}

/// Every backend whose device is a candle device accepts it, e.g. `Candle` and `Autodiff<Candle>`.
impl<B: Backend<Device = CandleDevice>> DeviceOf<B> for CandleDevice {
    fn as_device(&self) -> &CandleDevice {
        self
    }
}
