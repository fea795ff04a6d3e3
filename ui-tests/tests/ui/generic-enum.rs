use dispatch_core::backends::{Candle, CandleDevice, NdArray, NdArrayDevice};
use dispatch_core::{Backend, Dispatch};

#[derive(Clone, Debug, PartialEq, Dispatch)]
pub enum Device<T> {
    #[backend(Candle)]
    Cpu(CandleDevice),
    #[backend(NdArray)]
    NdArray(NdArrayDevice, std::marker::PhantomData<T>),
}

fn main() {}
