use dispatch_core::backends::{Candle, CandleDevice, NdArray, NdArrayDevice};
use dispatch_core::Dispatch;

#[derive(Clone, Debug, PartialEq, Dispatch)]
pub enum Device {
    #[backend(Candle)]
    Cpu(CandleDevice),
    #[backend(NdArray)]
    #[dispatch(name = "cpu")]
    NdArray(NdArrayDevice),
}

fn main() {}
