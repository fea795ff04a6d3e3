//! User-defined ops: an extension trait declared once with `#[extension]`, implemented for the backends a user
//! cares about (a fused kernel on ndarray, composed ops on candle, a backward rule on `Autodiff`), and dispatched by
//! a derived enum that lists it: each op runs on the variant its operands live on, mixing variants is a typed
//! error, and the autodiff variant's gradients are the extension's own backward rule, checked in F64.

use dispatch_core::backends::{Autodiff, AutodiffTensor, Candle, CandleDevice, NdArray, NdArrayDevice, NdArrayTensor};
use dispatch_core::{AutodiffDevice, Backend, BaseBackend, DType, Dispatch, Error, Result, Shape, Tensor, extension};
use dispatch_tests::check_gradients;

/// Ops a model wants one kernel for.
#[extension]
pub trait FusedOps: Backend {
    /// `a * b + c`, element-wise; the three have one shape.
    fn fused_mul_add(a: &Self::FloatTensor, b: &Self::FloatTensor, c: &Self::FloatTensor) -> Result<Self::FloatTensor>;

    /// The index of the largest entry of `x * scale` along `axis`: a plain parameter, an int output.
    fn scaled_argmax(x: &Self::FloatTensor, scale: f64, axis: usize) -> Result<Self::IntTensor>;

    /// A tensor of `value`s on `device`: sent by its device.
    fn constant(shape: Shape, value: f64, device: &Self::Device) -> Result<Self::FloatTensor>;
}

/// The three operands of `fused_mul_add` have one shape, or a `ShapeMismatch` naming the first that differs.
fn same_shapes(shapes: [Shape; 3]) -> Result<()> {
    match shapes.iter().find(|shape| **shape != shapes[0]) {
        Some(other) => Err(Error::shape_mismatch("fused_mul_add", &shapes[0], other)),
        None => Ok(()),
    }
}

/// A fused loop over the three arrays: one pass, no intermediate tensor.
impl FusedOps for NdArray {
    fn fused_mul_add(a: &NdArrayTensor, b: &NdArrayTensor, c: &NdArrayTensor) -> Result<NdArrayTensor> {
        same_shapes([a.shape(), b.shape(), c.shape()])?;
        if let (Some(a), Some(b), Some(c)) = (a.view_f64(), b.view_f64(), c.view_f64()) {
            return NdArrayTensor::from_array_f64(
                ::ndarray::Zip::from(&a).and(&b).and(&c).map_collect(|&a, &b, &c| a.mul_add(b, c)),
            );
        }
        match (a.view(), b.view(), c.view()) {
            (Some(a), Some(b), Some(c)) => NdArrayTensor::from_array(
                ::ndarray::Zip::from(&a).and(&b).and(&c).map_collect(|&a, &b, &c| a.mul_add(b, c)),
            ),
            _ => Err(Error::DTypeMismatch { op: "fused_mul_add", lhs: NdArray::dtype(a), rhs: NdArray::dtype(b) }),
        }
    }

    fn scaled_argmax(x: &NdArrayTensor, scale: f64, axis: usize) -> Result<<NdArray as Backend>::IntTensor> {
        NdArray::argmax(&NdArray::mul_scalar(x, scale)?, axis)
    }

    fn constant(shape: Shape, value: f64, device: &NdArrayDevice) -> Result<NdArrayTensor> {
        NdArray::full(shape, value, DType::F64, device)
    }
}

/// candle's tensor, one type for every kind.
type CandleTensor = <Candle as Backend>::FloatTensor;

/// candle's own ops, composed.
impl FusedOps for Candle {
    fn fused_mul_add(a: &CandleTensor, b: &CandleTensor, c: &CandleTensor) -> Result<CandleTensor> {
        same_shapes([Candle::shape(a), Candle::shape(b), Candle::shape(c)])?;
        Candle::add(&Candle::mul(a, b)?, c)
    }

    fn scaled_argmax(x: &CandleTensor, scale: f64, axis: usize) -> Result<CandleTensor> {
        Candle::argmax(&Candle::mul_scalar(x, scale)?, axis)
    }

    fn constant(shape: Shape, value: f64, device: &CandleDevice) -> Result<CandleTensor> {
        Candle::full(shape, value, DType::F64, device)
    }
}

/// On `Autodiff`, the base backend's kernel forward, and the product rule backward.
impl<B: FusedOps + BaseBackend> FusedOps for Autodiff<B> {
    fn fused_mul_add(a: &AutodiffTensor<B>, b: &AutodiffTensor<B>, c: &AutodiffTensor<B>) -> Result<AutodiffTensor<B>> {
        let output = B::fused_mul_add(a.primitive(), b.primitive(), c.primitive())?;
        let (a_values, b_values) = (a.primitive().clone(), b.primitive().clone());
        Ok(AutodiffTensor::custom_op("fused_mul_add", [a, b, c], output, move |gradient| {
            Ok([Some(B::mul(&gradient, &b_values)?), Some(B::mul(&gradient, &a_values)?), Some(gradient)])
        }))
    }

    fn scaled_argmax(x: &AutodiffTensor<B>, scale: f64, axis: usize) -> Result<B::IntTensor> {
        B::scaled_argmax(x.primitive(), scale, axis)
    }

