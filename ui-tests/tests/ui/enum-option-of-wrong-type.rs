use dispatch_core::backends::{Candle, CandleDevice, NdArray, NdArrayDevice};
use dispatch_core::{Backend, Dispatch};

#[derive(Clone, Debug, PartialEq, Dispatch)]
#[dispatch(tensor = "not an ident")]
pub enum Device {
    #[backend(Candle)]
    Cpu(CandleDevice),
}

fn main() {}
