use dispatch_core::backends::{Candle, CandleDevice, NdArray, NdArrayDevice};
use dispatch_core::{AutodiffDevice, Backend, Dispatch, Result, extension};

/// An extension both base backends implement, but `Autodiff` does not: it has no backward rule.
#[extension]
pub trait Fused: Backend {
    fn fused_mul_add(a: &Self::FloatTensor, b: &Self::FloatTensor) -> Result<Self::FloatTensor>;
}

impl Fused for Candle {
    fn fused_mul_add(a: &Self::FloatTensor, b: &Self::FloatTensor) -> Result<Self::FloatTensor> {
        Candle::add(&Candle::mul(a, b)?, b)
    }
}

impl Fused for NdArray {
    fn fused_mul_add(a: &Self::FloatTensor, b: &Self::FloatTensor) -> Result<Self::FloatTensor> {
        NdArray::add(&NdArray::mul(a, b)?, b)
    }
}

/// The autodiff variant would cut the graph: the error is at the variant, and says how to give it a rule.
#[derive(Clone, Debug, PartialEq, Dispatch)]
#[dispatch(extensions(Fused))]
pub enum Device {
    #[backend(Candle)]
    Candle(CandleDevice),
    #[backend(NdArray)]
    NdArray(NdArrayDevice),
    #[autodiff]
    Autodiff(AutodiffDevice<Self>),
}

fn main() {}
