use dispatch_core::backends::{Candle, CandleDevice};
use dispatch_core::{DType, Dispatch, DistributedDevice, Tensor};

#[derive(Clone, Debug, PartialEq, Dispatch)]
pub enum Device {
    #[backend(Candle)]
    Cpu(CandleDevice),
    #[distributed]
    Cluster(DistributedDevice<Self>),
}

fn main() {
    let device = Device::Cpu(CandleDevice::default());
    let _ = Tensor::<DeviceBackend>::zeros([2], DType::F32, &device);
}
