use dispatch_core::backends::{Candle, CandleDevice, NdArray, NdArrayDevice};
use dispatch_core::{Backend, Dispatch};

/// Two variants holding one type: `From<CandleDevice>` could build either, so the second must opt out.
/// A projection of the same type gets no `From` and needs no opt-out.
#[derive(Clone, Debug, PartialEq, Dispatch)]
pub enum Device {
    #[backend(Candle)]
    Cpu(CandleDevice),
    #[backend(NdArray)]
    NdArray(NdArrayDevice),
    #[backend(Candle)]
    Gpu(CandleDevice),
    #[backend(Candle)]
    Spare(<Candle as Backend>::Device),
}

fn main() {}
