use dispatch_core::backends::{Candle, CandleDevice};
use dispatch_core::{AutodiffDevice, Dispatch};

#[derive(Clone, Debug, PartialEq, Dispatch)]
pub enum Device {
    #[backend(Candle)]
    Cpu(CandleDevice),
    #[autodiff(Candle)]
    Autodiff(AutodiffDevice<Self>),
}

fn main() {}
