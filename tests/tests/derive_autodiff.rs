//! The `#[autodiff]` variant: `Autodiff<P>` over every backend of the enum, the third-party one included, with
//! gradients equal to those of `Autodiff<P>` used directly and of backpropagation written by hand. Last, the ops
//! that take their first operand by value (`add_into`, ...): a backend that writes over a tensor nothing else holds
//! is handed one through the enum and `Autodiff`, every arm gives the borrowing ops' values and leaves a tensor held
//! elsewhere as it was, and gradients through them are the borrowing ops'.

mod derive_support;

use std::sync::Arc;

use derive_support::data::two_classes;
use derive_support::host_backend::{HostBackend, HostDevice};
use dispatch_core::backends::{Autodiff, Candle, CandleDevice, NdArray, NdArrayDevice};
use dispatch_core::{AutodiffBackend, AutodiffDevice, Backend, DType, DeviceOf, Dispatch, Error, Result, Tensor};
use dispatch_nn::models::classifier::{Classifier, ClassifierGradients, one_hot};
use dispatch_tests::{IdentityHostOp as Identity, WitnessHostOp as Witness, assert_close, assert_close_f64};

#[derive(Clone, Debug, PartialEq, Dispatch)]
pub enum Device {
    #[backend(Candle)]
    Candle(CandleDevice),
    #[backend(NdArray)]
    NdArray(NdArrayDevice),
    #[backend(HostBackend)]
    Host(HostDevice),
    #[autodiff]
    Autodiff(AutodiffDevice<Self>),
}

type T = Tensor<DeviceBackend>;

fn autodiff(base: DeviceBase) -> Device {
    Device::Autodiff(AutodiffDevice::new(base))
}

/// The data set and a freshly initialised model on `device`.
fn setup<B: Backend>(device: &(impl DeviceOf<B> + ?Sized)) -> Result<(Classifier<B>, Tensor<B>, Tensor<B>)> {
    let (features, labels) = two_classes(24);
    let x = Tensor::<B>::from_vec(features, [24, 2], device)?;
    let targets = one_hot::<B>(&labels, 2, device)?;
    Ok((Classifier::new(2, 6, 2, 11, device)?, x, targets))
}

fn flat<B: Backend>(gradients: &ClassifierGradients<B>) -> Vec<f32> {
    gradients.tensors().iter().flat_map(|tensor| tensor.to_vec().unwrap()).collect()
}

fn autodiff_gradients<B: AutodiffBackend>(device: &(impl DeviceOf<B> + ?Sized)) -> (f64, Vec<f32>) {
    let (model, x, targets) = setup::<B>(device).unwrap();
    let gradients = model.gradients_by_autodiff(&x, &targets).unwrap();
    (gradients.loss, flat(&gradients))
}

#[test]
fn names_list_one_autodiff_device_per_base() {
    assert_eq!(Device::names(), &["candle", "ndarray", "host", "autodiff:candle", "autodiff:ndarray", "autodiff:host"]);
    assert_eq!("gpu".parse::<DeviceBase>().unwrap_err().choices(), &["candle", "ndarray", "host"]);
    assert_eq!(DeviceBase::NdArray(NdArrayDevice).to_string(), "ndarray");
    for name in Device::names() {
        assert_eq!(name.parse::<Device>().unwrap().to_string(), *name);
    }
    assert_eq!("autodiff:host".parse::<Device>().unwrap(), autodiff(DeviceBase::Host(HostDevice)));
    // After `autodiff:`, the base enum reads the rest and lists the bases.
    let error = "autodiff:autodiff:host".parse::<Device>().unwrap_err();
    assert_eq!((error.input(), error.choices()), ("autodiff:host", &["candle", "ndarray", "host"][..]));
}

#[test]
fn gradients_on_the_autodiff_variant_equal_those_of_autodiff_used_directly() {
    let (direct_loss, direct) = autodiff_gradients::<Autodiff<NdArray>>(&NdArrayDevice);
    let (loss, derived) = autodiff_gradients::<DeviceBackend>(&autodiff(DeviceBase::NdArray(NdArrayDevice)));
    assert_eq!(loss, direct_loss);
    assert_eq!(derived, direct, "the dispatch adds no arithmetic of its own");

    let (model, x, targets) = setup::<NdArray>(&NdArrayDevice).unwrap();
    let by_hand = model.gradients_by_hand(&x, &targets).unwrap();
    assert_close(&derived, &flat(&by_hand), 1e-4);
}

