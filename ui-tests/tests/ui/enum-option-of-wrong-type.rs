use dispatch_core::backends::{Candle, CandleDevice};
use dispatch_core::Dispatch;

#[derive(Clone, Debug, PartialEq, Dispatch)]
#[dispatch(tensor = "not an ident")]
pub enum Device {
    #[backend(Candle)]
    Cpu(CandleDevice),
}

fn main() {}
