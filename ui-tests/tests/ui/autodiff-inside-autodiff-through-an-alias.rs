use dispatch_core::backends::{Autodiff, Candle, CandleDevice};
use dispatch_core::{AutodiffDevice, Dispatch};

/// An alias hides `Autodiff` from the derive's syntax check; the type check still catches it.
type Trained = Autodiff<Candle>;

#[derive(Clone, Debug, PartialEq, Dispatch)]
pub enum Device {
    #[backend(Trained)]
    Cpu(CandleDevice),
    #[autodiff]
    Autodiff(AutodiffDevice<Self>),
}

fn main() {}
