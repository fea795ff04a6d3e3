use dispatch_core::backends::{Candle, CandleDevice};
use dispatch_core::{Backend, Dispatch, extension};

/// A `Result` of the user's own, with another error type than `dispatch_core::Error`.
pub type Result<T> = std::result::Result<T, String>;

#[extension]
pub trait Fused: Backend {
    fn twice(x: &Self::FloatTensor) -> Result<Self::FloatTensor>;
}

impl Fused for Candle {
    fn twice(x: &Self::FloatTensor) -> Result<Self::FloatTensor> {
        Candle::add(x, x).map_err(|error| error.to_string())
    }
}

#[derive(Clone, Debug, PartialEq, Dispatch)]
#[dispatch(extensions(Fused))]
pub enum Device {
    #[backend(Candle)]
    Candle(CandleDevice),
}

fn main() {}
