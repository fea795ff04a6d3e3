use dispatch_core::backends::{Candle, CandleDevice};
use dispatch_core::{AutodiffDevice, Dispatch};

/// One variant marked twice is one mistake: no "only one `#[autodiff]` variant" besides.
#[derive(Clone, Debug, PartialEq, Dispatch)]
pub enum Device {
    #[backend(Candle)]
    Cpu(CandleDevice),
    #[autodiff]
    #[autodiff]
    Autodiff(AutodiffDevice<Self>),
}

fn main() {}
