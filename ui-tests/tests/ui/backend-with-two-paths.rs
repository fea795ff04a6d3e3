use dispatch_core::backends::CandleDevice;
use dispatch_core::Dispatch;

#[derive(Clone, Debug, PartialEq, Dispatch)]
pub enum Device {
    #[backend(Candle, NdArray)]
    Cpu(CandleDevice),
}

fn main() {}