    fn constant(shape: Shape, value: f64, device: &B::Device) -> Result<AutodiffTensor<B>> {
        B::constant(shape, value, device).map(AutodiffTensor::detached)
    }
}

#[derive(Clone, Debug, PartialEq, Dispatch)]
#[dispatch(extensions(FusedOps))]
enum Device {
    #[backend(Candle)]
    Candle(CandleDevice),
    #[backend(NdArray)]
    NdArray(NdArrayDevice),
    #[autodiff]
    Autodiff(AutodiffDevice<Self>),
}

fn every_device() -> [Device; 4] {
    [
        Device::Candle(CandleDevice::cpu()),
        Device::NdArray(NdArrayDevice),
        Device::Autodiff(AutodiffDevice::new(DeviceBase::Candle(CandleDevice::cpu()))),
        Device::Autodiff(AutodiffDevice::new(DeviceBase::NdArray(NdArrayDevice))),
    ]
}

fn f64s(values: &[f64], device: &Device) -> Tensor<DeviceBackend> {
    Tensor::from_f64_vec(values.to_vec(), [values.len()], DType::F64, device).unwrap()
}

#[test]
fn every_variant_runs_the_extension_on_its_own_backend() {
    for device in every_device() {
        let (a, b, c) =
            (f64s(&[1.0, 2.0, -3.0], &device), f64s(&[0.5, 4.0, 2.0], &device), f64s(&[1.0, 1.0, 1.0], &device));
        let output = DeviceBackend::fused_mul_add(a.primitive(), b.primitive(), c.primitive()).unwrap();
        let output = Tensor::<DeviceBackend>::from_primitive(output);
        assert_eq!(output.device(), device, "the output stays on the operands' variant");
        assert_eq!(output.to_f64_vec().unwrap(), [1.5, 9.0, -5.0], "{device}");

        let x = f64s(&[0.1, 0.9, -2.0, 0.3], &device).reshape([2, 2]).unwrap();
        let indices = DeviceBackend::scaled_argmax(x.primitive(), -1.0, 1).unwrap();
        assert_eq!(DeviceBackend::int_to_vec(&indices).unwrap(), [0, 0], "{device}");

        let constant = DeviceBackend::constant(Shape::new([2]), 0.25, &device).unwrap();
        assert_eq!(DeviceBackend::device(&constant), device);
        assert_eq!(DeviceBackend::to_f64_vec(&constant).unwrap(), [0.25, 0.25]);
    }
}

#[test]
fn operands_on_two_variants_are_a_device_mismatch_naming_both() {
    let (on_candle, on_ndarray) =
        (f64s(&[1.0], &Device::Candle(CandleDevice::cpu())), f64s(&[1.0], &Device::NdArray(NdArrayDevice)));
    let error =
        DeviceBackend::fused_mul_add(on_candle.primitive(), on_ndarray.primitive(), on_candle.primitive()).unwrap_err();
    match error {
        Error::DeviceMismatch { op: "fused_mul_add", lhs, rhs } => {
            assert_eq!((lhs.as_str(), rhs.as_str()), ("candle", "ndarray"))
        }
        other => panic!("expected DeviceMismatch, got {other:?}"),
    }
    // The extension's own checks still apply behind the dispatch.
    let short = f64s(&[1.0, 2.0], &Device::NdArray(NdArrayDevice));
    let error =
        DeviceBackend::fused_mul_add(on_ndarray.primitive(), &short.primitive().clone(), on_ndarray.primitive())
            .unwrap_err();
    assert!(matches!(error, Error::ShapeMismatch { op: "fused_mul_add", .. }), "{error}");
}

/// The backward rule the extension declares, against finite differences in F64, on each base backend.
fn the_backward_rule_matches_finite_differences<B: FusedOps + BaseBackend>(device: &B::Device) -> Result<()> {
    let inputs = [
        (vec![0.3, -1.2, 0.8, 1.5], vec![2, 2]),
        (vec![2.0, 0.5, -0.7, 1.1], vec![2, 2]),
        (vec![-0.4, 0.9, 0.0, 2.5], vec![2, 2]),
    ];
    check_gradients::<B>(device, "fused_mul_add", &inputs, |x| {
        let output = <Autodiff<B> as FusedOps>::fused_mul_add(x[0].primitive(), x[1].primitive(), x[2].primitive())?;
        Tensor::from_primitive(output).tanh()
    })
}

dispatch_tests::tests_on_every_base_backend!(the_backward_rule_matches_finite_differences);

#[test]
fn the_autodiff_variant_trains_through_the_extension() {
    for device in &every_device()[2..] {
        let a = f64s(&[1.0, 2.0], device).require_grad().unwrap();
        let (b, c) = (f64s(&[3.0, -1.0], device), f64s(&[0.5, 0.5], device));
        let output = DeviceBackend::fused_mul_add(a.primitive(), b.primitive(), c.primitive()).unwrap();
        let gradients = Tensor::<DeviceBackend>::from_primitive(output).sum().unwrap().backward().unwrap();
        // d(Σ a * b + c)/da = b
        assert_eq!(a.grad(&gradients).unwrap().to_f64_vec().unwrap(), [3.0, -1.0], "{device}");
    }
}
