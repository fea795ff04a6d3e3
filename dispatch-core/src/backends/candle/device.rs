//! The candle device: a newtype over `candle_core::Device`, CPU by default.

use std::fmt;
use std::str::FromStr;

use crate::backend::Backend;
use crate::device::{BackendDevice, DeviceOf, ParseDeviceError};

/// A device of the [`Candle`](super::Candle) backend: the CPU (the default), or a CUDA GPU with the `cuda` feature.
///
/// Displayed and parsed as `cpu` or `cuda:N` (and `metal:N`, for a Metal device built with
/// [`CandleDevice::from_candle`] where candle has Metal support). Two devices are equal when they are the same
/// physical device: the CPU, or the same GPU ordinal, so that a device read back from its name equals the one
/// written.
#[derive(Clone, Debug)]
pub struct CandleDevice(candle_core::Device);

impl CandleDevice {
    /// The host CPU.
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

    /// Wraps a device of candle's own.
    pub fn from_candle(device: candle_core::Device) -> Self {
        Self(device)
    }

    /// The device as candle sees it.
    pub fn as_candle(&self) -> &candle_core::Device {
        &self.0
    }
}

impl Default for CandleDevice {
    fn default() -> Self {
        Self::cpu()
    }
}

// By location rather than `same_device`: candle gives every `Device::new_cuda` its own identity, so a GPU device read
// back from `cuda:1` would otherwise never equal the one written. Two handles on one GPU are the same device here;
// candle itself still refuses to mix their tensors, which `Candle`'s ops return as an `Err`.
impl PartialEq for CandleDevice {
    fn eq(&self, other: &Self) -> bool {
        self.0.location() == other.0.location()
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

const DEVICE_NAMES: &[&str] = &["cpu", "cuda:<ordinal>", "metal:<ordinal>"];

impl FromStr for CandleDevice {
    type Err = ParseDeviceError;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        if name == "cpu" {
            return Ok(Self::cpu());
        }
        if let Some(ordinal) = name.strip_prefix("cuda:") {
            return open_cuda(name, parse_ordinal(name, ordinal, "CUDA")?);
        }
        if let Some(ordinal) = name.strip_prefix("metal:") {
            let ordinal = parse_ordinal(name, ordinal, "Metal")?;
            return candle_core::Device::new_metal(ordinal)
                .map(Self)
                .map_err(|error| ParseDeviceError::invalid(name, error.to_string()));
        }
        Err(ParseDeviceError::unknown(name, DEVICE_NAMES))
    }
}

fn parse_ordinal(name: &str, ordinal: &str, kind: &str) -> Result<usize, ParseDeviceError> {
    ordinal
        .parse()
        .map_err(|_| ParseDeviceError::invalid(name, format!("the {kind} ordinal must be a non-negative integer")))
}

/// Every CUDA GPU that opens (with the `cuda` feature), in ordinal order, then the CPU: the first is the most
/// capable device here, which [`BackendDevice::best_available`] picks.
impl BackendDevice for CandleDevice {
    fn available() -> Vec<Self> {
        let mut devices = cuda_devices();
        devices.push(Self::cpu());
        devices
    }
}

/// Ordinals are numbered from 0 without gaps, so the first one that does not open ends the list.
#[cfg(feature = "cuda")]
fn cuda_devices() -> Vec<CandleDevice> {
    (0..).map_while(|ordinal| CandleDevice::cuda(ordinal).ok()).collect()
}

#[cfg(not(feature = "cuda"))]
fn cuda_devices() -> Vec<CandleDevice> {
    Vec::new()
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
        let bad_ordinal = "metal:-1".parse::<CandleDevice>().unwrap_err();
        assert!(bad_ordinal.to_string().contains("Metal ordinal must be a non-negative integer"), "{bad_ordinal}");
    }

    #[test]
    fn every_available_device_round_trips_through_its_name_and_the_cpu_comes_last() {
        let available = CandleDevice::available();
        assert_eq!(available.last(), Some(&CandleDevice::cpu()));
        for device in &available {
            assert_eq!(device.to_string().parse::<CandleDevice>().unwrap(), *device);
        }
        #[cfg(not(feature = "cuda"))]
        assert_eq!(available, [CandleDevice::cpu()]);
        assert_eq!(CandleDevice::best_available(), available.first().cloned());
    }

    #[test]
    fn metal_without_candle_metal_support_is_an_error_not_a_panic() {
        let error = "metal:0".parse::<CandleDevice>().unwrap_err();
        assert_eq!(error.input(), "metal:0");
        assert!(error.choices().is_empty(), "{error}");
    }

    #[cfg(not(feature = "cuda"))]
    #[test]
    fn cuda_names_need_the_cuda_feature() {
        let error = "cuda:0".parse::<CandleDevice>().unwrap_err();
        assert!(error.to_string().contains("`cuda` feature"), "{error}");
    }
}
