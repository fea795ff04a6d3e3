//! The same model code, written once against `Tensor<DeviceBackend>`, gives the same numbers on every variant of
//! a derived enum (candle, ndarray, and a third-party backend), and the same as the concrete backend used directly.

mod derive_support;

use derive_support::data::two_classes;
use derive_support::host_backend::{HostBackend, HostDevice};
use dispatch_core::backends::{Candle, CandleDevice, NdArray, NdArrayDevice};
use dispatch_core::{Backend, DeviceOf, Dispatch, Error, Result, Tensor};
use dispatch_nn::models::classifier::{Classifier, one_hot};
use dispatch_tests::assert_close_f64;

#[derive(Clone, Debug, PartialEq, Dispatch)]
pub enum Device {
    #[backend(Candle)]
    Candle(CandleDevice),
    #[backend(NdArray)]
    NdArray(NdArrayDevice),
    #[backend(HostBackend)]
    Host(HostDevice),
}

/// Trains a small MLP with gradients by hand; returns the loss after each step and the final accuracy.
fn train<B: Backend>(device: &(impl DeviceOf<B> + ?Sized)) -> Result<(Vec<f64>, f32)> {
    let (features, labels) = two_classes(32);
    let x = Tensor::<B>::from_vec(features, [32, 2], device)?;
    let targets = one_hot::<B>(&labels, 2, device)?;
    let mut model = Classifier::<B>::new(2, 8, 2, 7, device)?;
    let mut losses = Vec::new();
    for _ in 0..30 {
        let gradients = model.gradients_by_hand(&x, &targets)?;
        losses.push(gradients.loss);
        model = model.step(&gradients, 0.5)?;
    }
    Ok((losses, model.accuracy(&x, &labels)?))
}

#[test]
fn training_gives_the_same_losses_on_every_variant_and_on_the_backend_itself() {
    let (reference, reference_accuracy) = train::<NdArray>(&NdArrayDevice).unwrap();
    assert!(reference.last().unwrap() < &(reference[0] * 0.8), "the model learns: {reference:?}");
    for name in Device::names() {
        let device: Device = name.parse().unwrap();
        let (losses, accuracy) = train::<DeviceBackend>(&device).unwrap();
        assert_close_f64(&losses, &reference, 1e-4);
        assert_eq!(accuracy, reference_accuracy, "{name}");
    }
    let (candle, _) = train::<Candle>(&CandleDevice::default()).unwrap();
    assert_close_f64(&candle, &reference, 1e-4);
}

#[test]
fn tensors_on_different_backends_do_not_mix_until_moved() {
    let candle =
        Tensor::<DeviceBackend>::from_vec(vec![1.0, 2.0], [2], &Device::Candle(CandleDevice::default())).unwrap();
    let ndarray = Tensor::<DeviceBackend>::from_vec(vec![3.0, 4.0], [2], &Device::NdArray(NdArrayDevice)).unwrap();
    let error = candle.add(&ndarray).unwrap_err();
    let Error::DeviceMismatch { op, lhs, rhs } = &error else { panic!("{error}") };
    assert_eq!((*op, lhs.as_str(), rhs.as_str()), ("add", "candle", "ndarray"));
    assert_eq!(error.to_string(), "`add` mixes devices: `candle` and `ndarray`; move one with `to_device` first");

    let moved = candle.to_device(&Device::NdArray(NdArrayDevice)).unwrap();
    assert_eq!(moved.device(), Device::NdArray(NdArrayDevice));
    assert_eq!(moved.add(&ndarray).unwrap().to_vec().unwrap(), vec![4.0, 6.0]);
    let host = moved.to_device(&Device::Host(HostDevice)).unwrap();
    assert_eq!(host.mul(&host).unwrap().to_vec().unwrap(), vec![1.0, 4.0]);
}

#[test]
fn each_inner_device_converts_into_the_enum() {
    assert_eq!(Device::from(NdArrayDevice), Device::NdArray(NdArrayDevice));
    assert_eq!(Device::from(HostDevice), Device::Host(HostDevice));
    assert_eq!(Device::from(CandleDevice::default()), Device::Candle(CandleDevice::default()));
    assert_eq!(Device::names(), &["candle", "ndarray", "host"]);
}
