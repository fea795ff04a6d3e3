use dispatch_core::backends::{Candle, CandleDevice, NdArray, NdArrayDevice};
use dispatch_core::{Backend, Dispatch, Result, extension};

/// An extension that only candle implements.
#[extension]
pub trait Fused: Backend {
    fn fused_mul_add(a: &Self::FloatTensor, b: &Self::FloatTensor) -> Result<Self::FloatTensor>;
}

impl Fused for Candle {
    fn fused_mul_add(a: &Self::FloatTensor, b: &Self::FloatTensor) -> Result<Self::FloatTensor> {
        Candle::add(&Candle::mul(a, b)?, b)
    }
}

/// The ndarray variant cannot run `Fused`: the error is at its backend path.
#[derive(Clone, Debug, PartialEq, Dispatch)]
#[dispatch(extensions(Fused))]
pub enum Device {
    #[backend(Candle)]
    Candle(CandleDevice),
    #[backend(NdArray)]
    NdArray(NdArrayDevice),
}

fn main() {}
