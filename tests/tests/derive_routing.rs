//! An enum with a `#[distributed]` variant: its local enum, routing, names of distributed devices.

mod derive_support;

use derive_support::host_backend::{HostBackend, HostDevice};
use dispatch_core::{Dispatch, DistributedDevice, Route, Tensor};

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
    let tensor = Tensor::<DeviceBackend>::full([2], 3.0, &local).unwrap();
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
