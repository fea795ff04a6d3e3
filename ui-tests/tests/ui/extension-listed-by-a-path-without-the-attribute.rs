use dispatch_core::backends::{Candle, CandleDevice};
use dispatch_core::Dispatch;

mod ops {
    use dispatch_core::{Backend, Result};

    /// A trait of ops in another module, not declared with `#[extension]`.
    pub trait Plain: Backend {
        fn twice(x: &Self::FloatTensor) -> Result<Self::FloatTensor>;
    }
}

#[derive(Clone, Debug, PartialEq, Dispatch)]
#[dispatch(extensions(ops::Plain))]
pub enum Device {
    #[backend(Candle)]
    Candle(CandleDevice),
}

fn main() {}
