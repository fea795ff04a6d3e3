use dispatch_core::backends::{Candle, CandleDevice};
use dispatch_core::Dispatch;

#[derive(Clone, Debug, PartialEq, Dispatch)]
#[dispatch(backnd = MyBackend)]
pub enum Device {
    #[backend(Candle)]
    Cpu(CandleDevice),
}

fn main() {}
