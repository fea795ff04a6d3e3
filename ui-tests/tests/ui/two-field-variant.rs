use dispatch_core::backends::{Candle, CandleDevice, NdArrayDevice};
use dispatch_core::Dispatch;

#[derive(Clone, Debug, PartialEq, Dispatch)]
pub enum Device {
    #[backend(Candle)]
    Cpu(CandleDevice, NdArrayDevice),
}

fn main() {}
