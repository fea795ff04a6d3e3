//! Float dtypes on every backend: each of F32, F64, F16 and BF16 holds exactly what it can, `cast` rounds to the
//! nearest value of the target, every op keeps its operands' dtype, an op on two dtypes is a typed error naming
//! both, and a derived enum moves tensors between its variants without losing their dtype.

use dispatch_core::backend::{Conv2dOptions, Window2d};
use dispatch_core::backends::{Autodiff, CandleDevice, NdArrayDevice};
use dispatch_core::{Backend, BaseBackend, DType, Error, Result, Tensor};
use dispatch_tests::{agreement, bools, close_f64, ints};

/// Values that each dtype rounds differently: thirds, a large and a tiny magnitude, one beyond f16's range.
const VALUES: [f64; 6] = [1.0 / 3.0, -2.5, 1.0e-3, 70000.0, 16777217.0, -0.1];

fn tensor<B: Backend>(values: &[f64], dims: &[usize], dtype: DType, device: &B::Device) -> Tensor<B> {
    Tensor::from_f64_vec(values.to_vec(), dims, dtype, device).unwrap()
}

fn every_dtype_holds_its_own_rounding_of_the_values<B: Backend>(device: &B::Device) {
    for dtype in DType::ALL {
        let x = tensor::<B>(&VALUES, &[2, 3], dtype, device);
        assert_eq!(x.dtype(), dtype);
        let expected: Vec<f64> = VALUES.iter().map(|&value| dtype.round(value)).collect();
        assert_eq!(x.to_f64_vec().unwrap(), expected, "{dtype}");
        // `to_vec` reads f32 values: other dtypes are an error naming the dtype, never a silent rounding.
        match x.to_vec() {
            Ok(values) if dtype == DType::F32 => {
                assert_eq!(values, expected.iter().map(|&value| value as f32).collect::<Vec<_>>())
            }
            Err(Error::UnexpectedDType { op: "to_vec", expected: DType::F32, actual }) if dtype != DType::F32 => {
                assert_eq!(actual, dtype)
            }
            other => panic!("{dtype} read with to_vec: {other:?}"),
        }
        let full = Tensor::<B>::full([2], 1.0 / 3.0, dtype, device).unwrap();
        assert_eq!((full.dtype(), full.to_f64_vec().unwrap()), (dtype, vec![dtype.round(1.0 / 3.0); 2]));
    }
    // The constructors that take f32 data give F32.
    assert_eq!(Tensor::<B>::zeros([2], DType::F32, device).unwrap().dtype(), DType::F32);
    assert_eq!(Tensor::<B>::from_vec(vec![1.0], [1], device).unwrap().dtype(), DType::F32);
}

fn cast_rounds_to_the_nearest_value_of_the_target<B: Backend>(device: &B::Device) {
    for from in DType::ALL {
        let x = tensor::<B>(&VALUES, &[6], from, device);
        for to in DType::ALL {
            let cast = x.cast(to).unwrap();
            assert_eq!(cast.dtype(), to);
            let expected: Vec<f64> = x.to_f64_vec().unwrap().into_iter().map(|value| to.round(value)).collect();
            assert_eq!(cast.to_f64_vec().unwrap(), expected, "{from} to {to}");
        }
    }
}

fn f64_keeps_what_f32_loses<B: Backend>(device: &B::Device) {
    let one = |dtype| tensor::<B>(&[1.0], &[1], dtype, device);
    let tiny = |dtype| tensor::<B>(&[1e-10], &[1], dtype, device);
    let difference = |dtype| one(dtype).add(&tiny(dtype)).unwrap().sub(&one(dtype)).unwrap().to_f64_vec().unwrap();
    assert_eq!(difference(DType::F32), [0.0]);
    // Exact to f64's rounding of 1 + 1e-10 (2^-53 of 1).
    assert!((difference(DType::F64)[0] - 1e-10).abs() < 2e-16, "{:?}", difference(DType::F64));
    // 2^24 + 1 is an f64 but not an f32: a product of integers stays exact in F64.
    let big = tensor::<B>(&[16777217.0, 3.0], &[1, 2], DType::F64, device);
    let column = tensor::<B>(&[1.0, 1.0], &[2, 1], DType::F64, device);
    assert_eq!(big.matmul(&column).unwrap().to_f64_vec().unwrap(), [16777220.0]);
    let sum = big.sum().unwrap().to_f64_vec().unwrap();
    assert_eq!(sum, [16777220.0]);
}

