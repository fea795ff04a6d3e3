//! Design (b): the device enum a user writes, and the backend `#[derive(Dispatch)]` generates from it.

use dispatch_core::Dispatch;
use dispatch_core::backends::{Candle, CandleDevice, NdArray, NdArrayDevice};

#[derive(Clone, Debug, PartialEq, Dispatch)]
pub enum Device {
    #[backend(Candle)]
    Candle(CandleDevice),
    #[backend(NdArray)]
    NdArray(NdArrayDevice),
}
