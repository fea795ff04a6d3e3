use dispatch_core::backends::CandleDevice;
use dispatch_core::Dispatch;

pub struct NotABackend;

#[derive(Clone, Debug, PartialEq, Dispatch)]
pub enum Device {
    #[backend(NotABackend)]
    Cpu(CandleDevice),
}

fn main() {}
