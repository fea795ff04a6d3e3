//! Every way of writing a variant's field compiles to the same generated API: a plain path, an imported or fully
//! qualified projection, a type alias, a path through modules. `From<field>` exists for every field written by
//! name; a field written as a projection gets none (rustc cannot tell that it is not the enum itself), and
//! everything else.

use dispatch_core::backends::{Candle, CandleDevice, NdArray, NdArrayDevice};
use dispatch_core::{AutodiffDevice, Backend, Dispatch, DistributedDevice, Route, Tensor};

type CpuDevice = CandleDevice;

mod hardware {
    pub mod host {
        pub use dispatch_core::backends::{NdArray, NdArrayDevice};
    }
}

#[derive(Clone, Debug, PartialEq, Dispatch)]
pub enum Plain {
    #[backend(Candle)]
    Cpu(CandleDevice),
    #[backend(NdArray)]
    NdArray(NdArrayDevice),
    #[autodiff]
    Autodiff(AutodiffDevice<Self>),
    #[distributed]
    Cluster(DistributedDevice<Self>),
}

#[derive(Clone, Debug, PartialEq, Dispatch)]
pub enum Imported {
    #[backend(Candle)]
    Cpu(<Candle as Backend>::Device),
    #[backend(NdArray)]
    NdArray(<NdArray as Backend>::Device),
    #[autodiff]
    Autodiff(AutodiffDevice<Self>),
    #[distributed]
    Cluster(DistributedDevice<Self>),
}

#[derive(Clone, Debug, PartialEq, Dispatch)]
pub enum Qualified {
    #[backend(Candle)]
    Cpu(<Candle as dispatch_core::Backend>::Device),
    #[backend(NdArray)]
    NdArray(<NdArray as dispatch_core::Backend>::Device),
    #[autodiff]
    Autodiff(AutodiffDevice<Self>),
    #[distributed]
    Cluster(DistributedDevice<Self>),
}

#[derive(Clone, Debug, PartialEq, Dispatch)]
pub enum Aliased {
    #[backend(Candle)]
    Cpu(CpuDevice),
    #[backend(NdArray)]
    NdArray(NdArrayDevice),
    #[autodiff]
    Autodiff(AutodiffDevice<Self>),
    #[distributed]
    Cluster(DistributedDevice<Self>),
}

#[derive(Clone, Debug, PartialEq, Dispatch)]
pub enum ThroughModules {
    #[backend(dispatch_core::backends::Candle)]
    Cpu(dispatch_core::backends::CandleDevice),
    #[backend(hardware::host::NdArray)]
    NdArray(hardware::host::NdArrayDevice),
    #[autodiff]
    Autodiff(dispatch_core::AutodiffDevice<Self>),
    #[distributed]
    Cluster(dispatch_core::DistributedDevice<Self>),
}

/// Types handed over by a macro as `ty` fragments, a projection among them.
macro_rules! device_enum {
    ($name:ident, $cpu:ty, $ndarray:ty) => {
        #[derive(Clone, Debug, PartialEq, Dispatch)]
        pub enum $name {
            #[backend(Candle)]
            Cpu($cpu),
            #[backend(NdArray)]
            NdArray($ndarray),
            #[autodiff]
            Autodiff(AutodiffDevice<Self>),
            #[distributed]
            Cluster(DistributedDevice<Self>),
        }
    };
}

device_enum!(FromMacro, <Candle as Backend>::Device, NdArrayDevice);

/// Two device types whose paths end alike, `cpu::Dev` and `host::Dev`: each gets its `From`.
mod cpu {
    pub type Dev = dispatch_core::backends::CandleDevice;
}
mod host {
    pub type Dev = dispatch_core::backends::NdArrayDevice;
}

#[derive(Clone, Debug, PartialEq, Dispatch)]
pub enum SameLastSegment {
    #[backend(Candle)]
    Cpu(cpu::Dev),
    #[backend(NdArray)]
    NdArray(host::Dev),
}

/// The API every spelling shares, used through `Dispatch` alone: names, parsing, the devices available, ops on a
/// routed device, gradients on the autodiff variant.
fn same_api<D: Dispatch>() {
    assert_eq!(D::names(), &["cpu", "ndarray", "autodiff:cpu", "autodiff:ndarray", "cluster"]);
    for name in ["cpu", "cpu:cpu", "ndarray", "autodiff:cpu:cpu", "cluster:cpu,autodiff:ndarray"] {
        let device: D = name.parse().unwrap();
        assert_eq!(device.to_string().parse::<D>().unwrap(), device);
    }
    assert_eq!(D::available().len(), 4);
    let Route::Local(local) = "autodiff:ndarray".parse::<D>().unwrap().route() else { panic!("a local device") };
    let x = Tensor::<D::Backend>::from_vec(vec![1.0, 2.0], [2], &local).unwrap();
    assert_eq!(x.mul(&x).unwrap().to_vec().unwrap(), vec![1.0, 4.0]);
}

fn main() {
    same_api::<Plain>();
    same_api::<Imported>();
    same_api::<Qualified>();
    same_api::<Aliased>();
    same_api::<ThroughModules>();
    same_api::<FromMacro>();

    assert_eq!(Plain::from(CandleDevice::cpu()), Plain::Cpu(CandleDevice::cpu()));
    assert_eq!(Plain::from(NdArrayDevice), Plain::NdArray(NdArrayDevice));
    assert_eq!(Aliased::from(CpuDevice::cpu()), Aliased::Cpu(CandleDevice::cpu()));
    assert_eq!(ThroughModules::from(NdArrayDevice), ThroughModules::NdArray(NdArrayDevice));
    assert_eq!(ThroughModules::from(CandleDevice::cpu()), ThroughModules::Cpu(CandleDevice::cpu()));
    assert_eq!(SameLastSegment::from(CandleDevice::cpu()), SameLastSegment::Cpu(CandleDevice::cpu()));
    assert_eq!(SameLastSegment::from(NdArrayDevice), SameLastSegment::NdArray(NdArrayDevice));
    assert_eq!(FromMacro::from(NdArrayDevice), FromMacro::NdArray(NdArrayDevice));
    // A projection gets every item but `From`; its local enum converts as every local enum does.
    assert_eq!(Imported::from(ImportedLocal::NdArray(NdArrayDevice)), Imported::NdArray(NdArrayDevice));
    assert_eq!(Qualified::from(QualifiedLocal::Cpu(CandleDevice::cpu())), Qualified::Cpu(CandleDevice::cpu()));
}
