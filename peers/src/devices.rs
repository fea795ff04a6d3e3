//! The derived device enum of the peers' examples, and picking a device that records gradients by name
//! (`autodiff:ndarray`, `autodiff:candle`), as a user of dispatch does.

use dispatch_core::backends::{Candle, CandleDevice, NdArray, NdArrayDevice};
use dispatch_core::{AutodiffDevice, Dispatch, Error, Result};

/// candle and ndarray, each also under autodiff.
#[derive(Clone, Debug, PartialEq, Dispatch)]
pub enum Device {
    #[backend(Candle)]
    Candle(CandleDevice),
    #[backend(NdArray)]
    NdArray(NdArrayDevice),
    #[autodiff]
    Autodiff(AutodiffDevice<Self>),
}

/// The device `name` parses to, which must record gradients (an `autodiff:` one): training needs them.
pub fn training_device(name: &str) -> Result<Device> {
    let device: Device = name.parse().map_err(|error| Error::invalid("training_device", format!("{error}")))?;
    match device {
        Device::Autodiff(_) => Ok(device),
        other => Err(Error::invalid(
            "training_device",
            format!("`{other}` records no gradients; name an autodiff device, e.g. autodiff:{other}"),
        )),
    }
}
