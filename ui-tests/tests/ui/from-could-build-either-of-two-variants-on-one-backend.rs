use dispatch_core::backends::{Candle, CandleDevice};
use dispatch_core::Dispatch;

/// Two variants on one backend hold one device type, however it is spelled: `From` could build either.
#[derive(Clone, Debug, PartialEq, Dispatch)]
pub enum Device {
    #[backend(Candle)]
    Cpu(CandleDevice),
    #[backend(Candle)]
    Gpu(dispatch_core::backends::CandleDevice),
}

fn main() {}
