//! A derived enum over a backend defined outside dispatch-core: dispatch, mixed devices, names, conversions.

mod derive_support;

use derive_support::host_backend::{HostBackend, HostDevice};
use dispatch_core::{Backend, DType, Dispatch, Error, ParseDeviceError, Tensor};

/// Two variants on the same third-party backend, one renamed, one compiled out by a compound cfg.
#[derive(Clone, Debug, PartialEq, Dispatch)]
pub enum Device {
    #[backend(HostBackend)]
    Host(HostDevice),
    #[backend(derive_support::host_backend::HostBackend)]
    #[dispatch(name = "spare")]
    Other(<HostBackend as Backend>::Device),
    #[cfg(all(unix, not(unix)))]
    #[backend(HostBackend)]
    Gone(HostDevice),
}

type T = Tensor<DeviceBackend>;

#[test]
fn ops_dispatch_to_the_variant_the_operands_live_on() {
    let device = Device::Host(HostDevice);
    let a = T::from_vec(vec![1.0, 2.0, 3.0, 4.0], [2, 2], &device).unwrap();
    let b = T::from_vec(vec![10.0, 20.0], [2], &device).unwrap();
    assert_eq!(a.add(&b).unwrap().to_vec().unwrap(), vec![11.0, 22.0, 13.0, 24.0]);
    assert_eq!(a.matmul(&a).unwrap().to_vec().unwrap(), vec![7.0, 10.0, 15.0, 22.0]);
    assert_eq!(a.transpose().unwrap().to_vec().unwrap(), vec![1.0, 3.0, 2.0, 4.0]);
    assert_eq!(a.sum_dim(1).unwrap().to_vec().unwrap(), vec![3.0, 7.0]);
    assert_eq!(a.device(), device);
    let on_other = T::ones([2], DType::F32, &Device::Other(HostDevice)).unwrap();
    assert_eq!(on_other.device(), Device::Other(HostDevice));
    assert_eq!(DeviceBackend::name(), "device");
}

#[test]
fn binary_ops_across_variants_are_errors_naming_both_devices() {
    let host = T::from_vec(vec![1.0, 2.0], [2], &Device::Host(HostDevice)).unwrap();
    let spare = T::from_vec(vec![3.0, 4.0], [2], &Device::Other(HostDevice)).unwrap();
    for (op, result) in [
        ("add", host.add(&spare)),
        ("sub", spare.sub(&host)),
        ("mul", host.mul(&spare)),
        ("div", host.div(&spare)),
        ("cat", T::cat(&[host.clone(), spare.clone()], 0)),
    ] {
        let error = result.unwrap_err();
        let Error::DeviceMismatch { op: reported, lhs, rhs } = &error else { panic!("{op}: {error}") };
        assert_eq!(*reported, op);
        let mut devices = [lhs.as_str(), rhs.as_str()];
        devices.sort();
        assert_eq!(devices, ["host", "spare"], "{op}: {error}");
    }
    let matrix = |device| T::ones([2, 2], DType::F32, &device).unwrap();
    let error = matrix(Device::Host(HostDevice)).matmul(&matrix(Device::Other(HostDevice))).unwrap_err();
    assert_eq!(error.to_string(), "`matmul` mixes devices: `host` and `spare`; move one with `to_device` first");
}

#[test]
fn to_device_moves_between_variants() {
    let host = T::from_vec(vec![1.0, 2.0], [2], &Device::Host(HostDevice)).unwrap();
    let moved = host.to_device(&Device::Other(HostDevice)).unwrap();
    assert_eq!(moved.device(), Device::Other(HostDevice));
    assert_eq!(moved.to_vec().unwrap(), vec![1.0, 2.0]);
    let spare = T::ones([2], DType::F32, &Device::Other(HostDevice)).unwrap();
    assert_eq!(moved.add(&spare).unwrap().to_vec().unwrap(), vec![2.0, 3.0]);
    assert!(T::cat(&[], 0).is_err());
}

#[test]
fn names_are_lowercase_overridable_and_cfg_aware() {
    assert_eq!(Device::names(), &["host", "spare"]);
    assert_eq!(Device::Host(HostDevice).to_string(), "host");
    assert_eq!(Device::Other(HostDevice).to_string(), "spare");
    for name in Device::names() {
        let device: Device = name.parse().unwrap();
        assert_eq!(device.to_string(), *name);
    }
}

#[test]
fn an_unknown_name_is_an_error_listing_the_choices() {
    let error: ParseDeviceError = "gone".parse::<Device>().unwrap_err();
    assert_eq!(error.input(), "gone");
    assert_eq!(error.choices(), &["host", "spare"]);
    assert_eq!(error.to_string(), "unknown device `gone`; expected one of: host, spare");
    assert!("Host".parse::<Device>().is_err());
    assert!("host:".parse::<Device>().is_err());
}

#[test]
fn a_local_enum_routes_to_itself() {
    let device = Device::Other(HostDevice);
    assert!(!device.is_distributed());
    assert_eq!(device.route(), dispatch_core::Route::Local(device.clone()));
}

#[test]
fn from_converts_into_the_variant_whose_field_names_the_type() {
    // `Other` holds the same type, written as a projection, which gets no `From`: `From<HostDevice>` is `Host`'s.
    assert_eq!(Device::from(HostDevice), Device::Host(HostDevice));
}

/// `From` exists for field types no other variant shares.
mod conversions {
    use super::*;

    #[derive(Clone, Debug, PartialEq, Dispatch)]
    pub enum Single {
        #[backend(HostBackend)]
        Host(HostDevice),
    }

    #[test]
    fn from_each_inner_device() {
        assert_eq!(Single::from(HostDevice), Single::Host(HostDevice));
    }
}
