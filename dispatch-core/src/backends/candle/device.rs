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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_device_is_the_cpu_and_round_trips_through_its_name() {
        let cpu = CandleDevice::default();
        assert_eq!(cpu, CandleDevice::cpu());
        assert_eq!(cpu.to_string(), "cpu");
        assert_eq!("cpu".parse::<CandleDevice>().unwrap(), cpu);
    }

    #[test]
    fn bad_names_list_the_choices_or_say_what_is_wrong() {
        let unknown = "gpu".parse::<CandleDevice>().unwrap_err();
        assert_eq!(unknown.choices(), DEVICE_NAMES);
        let bad_ordinal = "cuda:x".parse::<CandleDevice>().unwrap_err();
        assert!(bad_ordinal.to_string().contains("non-negative integer"), "{bad_ordinal}");
    }

    #[cfg(not(feature = "cuda"))]
    #[test]
    fn cuda_names_need_the_cuda_feature() {
        let error = "cuda:0".parse::<CandleDevice>().unwrap_err();
        assert!(error.to_string().contains("`cuda` feature"), "{error}");
    }
}
