use dispatch_core::backends::{Candle, CandleDevice};
use dispatch_core::{AutodiffDevice, Dispatch};

#[derive(Clone, Debug, PartialEq, Dispatch)]
pub enum Device {
    #[backend(Candle)]
    Cpu(CandleDevice),
    #[autodiff]
    Autodiff(AutodiffDevice<Self>),
    #[autodiff]
    #[dispatch(name = "grad")]
    Grad(AutodiffDevice<Self>),
}

fn main() {}
