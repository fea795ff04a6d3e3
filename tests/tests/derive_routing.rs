//! An enum with a `#[distributed]` variant: its local enum, routing, names of distributed devices.

mod derive_support;

use derive_support::host_backend::{HostBackend, HostDevice};
use dispatch_core::DType;
use dispatch_core::{Backend, Dispatch, DistributedDevice, Route, Tensor};

#[derive(Clone, Debug, PartialEq, Dispatch)]
pub enum Device {
    #[backend(HostBackend)]
    Host(HostDevice),
    #[distributed]
    Cluster(DistributedDevice<Self>),
}

#[test]
fn route_splits_local_and_distributed_devices() {
    let host = Device::Host(HostDevice);
    assert!(!host.is_distributed());
    assert_eq!(host.route(), Route::Local(DeviceLocal::Host(HostDevice)));

    let cluster = DistributedDevice::<Device>::in_process(vec![DeviceLocal::Host(HostDevice); 3]).unwrap();
    let device = Device::from(cluster.clone());
    assert!(device.is_distributed());
    assert_eq!(device.route(), Route::Distributed(cluster));
}

#[test]
fn a_routed_device_takes_single_backend_ops() {
    let device: Device = "host".parse().unwrap();
    let Route::Local(local) = device.route() else { panic!("host is local") };
    let tensor = Tensor::<DeviceBackend>::full([2], 3.0, DType::F32, &local).unwrap();
    assert_eq!(<DeviceBackend as Backend>::name(), "device", "named after the user's enum, not its local enum");
    assert_eq!(tensor.to_vec().unwrap(), vec![3.0, 3.0]);
    assert_eq!(tensor.device(), local);
    assert_eq!(Device::from(local), device);
}

#[test]
fn distributed_devices_parse_and_display_with_their_ranks() {
    assert_eq!(Device::names(), &["host", "cluster"]);
    assert_eq!(DeviceLocal::names(), &["host"]);

    let default: Device = "cluster".parse().unwrap();
    assert_eq!(default.to_string(), "cluster:host,host");
    let Route::Distributed(cluster) = default.route() else { panic!("cluster is distributed") };
    assert_eq!(cluster.world_size(), 2);

    let three: Device = "cluster:host,host,host".parse().unwrap();
    assert_eq!(three.to_string(), "cluster:host,host,host");
    assert_eq!(three.to_string().parse::<Device>().unwrap(), three);

    let error = "cluster:host,nope".parse::<Device>().unwrap_err();
    assert_eq!(error.input(), "nope");
    assert_eq!(error.choices(), &["host"]);
    assert_eq!("clusterx".parse::<Device>().unwrap_err().choices(), &["host", "cluster"]);
}

/// The enum of the README: every role at once, one variant behind a compound cfg.
mod every_role {
    use super::*;
    use dispatch_core::AutodiffDevice;
    use dispatch_core::backends::{Candle, CandleDevice, NdArray, NdArrayDevice};
    use dispatch_nn::models::classifier::Classifier;

    #[derive(Clone, Debug, PartialEq, Dispatch)]
    pub enum Device {
        #[backend(Candle)]
        Cpu(CandleDevice),
        #[cfg(any(unix, windows, target_os = "none"))]
        #[backend(NdArray)]
        NdArray(NdArrayDevice),
        #[autodiff]
        Autodiff(AutodiffDevice<Self>),
        #[distributed]
        Cluster(DistributedDevice<Self>),
    }

    #[test]
    fn the_local_enum_holds_every_variant_but_the_distributed_one() {
        assert_eq!(Device::names(), &["cpu", "ndarray", "autodiff:cpu", "autodiff:ndarray", "cluster"]);
        assert_eq!(DeviceLocal::names(), &["cpu", "ndarray", "autodiff:cpu", "autodiff:ndarray"]);
        let device: Device = "autodiff:ndarray".parse().unwrap();
        let local = DeviceLocal::Autodiff(AutodiffDevice::new(DeviceBase::NdArray(NdArrayDevice)));
        assert_eq!(device.route(), Route::Local(local.clone()));
        assert_eq!(Device::from(local), device);
    }

    #[test]
    fn a_cluster_of_mixed_ranks_parses_displays_and_routes() {
        let device: Device = "cluster:autodiff:ndarray,cpu".parse().unwrap();
        assert_eq!(device.to_string(), "cluster:autodiff:ndarray,cpu");
        let Route::Distributed(cluster) = device.route() else { panic!("a cluster is distributed") };
        assert_eq!(cluster.local_devices()[1], DeviceLocal::Cpu(CandleDevice::default()));
        assert!("cluster:cluster".parse::<Device>().is_err(), "a rank is a local device");
    }

    #[test]
    fn a_routed_autodiff_device_trains() {
        let Route::Local(device) = "autodiff:cpu".parse::<Device>().unwrap().route() else { panic!("local") };
        let x = Tensor::<DeviceBackend>::from_vec(vec![1.0, -1.0, 0.5, 2.0], [2, 2], &device).unwrap();
        let targets = Tensor::<DeviceBackend>::from_vec(vec![1.0, 0.0, 0.0, 1.0], [2, 2], &device).unwrap();
        let model = Classifier::<DeviceBackend>::new(2, 4, 2, 3, &device).unwrap();
        let by_autodiff = model.gradients_by_autodiff(&x, &targets).unwrap();
        let by_hand = model.gradients_by_hand(&x, &targets).unwrap();
        for (a, h) in by_autodiff.tensors().iter().zip(by_hand.tensors()) {
            dispatch_tests::assert_close(&a.to_vec().unwrap(), &h.to_vec().unwrap(), 1e-5);
        }
    }
}
