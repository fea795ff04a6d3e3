//! Names are per device: `Display` then `FromStr` gives back an equal device for every device a user can build,
//! bad names list the choices, and `available()` lists the devices usable here in declaration order.

mod derive_support;

use derive_support::host_backend::{HostBackend, HostDevice};
use dispatch_core::DType;
use dispatch_core::backends::{Candle, CandleDevice, NdArray, NdArrayDevice};
use dispatch_core::device::BackendDevice;
use dispatch_core::{
    AutodiffDevice, Backend, BaseBackend, Dispatch, DistributedDevice, ParseDeviceError, Route, Tensor,
};
use proptest::prelude::*;

/// A derived enum is a backend's device like any other, so it can be a variant's field: a device type with several
/// devices on this machine, where candle has only its CPU here. Its backend records no gradients, so `Autodiff`
/// may wrap it.
#[derive(Clone, Debug, PartialEq, Dispatch)]
pub enum Rack {
    #[backend(HostBackend)]
    Memory(HostDevice),
    #[backend(NdArray)]
    NdArray(NdArrayDevice),
}

impl Default for Rack {
    fn default() -> Self {
        Rack::Memory(HostDevice)
    }
}

impl BaseBackend for RackBackend {}

/// Every role, every field spelling: by name, by projection, a derived enum.
#[derive(Clone, Debug, PartialEq, Dispatch)]
pub enum Device {
    #[backend(Candle)]
    Candle(CandleDevice),
    #[backend(NdArray)]
    NdArray(NdArrayDevice),
    #[backend(HostBackend)]
    Host(<HostBackend as Backend>::Device),
    #[backend(RackBackend)]
    Rack(Rack),
    #[autodiff]
    Autodiff(AutodiffDevice<Self>),
    #[distributed]
    Cluster(DistributedDevice<Self>),
}

/// The base devices a user can build here: every device of every base variant.
fn base_devices() -> Vec<DeviceBase> {
    let mut devices: Vec<DeviceBase> = CandleDevice::available().into_iter().map(DeviceBase::Candle).collect();
    devices.extend([
        DeviceBase::NdArray(NdArrayDevice),
        DeviceBase::Host(HostDevice),
        DeviceBase::Rack(Rack::Memory(HostDevice)),
        DeviceBase::Rack(Rack::NdArray(NdArrayDevice)),
    ]);
    devices
}

/// A base device as the local device of its own variant.
fn on_its_own(base: DeviceBase) -> DeviceLocal {
    match base {
        DeviceBase::Candle(device) => DeviceLocal::Candle(device),
        DeviceBase::NdArray(device) => DeviceLocal::NdArray(device),
        DeviceBase::Host(device) => DeviceLocal::Host(device),
        DeviceBase::Rack(device) => DeviceLocal::Rack(device),
    }
}

/// The local devices a user can build here: the base devices, on their own and under autodiff.
fn local_devices() -> Vec<DeviceLocal> {
    let bases = base_devices();
    let autodiff: Vec<DeviceLocal> =
        bases.iter().cloned().map(|base| DeviceLocal::Autodiff(AutodiffDevice::new(base))).collect();
    bases.into_iter().map(on_its_own).chain(autodiff).collect()
}

fn any_local_device() -> impl Strategy<Value = DeviceLocal> {
    proptest::sample::select(local_devices())
}

/// A device of the enum: a local one, or an in-process cluster of one to four local ones.
fn any_device() -> impl Strategy<Value = Device> {
    prop_oneof![
        any_local_device().prop_map(Device::from),
        proptest::collection::vec(any_local_device(), 1..5)
            .prop_map(|ranks| Device::Cluster(DistributedDevice::in_process(ranks).unwrap())),
    ]
}

