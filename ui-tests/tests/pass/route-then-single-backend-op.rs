//! An enum with a `#[distributed]` variant is routed first; its local device then takes single-backend ops, and
//! distributed-aware code takes the cluster.

use dispatch_core::backends::{Candle, CandleDevice, NdArray, NdArrayDevice};
use dispatch_core::{Dispatch, DistributedDevice, Result, Route, Tensor};
use dispatch_core::DType;

#[derive(Clone, Debug, PartialEq, Dispatch)]
pub enum Device {
    #[backend(Candle)]
    Cpu(CandleDevice),
    #[backend(NdArray)]
    NdArray(NdArrayDevice),
    #[distributed]
    Cluster(DistributedDevice<Self>),
}

fn ones(device: &Device) -> Result<Vec<f32>> {
    match device.route() {
        Route::Local(device) => Tensor::<DeviceBackend>::ones([2], DType::F32, &device)?.to_vec(),
        Route::Distributed(cluster) => Ok(vec![cluster.world_size() as f32]),
    }
}

fn main() {
    let _ = ones(&Device::NdArray(NdArrayDevice));
}
