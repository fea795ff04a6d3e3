use dispatch_core::backends::{Candle, CandleDevice};
use dispatch_core::{Backend, Dispatch, Result};

/// A trait of ops, but not declared with `#[extension]`: a derived enum cannot dispatch it.
pub trait Plain: Backend {
    fn twice(x: &Self::FloatTensor) -> Result<Self::FloatTensor>;
}

#[derive(Clone, Debug, PartialEq, Dispatch)]
#[dispatch(extensions(Plain))]
pub enum Device {
    #[backend(Candle)]
    Candle(CandleDevice),
}

fn main() {}