#[track_caller]
fn assert_round_trip<D: Dispatch>(device: &D) {
    let name = device.to_string();
    assert!(!name.chars().any(char::is_whitespace), "`{name}` has whitespace");
    assert_eq!(name.parse::<D>().as_ref(), Ok(device), "`{name}` reads back another device");
}

proptest! {
    #![proptest_config(dispatch_tests::proptest_config(256, "proptest-regressions/derive_device_names.txt"))]

    #[test]
    fn every_device_reads_back_from_its_name(device in any_device()) {
        assert_round_trip(&device);
        if let Route::Local(local) = device.route() {
            assert_round_trip(&local);
            prop_assert_eq!(local.to_string(), device.to_string());
        }
    }
}

#[test]
fn every_local_and_base_device_reads_back_from_its_name() {
    for device in local_devices() {
        assert_round_trip(&device);
        assert_round_trip(&Device::from(device));
    }
    for base in base_devices() {
        let name = base.to_string();
        assert_eq!(name.parse::<DeviceBase>().unwrap(), base, "{name}");
    }
    for rack in Rack::available() {
        assert_round_trip(&rack);
    }
}

#[test]
fn a_device_is_its_variants_name_on_the_default_device_and_name_colon_device_on_any_other() {
    let named = |device: Device| device.to_string();
    assert_eq!(named(Device::Candle(CandleDevice::default())), "candle");
    assert_eq!(named(Device::Host(HostDevice)), "host");
    assert_eq!(named(Device::Rack(Rack::default())), "rack");
    assert_eq!(named(Device::Rack(Rack::NdArray(NdArrayDevice))), "rack:ndarray");
    let autodiff = |base| named(Device::Autodiff(AutodiffDevice::new(base)));
    assert_eq!(autodiff(DeviceBase::NdArray(NdArrayDevice)), "autodiff:ndarray");
    assert_eq!(autodiff(DeviceBase::Rack(Rack::NdArray(NdArrayDevice))), "autodiff:rack:ndarray");
    let ranks = vec![DeviceLocal::Candle(CandleDevice::default()), DeviceLocal::Rack(Rack::NdArray(NdArrayDevice))];
    assert_eq!(named(Device::Cluster(DistributedDevice::in_process(ranks).unwrap())), "cluster:candle,rack:ndarray");

    // The device spelled out reads back as well, to the same device.
    let spelled = |name: &str| name.parse::<Device>().unwrap();
    assert_eq!(spelled("candle:cpu"), spelled("candle"));
    assert_eq!(spelled("host:memory"), Device::Host(HostDevice));
    assert_eq!(spelled("rack:memory"), spelled("rack"));
    assert_eq!(spelled("rack:memory:memory"), spelled("rack"));
    assert_eq!(
        spelled("autodiff:rack:ndarray"),
        Device::Autodiff(AutodiffDevice::new(DeviceBase::Rack(Rack::NdArray(NdArrayDevice))))
    );
    assert_eq!(spelled("cluster:candle:cpu,autodiff:rack").to_string(), "cluster:candle,autodiff:rack");
}

