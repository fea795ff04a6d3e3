//! Every generated name can be chosen, and a renamed dependency is reached through `crate = ...`.

use dispatch_core as dc;
use dispatch_core::DType;
use dc::backends::{Candle, CandleDevice};
use dc::{Dispatch, DistributedDevice, Tensor};

#[derive(Clone, Debug, PartialEq, Dispatch)]
#[dispatch(crate = dc, backend = Engine, tensor = EngineTensor, local = Single)]
pub enum Device {
    #[backend(Candle)]
    #[dispatch(name = "candle")]
    Cpu(CandleDevice),
    // Compiled out, so its types are named by full path: an import used only here would warn as unused.
    #[cfg(all(unix, not(unix)))]
    #[backend(dc::backends::NdArray)]
    NdArray(dc::backends::NdArrayDevice),
    #[distributed]
    Cluster(DistributedDevice<Self>),
}

fn main() {
    let device = Single::Cpu(CandleDevice::default());
    let tensor: Result<Tensor<Engine>, _> = Tensor::zeros([2], DType::F32, &device);
    let _: Option<EngineTensor> = tensor.ok().map(Tensor::into_primitive);
    assert_eq!(Device::names(), &["candle", "cluster"]);
}
