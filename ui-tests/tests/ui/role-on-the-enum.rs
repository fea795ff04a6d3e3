use dispatch_core::backends::{Candle, CandleDevice};
use dispatch_core::Dispatch;

#[derive(Clone, Debug, PartialEq, Dispatch)]
#[autodiff]
pub enum Device {
    #[backend(Candle)]
    Cpu(CandleDevice),
}

fn main() {}
