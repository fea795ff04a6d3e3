use dispatch_core::backends::{Candle, CandleDevice};
use dispatch_core::Dispatch;

#[derive(Clone, Debug, PartialEq, Dispatch)]
#[dispatch(no_from)]
pub enum Device {
    #[backend(Candle)]
    Candle(CandleDevice),
}

fn main() {}
