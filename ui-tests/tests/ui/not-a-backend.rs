use dispatch_core::backends::{Candle, CandleDevice, NdArray, NdArrayDevice};
use dispatch_core::{Backend, Dispatch};

pub struct NotABackend;

#[derive(Clone, Debug, PartialEq, Dispatch)]
pub enum Device {
    #[backend(NotABackend)]
    Cpu(CandleDevice),
}

fn main() {}
