use dispatch_core::backends::{Candle, NdArrayDevice};
use dispatch_core::Dispatch;

#[derive(Clone, Debug, PartialEq, Dispatch)]
pub enum Device {
    #[backend(Candle)]
    Cpu(NdArrayDevice),
}

fn main() {}
