//! The device enum of group 2 with an `#[autodiff]` variant: the same training step through the derived backend,
//! which dispatches every op of the step to `Autodiff<Candle>` or `Autodiff<NdArray>`.

use dispatch_core::backends::{Candle, CandleDevice, NdArray, NdArrayDevice};
use dispatch_core::{AutodiffDevice, Dispatch};

#[derive(Clone, Debug, PartialEq, Dispatch)]
pub enum Device {
    #[backend(Candle)]
    Candle(CandleDevice),
    #[backend(NdArray)]
    NdArray(NdArrayDevice),
    #[autodiff]
    Autodiff(AutodiffDevice<Self>),
}

/// The autodiff device over the CPU device of `base`.
pub fn autodiff(base: DeviceBase) -> Device {
    Device::Autodiff(AutodiffDevice::new(base))
}
