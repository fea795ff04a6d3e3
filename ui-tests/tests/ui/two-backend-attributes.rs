use dispatch_core::backends::{Candle, CandleDevice, NdArray};
use dispatch_core::Dispatch;

#[derive(Clone, Debug, PartialEq, Dispatch)]
pub enum Device {
    #[backend(Candle)]
    #[backend(NdArray)]
    Cpu(CandleDevice),
}

fn main() {}
