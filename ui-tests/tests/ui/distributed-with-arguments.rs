use dispatch_core::backends::{Candle, CandleDevice};
use dispatch_core::{Dispatch, DistributedDevice};

#[derive(Clone, Debug, PartialEq, Dispatch)]
pub enum Device {
    #[backend(Candle)]
    Cpu(CandleDevice),
    #[distributed(ranks = 2)]
    Cluster(DistributedDevice<Self>),
}

fn main() {}