#[test]
fn every_base_backend_gives_the_same_gradients_under_autodiff() {
    let (_, reference) = autodiff_gradients::<Autodiff<NdArray>>(&NdArrayDevice);
    for base in [DeviceBase::Candle(CandleDevice::default()), DeviceBase::Host(HostDevice)] {
        let (_, gradients) = autodiff_gradients::<DeviceBackend>(&autodiff(base.clone()));
        assert_close(&gradients, &reference, 1e-4);
    }
    let (_, on_candle) = autodiff_gradients::<Autodiff<Candle>>(&CandleDevice::default());
    assert_close(&on_candle, &reference, 1e-4);
}

#[test]
fn training_steps_on_every_autodiff_device_follow_backprop_by_hand() {
    let train = |device: &Device| -> Vec<f64> {
        let (mut model, x, targets) = setup::<DeviceBackend>(device).unwrap();
        (0..15)
            .map(|_| {
                let gradients = model.gradients_by_autodiff(&x, &targets).unwrap();
                model = model.step(&gradients, 0.5).unwrap();
                gradients.loss
            })
            .collect()
    };
    let (mut model, x, targets) = setup::<NdArray>(&NdArrayDevice).unwrap();
    let reference: Vec<f64> = (0..15)
        .map(|_| {
            let gradients = model.gradients_by_hand(&x, &targets).unwrap();
            model = model.step(&gradients, 0.5).unwrap();
            gradients.loss
        })
        .collect();
    assert!(reference[14] < reference[0] * 0.9, "the model learns: {reference:?}");
    for name in ["autodiff:candle", "autodiff:ndarray", "autodiff:host"] {
        assert_close_f64(&train(&name.parse().unwrap()), &reference, 1e-4);
    }
}

#[test]
fn gradient_ops_on_a_device_without_autodiff_are_errors() {
    let plain = T::ones([2], DType::F32, &Device::Host(HostDevice)).unwrap();
    for (op, error) in [
        ("require_grad", plain.require_grad().unwrap_err()),
        ("backward", plain.backward().unwrap_err()),
        ("backward", plain.clone().backward_once().unwrap_err()),
    ] {
        let Error::NotDifferentiable { op: reported, device } = &error else { panic!("{error}") };
        assert_eq!((*reported, device.as_str()), (op, "host"));
    }
    assert_eq!(plain.id(), None);
    assert_eq!(plain.detach().unwrap().to_vec().unwrap(), vec![1.0, 1.0]);
}

/// Through the enum's route as on `Autodiff<P>` itself: the pass owns the graph once the loss is consumed.
#[test]
fn backward_once_on_the_autodiff_variant_frees_each_node_once_its_rule_has_run() {
    for name in ["autodiff:candle", "autodiff:ndarray", "autodiff:host"] {
        let x = T::from_vec(vec![0.5, -1.0], [2], &name.parse::<Device>().unwrap()).unwrap().require_grad().unwrap();
        let identity = Arc::new(Identity);
        let witness = Arc::new(Witness::of(&identity));
        let loss = x.host_op(witness.clone()).unwrap().host_op(identity).unwrap().exp().unwrap().sum().unwrap();
        let kept = x.grad(&loss.backward().unwrap()).unwrap().to_vec().unwrap();
        assert_eq!(witness.saw_it_freed(), Some(false), "{name}");
        let freed = x.grad(&loss.backward_once().unwrap()).unwrap().to_vec().unwrap();
        assert_eq!((witness.saw_it_freed(), freed), (Some(true), kept), "{name}");
    }
}

