use dispatch_core::backends::{CandleDevice, NdArrayDevice};
use dispatch_core::Dispatch;

#[derive(Clone, Debug, PartialEq, Dispatch)]
pub enum Device<T> {
    #[backend(Candle)]
    Cpu(CandleDevice),
    #[backend(NdArray)]
    NdArray(NdArrayDevice, std::marker::PhantomData<T>),
}

fn main() {}
