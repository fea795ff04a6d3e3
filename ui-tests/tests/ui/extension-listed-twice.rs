use dispatch_core::backends::{Candle, CandleDevice};
use dispatch_core::{Backend, Dispatch, Result, extension};

#[extension]
pub trait Fused: Backend {
    fn twice(x: &Self::FloatTensor) -> Result<Self::FloatTensor>;
}

impl Fused for Candle {
    fn twice(x: &Self::FloatTensor) -> Result<Self::FloatTensor> {
        Candle::add(x, x)
    }
}

#[derive(Clone, Debug, PartialEq, Dispatch)]
#[dispatch(extensions(Fused, Fused))]
pub enum Device {
    #[backend(Candle)]
    Candle(CandleDevice),
}

fn main() {}
