//! The ops that take their first operand by value (`add_into`, `sub_into`, `mul_into`, `div_into`,
//! `add_scalar_into`, `mul_scalar_into`), through a derived enum and `Autodiff`: a backend that writes over a tensor
//! nothing else holds is handed one, every arm gives the values of the borrowing ops and leaves a tensor held
//! elsewhere as it was, and gradients through them are those of the borrowing ops.

mod derive_support;

use derive_support::host_backend::{HostBackend, HostDevice};
use dispatch_core::backends::{Candle, CandleDevice, NdArray, NdArrayDevice};
use dispatch_core::{AutodiffDevice, Dispatch, Result, Tensor};

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
