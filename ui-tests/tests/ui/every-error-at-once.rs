use dispatch_core::backends::{Candle, CandleDevice, NdArray, NdArrayDevice};
use dispatch_core::Dispatch;

#[derive(Clone, Debug, PartialEq, Dispatch)]
#[dispatch(locl = Local)]
pub enum Device {
    #[backend(Candle)]
    #[dispatch(name = "a:b")]
    Cpu(CandleDevice),
    NdArray(NdArrayDevice),
    #[backend(NdArray)]
    Unit,
}

fn main() {}
