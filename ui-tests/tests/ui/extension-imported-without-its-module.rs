use dispatch_core::backends::{Candle, CandleDevice};
use dispatch_core::Dispatch;

mod ops {
    use dispatch_core::backends::Candle;
    use dispatch_core::{Backend, Result, extension};

    /// An extension declared in another module.
    #[extension]
    pub trait Fused: Backend {
        fn twice(x: &Self::FloatTensor) -> Result<Self::FloatTensor>;
    }

    impl Fused for Candle {
        fn twice(x: &Self::FloatTensor) -> Result<Self::FloatTensor> {
            Self::add(x, x)
        }
    }
}

// The trait alone: the module beside it, which holds its ops, is not in scope here.
use ops::Fused;

#[derive(Clone, Debug, PartialEq, Dispatch)]
#[dispatch(extensions(Fused))]
pub enum Device {
    #[backend(Candle)]
    Candle(CandleDevice),
}

fn main() {}