#[test]
fn a_name_is_read_by_each_part_and_a_bad_part_lists_its_own_choices() {
    let error = |name: &str| name.parse::<Device>().unwrap_err();
    let unknown = error("gpu");
    assert_eq!(unknown.input(), "gpu");
    assert_eq!(unknown.choices(), Device::names());
    assert_eq!(
        Device::names(),
        &[
            "candle",
            "ndarray",
            "host",
            "rack",
            "autodiff:candle",
            "autodiff:ndarray",
            "autodiff:host",
            "autodiff:rack",
            "cluster"
        ]
    );
    // After a backend variant's name, the device type reads the rest and lists its own devices.
    let candle = error("candle:gpu");
    assert_eq!((candle.input(), candle.choices()), ("gpu", &["cpu", "cuda:<ordinal>", "metal:<ordinal>"][..]));
    let rack = error("rack:cpu");
    assert_eq!((rack.input(), rack.choices()), ("cpu", &["memory", "ndarray"][..]));
    assert_eq!(error("host:").choices(), &["memory"]);
    // After `autodiff:`, the base enum reads the rest; after `cluster:`, the local enum reads each rank.
    let base = error("autodiff:cluster");
    assert_eq!((base.input(), base.choices()), ("cluster", &["candle", "ndarray", "host", "rack"][..]));
    let rank = error("cluster:candle,rack:gpu");
    assert_eq!((rank.input(), rank.choices()), ("gpu", &["memory", "ndarray"][..]));
    assert_eq!(
        error("candle:gpu").to_string(),
        "unknown device `gpu`; expected one of: cpu, cuda:<ordinal>, metal:<ordinal>"
    );
    // Names are case-sensitive and a variant's name is whole.
    for name in ["Candle", "candle:", "candles", "autodiff", "rack:memory:gpu", ""] {
        assert!(name.parse::<Device>().is_err(), "`{name}` parsed");
    }
    let ndarray: ParseDeviceError = error("ndarray:gpu");
    assert_eq!((ndarray.input(), ndarray.choices()), ("gpu", &["cpu"][..]));
}

#[test]
fn available_lists_the_devices_usable_here_in_declaration_order() {
    let bases = base_devices();
    let mut expected: Vec<Device> = bases.iter().cloned().map(|base| Device::from(on_its_own(base))).collect();
    expected.extend(bases.iter().cloned().map(|base| Device::Autodiff(AutodiffDevice::new(base))));
    assert_eq!(Device::available(), expected, "a #[distributed] variant contributes none");
    assert_eq!(DeviceBase::available(), bases);
    let local: Vec<Device> = DeviceLocal::available().into_iter().map(Device::from).collect();
    assert_eq!(local, expected);
    assert_eq!(Device::best_available(), expected.first().cloned());
    assert_eq!(Rack::available(), [Rack::Memory(HostDevice), Rack::NdArray(NdArrayDevice)]);
    assert_eq!(HostDevice::best_available(), Some(HostDevice));
    assert_eq!(NdArrayDevice::available(), [NdArrayDevice]);

    // Every device available here runs an op.
    for device in Device::available() {
        let Route::Local(local) = device.route() else { panic!("{device} is local") };
        let ones = Tensor::<DeviceBackend>::ones([2], DType::F32, &local).unwrap();
        assert_eq!(ones.add(&ones).unwrap().to_vec().unwrap(), vec![2.0, 2.0], "{device}");
        assert_eq!(ones.device(), local, "{device}");
    }
}

#[test]
fn the_backend_of_an_enum_with_a_distributed_variant_is_named_after_the_enum() {
    assert_eq!(DeviceBackend::name(), "device");
    assert_eq!(RackBackend::name(), "rack");
}

/// A backend variant named `mpi`, whose devices other than the default are `mpi:<device>`, as the MPI engine of a
/// cluster on a device is.
#[derive(Clone, Debug, PartialEq, Dispatch)]
pub enum Machines {
    #[backend(RackBackend)]
    Mpi(Rack),
    #[distributed]
    Cluster(DistributedDevice<Self>),
}

#[test]
fn a_cluster_spec_that_also_names_a_device_of_a_variant_called_mpi_is_an_error_not_a_guess() {
    let error = "cluster:mpi:ndarray".parse::<Machines>().unwrap_err();
    assert!(error.to_string().contains("`mpi:ndarray` is ambiguous"), "{error}");
    // In a list of ranks, it is that device.
    let machines: Machines = "cluster:mpi:ndarray,mpi".parse().unwrap();
    assert_eq!(machines.to_string(), "cluster:mpi:ndarray,mpi");
    let Route::Distributed(cluster) = machines.route() else { panic!("a cluster") };
    assert_eq!(cluster.local_devices()[0], MachinesLocal::Mpi(Rack::NdArray(NdArrayDevice)));
}