/// A float op of the checked list: its name and what it computes from `x` (`[2, 2, 4, 4]`).
type FloatOp<B> = (&'static str, fn(&Tensor<B>) -> Result<Tensor<B>>);

/// Ops of every family, each a function of one tensor whose other operands are built in its dtype.
fn ops_of_every_family<B: Backend>() -> Vec<FloatOp<B>> {
    vec![
        ("add", |x| x.add(&x.exp()?)),
        ("div_scalar", |x| x.div_scalar(3.0)),
        ("powf_scalar", |x| x.abs()?.powf_scalar(1.5)),
        ("tanh", |x| x.tanh()),
        ("gelu", |x| x.gelu()),
        ("clamp", |x| x.clamp(-0.5, 0.5)),
        ("maximum", |x| x.maximum(&x.neg()?)),
        ("matmul", |x| x.matmul(&x.swap_dims(2, 3)?)),
        ("sum_dim", |x| x.sum_dim(3)),
        ("softmax", |x| x.softmax(3)),
        ("var_dim", |x| x.var_dim(2, 1)),
        ("max_dim", |x| x.max_dim(1)),
        ("prod", |x| x.narrow(3, 0, 2)?.prod()),
        ("cat", |x| Tensor::cat(&[x.clone(), x.neg()?], 1)),
        ("stack", |x| Tensor::stack(&[x.clone(), x.exp()?], 0)),
        ("permute", |x| x.permute([3, 1, 2, 0])),
        ("flip", |x| x.flip([2])),
        ("repeat", |x| x.repeat([1, 1, 2, 1])),
        ("expand", |x| x.narrow(0, 0, 1)?.expand([2, 2, 4, 4])),
        ("slice_assign", |x| x.slice_assign(3, 1, &x.narrow(3, 0, 2)?.exp()?)),
        ("index_select", |x| x.index_select(2, &ints(&[3, 0, 0], &[3], &x.device()))),
        ("gather", |x| x.gather(3, &ints(&[1; 32], &[2, 2, 4, 2], &x.device()))),
        ("mask_where", |x| Tensor::mask_where(&x.gt_scalar(0.0)?, x, &x.exp()?)),
        ("conv2d", |x| x.conv2d(&x.narrow(2, 0, 3)?.narrow(3, 0, 3)?.repeat([3, 1, 1, 1])?, Conv2dOptions::default())),
        ("conv2d with stride", |x| {
            let weight = x.narrow(2, 0, 2)?.narrow(3, 0, 3)?.repeat([2, 1, 1, 1])?;
            x.conv2d(&weight, Conv2dOptions { stride: [2, 1], ..Default::default() })
        }),
        ("max_pool2d", |x| x.max_pool2d(Window2d::new([2, 2]))),
        ("avg_pool2d", |x| x.avg_pool2d(Window2d::new([3, 3]).padding([1, 1]))),
        ("adaptive_avg_pool2d", |x| x.adaptive_avg_pool2d([3, 2])),
    ]
}

fn every_op_keeps_the_dtype_and_computes_in_it<B: Backend>(device: &B::Device) {
    let x = Tensor::<B>::random_uniform([1, 2, 4, 4], (-1.0, 1.0), 3, DType::F32, device).unwrap();
    let x = Tensor::cat(&[x.clone(), x.mul_scalar(-0.5).unwrap()], 0).unwrap();
    for dtype in DType::ALL {
        let input = x.cast(dtype).unwrap();
        let reference_input = input.cast(DType::F64).unwrap();
        for (name, op) in ops_of_every_family::<B>() {
            let output = op(&input).unwrap_or_else(|error| panic!("{name} in {dtype}: {error}"));
            assert_eq!(output.dtype(), dtype, "{name} in {dtype} gave {}", output.dtype());
            let reference = op(&reference_input).unwrap().to_f64_vec().unwrap();
            for (index, (&got, &expected)) in output.to_f64_vec().unwrap().iter().zip(&reference).enumerate() {
                assert!(
                    close_f64(got, expected, agreement(dtype)),
                    "{name} in {dtype}, element {index}: {got} vs {expected} in f64"
                );
            }
        }
    }
}

/// One pair of dtypes that differ, for every op that takes two float tensors.
fn mixing_dtypes_is_an_error_naming_both<B: Backend>(device: &B::Device) {
    for (lhs_dtype, rhs_dtype) in [(DType::F32, DType::F64), (DType::F16, DType::BF16), (DType::F64, DType::F16)] {
        let a = tensor::<B>(&[0.5; 16], &[1, 1, 4, 4], lhs_dtype, device);
        let b = tensor::<B>(&[0.25; 16], &[1, 1, 4, 4], rhs_dtype, device);
        let mask = bools::<B>(&[true; 16], &[1, 1, 4, 4], device);
        let index = ints::<B>(&[0], &[1], device);
        let results: [(&str, Result<()>); 17] = [
            ("add", a.add(&b).map(drop)),
            ("sub", a.sub(&b).map(drop)),
            ("mul", a.mul(&b).map(drop)),
            ("div", a.div(&b).map(drop)),
            ("matmul", a.matmul(&b).map(drop)),
            ("cat", Tensor::cat(&[a.clone(), b.clone()], 1).map(drop)),
            ("stack", Tensor::stack(&[a.clone(), b.clone()], 0).map(drop)),
            ("maximum", a.maximum(&b).map(drop)),
            ("minimum", a.minimum(&b).map(drop)),
            ("eq", a.eq(&b).map(drop)),
            ("lt", a.lt(&b).map(drop)),
            ("mask_where", Tensor::mask_where(&mask, &a, &b).map(drop)),
            ("slice_assign", a.slice_assign(3, 0, &b.narrow(3, 0, 1).unwrap()).map(drop)),
            ("select_add", a.select_add(3, &index, &b.narrow(3, 0, 1).unwrap()).map(drop)),
            ("conv2d", a.conv2d(&b, Conv2dOptions::default()).map(drop)),
            ("conv2d", a.conv2d(&b, Conv2dOptions { stride: [2, 1], ..Default::default() }).map(drop)),
            ("conv_transpose2d", a.conv_transpose2d(&b, Conv2dOptions::default()).map(drop)),
        ];
        for (op, result) in results {
            match result {
                Err(Error::DTypeMismatch { op: reported, lhs, rhs }) => {
                    assert_eq!((reported, lhs, rhs), (op, lhs_dtype, rhs_dtype), "{op}");
                }
                other => panic!("{op} of {lhs_dtype} and {rhs_dtype}: expected DTypeMismatch, got {other:?}"),
            }
        }
    }
}

/// The same for `Autodiff`, whose ops forward to the base backend's: tracked or not, the error is the same.
fn mixing_dtypes_under_autodiff_is_the_same_error<B: BaseBackend>(device: &B::Device) {
    mixing_dtypes_is_an_error_naming_both::<Autodiff<B>>(device);
    let a = tensor::<Autodiff<B>>(&[0.5; 4], &[2, 2], DType::F64, device).require_grad().unwrap();
    let b = tensor::<Autodiff<B>>(&[0.5; 4], &[2, 2], DType::F32, device);
    let error = a.matmul(&b).unwrap_err();
    assert!(matches!(error, Error::DTypeMismatch { op: "matmul", lhs: DType::F64, rhs: DType::F32 }), "{error}");
}

/// Gradients have the dtype of the tensor they belong to, through a cast too.
fn gradients_have_their_tensors_dtype<B: BaseBackend>(device: &B::Device) {
    for dtype in DType::ALL {
        let x = tensor::<Autodiff<B>>(&[0.5, -1.0, 2.0], &[3], dtype, device).require_grad().unwrap();
        let gradients = x.mul(&x).unwrap().sum().unwrap().backward().unwrap();
        let gradient = x.grad(&gradients).unwrap();
        assert_eq!((gradient.dtype(), gradient.to_f64_vec().unwrap()), (dtype, vec![1.0, -2.0, 4.0]));

        // A cast in the graph: the loss is F64, the gradient of `x` comes back in `x`'s dtype.
        let gradients = x.cast(DType::F64).unwrap().exp().unwrap().sum().unwrap().backward().unwrap();
        let gradient = x.grad(&gradients).unwrap();
        assert_eq!(gradient.dtype(), dtype);
        let expected: Vec<f64> = x.to_f64_vec().unwrap().iter().map(|&value| dtype.round(value.exp())).collect();
        assert_eq!(gradient.to_f64_vec().unwrap(), expected, "{dtype}");
    }
}

/// Half-precision element-wise ops compute in f32 and round once, which is what candle's own half kernels do: the
/// two backends agree exactly.
fn half_precision_rounds_each_result_once<B: Backend>(device: &B::Device) {
    for dtype in [DType::F16, DType::BF16] {
        let x = tensor::<B>(&VALUES[..3], &[3], dtype, device);
        let expected: Vec<f64> =
            x.to_f64_vec().unwrap().iter().map(|&value| dtype.round(f64::from((value as f32).exp()))).collect();
        assert_eq!(x.exp().unwrap().to_f64_vec().unwrap(), expected, "{dtype}");
    }
}

/// An F64 program computes in f64 from constructor to `to_f64_vec`: scalars enter as `f64`, constructors and
/// conversions take the dtype, nothing passes through f32 on the way.
fn f64_programs_compute_in_f64_throughout<B: Backend>(device: &B::Device) {
    let x = tensor::<B>(&[1.0, -2.0], &[2], DType::F64, device);
    let values = |tensor: Result<Tensor<B>>| tensor.unwrap().to_f64_vec().unwrap();
    // In f32, 0.1 would be 0.100000001490116...: each of these would be off by about 1e-9.
    assert_eq!(values(x.add_scalar(0.1)), [1.0 + 0.1, -2.0 + 0.1]);
    assert_eq!(values(x.sub_scalar(0.1)), [1.0 - 0.1, -2.0 - 0.1]);
    assert_eq!(values(x.mul_scalar(0.1)), [0.1, -0.2]);
    assert_eq!(values(x.div_scalar(3.0)), [1.0 / 3.0, -2.0 / 3.0]);
    assert_eq!(values(x.clamp(-0.1, 0.1)), [0.1, -0.1]);
    assert_eq!(values(x.abs().unwrap().powf_scalar(0.1)), [1.0, 2f64.powf(0.1)]);
    assert_eq!(x.gt_scalar(1.0 - 1e-12).unwrap().to_vec().unwrap(), [true, false]);
    assert_eq!(x.eq_scalar(1.0 + 1e-12).unwrap().to_vec().unwrap(), [false, false]);
    let mask = x.lt_scalar(0.0).unwrap();
    assert_eq!(values(x.mask_fill(&mask, 0.1)), [1.0, 0.1]);
    // A divisor whose reciprocal overflows f32 but not f64, and one whose reciprocal overflows f64.
    let tiny = tensor::<B>(&[0.0, 1e-40, -3e-40], &[3], DType::F64, device);
    let quotients = values(tiny.div_scalar(1e-40));
    assert!(close_f64(quotients[1], 1.0, 1e-15) && close_f64(quotients[2], -3.0, 1e-15) && quotients[0] == 0.0);
    let subnormal = tensor::<B>(&[0.0, 1e-310], &[2], DType::F64, device);
    assert_eq!(values(subnormal.div_scalar(1e-310)), [0.0, 1.0]);
    // The variance's divisor in f64: the exact 7/3 to an ulp or two.
    let spread = tensor::<B>(&[1.0, 2.0, 4.0], &[3], DType::F64, device);
    assert!(close_f64(values(spread.var_dim(0, 1))[0], 7.0 / 3.0, 1e-15));
    assert_eq!(tensor::<B>(&[0.1], &[1], DType::F64, device).to_scalar().unwrap(), 0.1);

    // Constructors and conversions take the dtype.
    for dtype in DType::ALL {
        let full = Tensor::<B>::full([2], 0.1, dtype, device).unwrap();
        assert_eq!((full.dtype(), full.to_f64_vec().unwrap()), (dtype, vec![dtype.round(0.1); 2]));
        assert_eq!(Tensor::<B>::zeros([2], dtype, device).unwrap().dtype(), dtype);
        assert_eq!(Tensor::<B>::ones([2], dtype, device).unwrap().dtype(), dtype);
        assert_eq!(
            (full.zeros_like().unwrap().dtype(), full.ones_like().unwrap().to_f64_vec().unwrap()),
            (dtype, vec![1.0; 2])
        );
        let uniform = Tensor::<B>::random_uniform([64], (0.0, 1.0), 5, dtype, device).unwrap();
        let normal = Tensor::<B>::random_normal([64], (0.0, 1.0), 5, dtype, device).unwrap();
        for samples in [&uniform, &normal] {
            assert_eq!(samples.dtype(), dtype);
            assert!(samples.to_f64_vec().unwrap().iter().all(|&value| value == dtype.round(value)));
        }
        let ids = dispatch_core::IntTensor::<B>::from_vec(vec![16_777_217, -3], [2], device).unwrap();
        let floats = ids.float(dtype).unwrap();
        assert_eq!((floats.dtype(), floats.to_f64_vec().unwrap()), (dtype, vec![dtype.round(16_777_217.0), -3.0]));
        let one_hot = dispatch_core::IntTensor::<B>::from_vec(vec![1], [1], device).unwrap().one_hot(3, dtype).unwrap();
        assert_eq!((one_hot.dtype(), one_hot.to_f64_vec().unwrap()), (dtype, vec![0.0, 1.0, 0.0]));
        let flags =
            dispatch_core::BoolTensor::<B>::from_vec(vec![true, false], [2], device).unwrap().float(dtype).unwrap();
        assert_eq!((flags.dtype(), flags.to_f64_vec().unwrap()), (dtype, vec![1.0, 0.0]));
    }
    // F64 keeps what F32 rounds away: an F64 sample that is not an f32.
    let fine = Tensor::<B>::random_uniform([64], (0.0, 1.0), 5, DType::F64, device).unwrap().to_f64_vec().unwrap();
    assert!(fine.iter().any(|&value| value != f64::from(value as f32)));
}

/// F64 to F16 or BF16 rounds once to the nearest value (ties to even): through f32, or by dropping bits, these
/// values would round twice and land one step off.
fn f64_to_half_precision_rounds_once<B: Backend>(device: &B::Device) {
    let two = |exponent: i32| 2f64.powi(exponent);
    let cases = [
        (DType::BF16, 1.0 + two(-8) + two(-40), 1.0078125),
        (DType::BF16, -(1.0 + two(-8) + two(-40)), -1.0078125),
        (DType::F16, two(-25) + two(-60), two(-24)),
        (DType::F16, 1.0 + two(-11) + two(-50), 1.0 + two(-10)),
    ];
    for (dtype, value, expected) in cases {
        let from_data = tensor::<B>(&[value], &[1], dtype, device);
        let cast = tensor::<B>(&[value], &[1], DType::F64, device).cast(dtype).unwrap();
        let full = Tensor::<B>::full([1], value, dtype, device).unwrap();
        let scalar = tensor::<B>(&[0.0], &[1], dtype, device).add_scalar(value).unwrap();
        for (how, result) in [("from_f64_vec", from_data), ("cast", cast), ("full", full), ("add_scalar", scalar)] {
            assert_eq!(result.to_f64_vec().unwrap(), [expected], "{value:e} to {dtype} by {how}");
        }
    }
}

/// The same through `Autodiff`, which forwards every scalar and dtype to its base backend.
fn f64_stays_f64_under_autodiff<B: BaseBackend>(device: &B::Device) {
    f64_programs_compute_in_f64_throughout::<Autodiff<B>>(device);
    f64_to_half_precision_rounds_once::<Autodiff<B>>(device);
}

dispatch_tests::tests_on_every_base_backend!(
    f64_programs_compute_in_f64_throughout,
    f64_stays_f64_under_autodiff,
    f64_to_half_precision_rounds_once,
    every_dtype_holds_its_own_rounding_of_the_values,
    cast_rounds_to_the_nearest_value_of_the_target,
    f64_keeps_what_f32_loses,
    every_op_keeps_the_dtype_and_computes_in_it,
    mixing_dtypes_is_an_error_naming_both,
    mixing_dtypes_under_autodiff_is_the_same_error,
    gradients_have_their_tensors_dtype,
    half_precision_rounds_each_result_once,
);

use dispatch_tests::every_variant::{Device, DeviceBackend, every_device};

#[test]
fn a_derived_enum_keeps_the_dtype_within_and_across_its_variants() {
    let devices = every_device();
    for device in &devices {
        every_dtype_holds_its_own_rounding_of_the_values::<DeviceBackend>(device);
        f64_programs_compute_in_f64_throughout::<DeviceBackend>(device);
        f64_to_half_precision_rounds_once::<DeviceBackend>(device);
        cast_rounds_to_the_nearest_value_of_the_target::<DeviceBackend>(device);
        mixing_dtypes_is_an_error_naming_both::<DeviceBackend>(device);
    }
    for dtype in DType::ALL {
        let on_candle = tensor::<DeviceBackend>(&VALUES, &[6], dtype, &Device::Candle(CandleDevice::cpu()));
        let moved = on_candle.to_device(&Device::NdArray(NdArrayDevice)).unwrap();
        assert_eq!(moved.device(), Device::NdArray(NdArrayDevice));
        assert_eq!((moved.dtype(), moved.to_f64_vec().unwrap()), (dtype, on_candle.to_f64_vec().unwrap()));
    }
}

/// candle has dtypes dispatch does not model (integers, f8/f6/f4 formats, and whatever a later candle adds: its
/// `DType` is non-exhaustive). A candle tensor of one, handed in through `from_primitive`, is an error naming the
/// dtype in every op, never silently read as f32.
#[test]
fn a_candle_tensor_of_a_dtype_dispatch_does_not_model_is_an_error_naming_it() {
    use dispatch_core::backends::Candle;
    let cpu = candle_core::Device::Cpu;
    let foreign = [
        ("u32", candle_core::Tensor::new(&[1u32, 2, 3, 4], &cpu).unwrap()),
        ("i64", candle_core::Tensor::new(&[1i64, 2, 3, 4], &cpu).unwrap()),
        (
            "f8e4m3",
            candle_core::Tensor::new(&[1f32, 2.0, 3.0, 4.0], &cpu)
                .unwrap()
                .to_dtype(candle_core::DType::F8E4M3)
                .unwrap(),
        ),
    ];
    for (name, primitive) in foreign {
        let x = Tensor::<Candle>::from_primitive(primitive.clone());
        let float = Tensor::<Candle>::from_f64_vec(vec![1.0; 4], [4], DType::F32, &CandleDevice::cpu()).unwrap();
        let results: Vec<(&str, Result<()>)> = vec![
            ("to_f64_vec", x.to_f64_vec().map(drop)),
            ("to_vec", x.to_vec().map(drop)),
            ("cast", x.cast(DType::F32).map(drop)),
            ("exp", x.exp().map(drop)),
            ("add_scalar", x.add_scalar(1.0).map(drop)),
            ("add", float.add(&x).map(drop)),
            ("sum", x.sum().map(drop)),
            ("sum_dim", x.sum_dim(0).map(drop)),
            ("reshape", x.reshape([2, 2]).map(drop)),
            ("matmul", x.reshape([2, 2]).and_then(|square| square.matmul(&square)).map(drop)),
            ("max_dim", x.max_dim(0).map(drop)),
        ];
        for (op, result) in results {
            match result {
                Err(Error::UnsupportedDType { backend: "candle", dtype, .. }) => assert_eq!(dtype, name, "{op}"),
                other => panic!("{op} of a candle {name} tensor: expected UnsupportedDType, got {other:?}"),
            }
        }
    }
}