#[test]
fn autodiff_tensors_mix_only_with_their_own_base() {
    let on = |name: &str| T::ones([2], DType::F32, &name.parse::<Device>().unwrap()).unwrap();
    let error = on("autodiff:candle").add(&on("autodiff:ndarray")).unwrap_err();
    assert_eq!(
        error.to_string(),
        "`add` mixes devices: `autodiff:candle` and `autodiff:ndarray`; move one with `to_device` first"
    );
    assert!(matches!(on("ndarray").mul(&on("autodiff:ndarray")), Err(Error::DeviceMismatch { .. })));

    let moved = on("ndarray").to_device(&"autodiff:ndarray".parse::<Device>().unwrap()).unwrap();
    let tracked = moved.require_grad().unwrap();
    let gradients = tracked.mul(&tracked).unwrap().sum().unwrap().backward().unwrap();
    assert_eq!(tracked.grad(&gradients).unwrap().to_vec().unwrap(), vec![2.0, 2.0]);
    assert_eq!(tracked.device().to_string(), "autodiff:ndarray");
}

#[test]
fn a_tensor_that_records_a_graph_does_not_leave_its_backend() {
    let device = |name: &str| name.parse::<Device>().unwrap();
    let leaf = T::from_vec(vec![1.0, 2.0], [2], &device("autodiff:candle")).unwrap().require_grad().unwrap();
    let doubled = leaf.mul_scalar(2.0).unwrap();
    // Through host memory the values would arrive untracked and the gradient would silently be lost.
    for tensor in [&leaf, &doubled] {
        for target in ["autodiff:ndarray", "autodiff:host", "candle", "ndarray"] {
            let error = tensor.to_device(&device(target)).unwrap_err();
            assert!(
                matches!(&error, Error::GraphCut { op: "to_device", from, to } if from == "autodiff:candle" && to == target),
                "{error:?}"
            );
            assert_eq!(
                error.to_string(),
                format!(
                    "`to_device` would cut the autodiff graph: the tensor records it on `autodiff:candle`, and \
                     `{target}` is another backend, where its gradient would be lost; call `detach()` first to move \
                     its values alone"
                )
            );
        }
    }

    // Within its own backend the move is `Autodiff`'s, which the gradient flows back through.
    let moved = doubled.to_device(&device("autodiff:candle")).unwrap();
    let gradients = moved.sum().unwrap().backward().unwrap();
    assert_eq!(leaf.grad(&gradients).unwrap().to_vec().unwrap(), vec![2.0, 2.0]);

    // Detached, or never tracked, its values go anywhere.
    let detached = doubled.detach().unwrap();
    assert_eq!(detached.id(), None);
    for target in ["autodiff:ndarray", "autodiff:host", "candle", "ndarray", "host"] {
        let moved = detached.to_device(&device(target)).unwrap();
        assert_eq!((moved.to_vec().unwrap(), moved.device().to_string()), (vec![2.0, 4.0], target.to_owned()));
    }
}

// ---- ops given their first operand (`add_into`, ...): through the enum and `Autodiff` -------------------------

fn device(name: &str) -> Device {
    name.parse().unwrap()
}

/// Where a host tensor's values start (the third-party backend writes `add_into` over them); `None` elsewhere.
fn host_address(tensor: &T) -> Option<usize> {
    match tensor.primitive() {
        DeviceTensor::Host(inner) => Some(inner.values_address()),
        DeviceTensor::Autodiff(DeviceAutodiffTensor::Host(inner)) => Some(inner.primitive().values_address()),
        _ => None,
    }
}

fn matrix(device: &Device) -> T {
    T::from_vec((0..12).map(|i| i as f32 * 0.75 - 4.0).collect(), [3, 4], device).unwrap()
}

fn row(device: &Device) -> T {
    T::from_vec(vec![1.5, -2.0, 0.5, 4.0], [4], device).unwrap()
}

#[test]
fn a_tensor_nothing_else_holds_reaches_the_backend_that_writes_over_it() {
    for name in ["host", "autodiff:host"] {
        let (x, y) = (matrix(&device(name)), row(&device(name)));
        let expected = x.add(&y).unwrap().to_vec().unwrap();
        let start = host_address(&x);
        let sum = x.add_into(&y).unwrap();
        assert_eq!(host_address(&sum), start, "{name}: the enum and `Autodiff` hold no copy of the tensor");
        assert_eq!(sum.to_vec().unwrap(), expected, "{name}");
    }
    // A tracked leaf is given up too: `add`'s rule keeps neither operand.
    let leaf = matrix(&device("autodiff:host")).require_grad().unwrap();
    let start = host_address(&leaf);
    let sum = leaf.add_into(&row(&device("autodiff:host"))).unwrap();
    assert_eq!(host_address(&sum), start);
}

