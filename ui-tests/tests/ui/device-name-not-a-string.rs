use dispatch_core::backends::{Candle, CandleDevice};
use dispatch_core::Dispatch;

#[derive(Clone, Debug, PartialEq, Dispatch)]
pub enum Device {
    #[backend(Candle)]
    #[dispatch(name = host)]
    Candle(CandleDevice),
}

fn main() {}
