use dispatch_core::backends::{Candle, CandleDevice};
use dispatch_core::Dispatch;

#[derive(Clone, Debug, PartialEq, Dispatch)]
pub enum Device {
    #[backend(Candle)]
    #[dispatch(nmae = "cpu")]
    Cpu(CandleDevice),
}

fn main() {}
