use dispatch_core::backends::{Autodiff, Candle, CandleDevice};
use dispatch_core::{AutodiffDevice, Dispatch};

#[derive(Clone, Debug, PartialEq, Dispatch)]
pub enum Device {
    #[backend(Autodiff<Candle>)]
    Cpu(CandleDevice),
    #[autodiff]
    Autodiff(AutodiffDevice<Self>),
}

fn main() {}