type GivenUp = fn(T, &T) -> Result<T>;
type Lent = fn(&T, &T) -> Result<T>;

#[test]
fn every_arm_gives_the_borrowing_ops_values_and_leaves_a_held_tensor_as_it_was() {
    let binary: [(&str, GivenUp, Lent); 4] = [
        ("add", T::add_into, T::add),
        ("sub", T::sub_into, T::sub),
        ("mul", T::mul_into, T::mul),
        ("div", T::div_into, T::div),
    ];
    for name in Device::names() {
        let device = device(name);
        for (op, given_up, lent) in binary {
            let (held, other) = (matrix(&device), row(&device));
            let expected = lent(&held, &other).unwrap().to_vec().unwrap();
            assert_eq!(given_up(held.clone(), &other).unwrap().to_vec().unwrap(), expected, "{name} {op}, held");
            assert_eq!(held.to_vec().unwrap(), matrix(&device).to_vec().unwrap(), "{name} {op}: as it was");
            assert_eq!(given_up(matrix(&device), &other).unwrap().to_vec().unwrap(), expected, "{name} {op}, given");
            // The row is given, and broadcasts into a larger output.
            let expected = lent(&other, &held).unwrap().to_vec().unwrap();
            assert_eq!(given_up(row(&device), &held).unwrap().to_vec().unwrap(), expected, "{name} {op}, row");
        }
        let held = matrix(&device);
        let sum = held.clone().add_scalar_into(0.25).unwrap().mul_scalar_into(-3.0).unwrap();
        let expected = held.add_scalar(0.25).unwrap().mul_scalar(-3.0).unwrap();
        assert_eq!(sum.to_vec().unwrap(), expected.to_vec().unwrap(), "{name} scalars");
        assert_eq!(held.to_vec().unwrap(), matrix(&device).to_vec().unwrap(), "{name} scalars: as it was");
    }
}

/// The gradients of a program of element-wise steps, each by value (`given_up`) or borrowing, by the leaves `a`,
/// `w` and `b`. The by-value steps meet every case of the rules: an operand a rule keeps (the exponential's output,
/// a product's operand whose partner is tracked), one it does not (a sum's), and gradients flowing into several.
fn gradients(name: &str, given_up: bool) -> Vec<Vec<f32>> {
    let device = device(name);
    let a = matrix(&device).mul_scalar(0.25).unwrap().require_grad().unwrap();
    let w = row(&device).require_grad().unwrap();
    let b = matrix(&device).mul_scalar(-0.5).unwrap().require_grad().unwrap();
    let loss = if given_up {
        let t = a.exp().unwrap().mul_into(&w).unwrap().add_into(&b).unwrap();
        let t = a.mul_scalar(2.0).unwrap().mul_into(&w).unwrap().sub_into(&t).unwrap();
        let t = t.mul_scalar_into(0.5).unwrap().div_into(&w.add_scalar(9.0).unwrap()).unwrap();
        t.add_scalar_into(1.0).unwrap().mul_into(&a).unwrap().sum().unwrap()
    } else {
        let t = a.exp().unwrap().mul(&w).unwrap().add(&b).unwrap();
        let t = a.mul_scalar(2.0).unwrap().mul(&w).unwrap().sub(&t).unwrap();
        let t = t.mul_scalar(0.5).unwrap().div(&w.add_scalar(9.0).unwrap()).unwrap();
        t.add_scalar(1.0).unwrap().mul(&a).unwrap().sum().unwrap()
    };
    let gradients = loss.backward_once().unwrap();
    [&a, &w, &b].map(|leaf| leaf.grad(&gradients).unwrap().to_vec().unwrap()).to_vec()
}

#[test]
fn gradients_through_ops_given_their_operand_are_those_of_the_borrowing_ops() {
    for name in ["autodiff:ndarray", "autodiff:candle", "autodiff:host"] {
        assert_eq!(gradients(name, true), gradients(name, false), "{name}");
    }
}
