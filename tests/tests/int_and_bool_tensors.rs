//! Int and bool tensors on every backend: their primitives, their ops against values computed by hand, the
//! comparisons and masks that connect them to float tensors, their gradients under `Autodiff`, and their dispatch
//! through a derived enum (a tensor of another variant is a `DeviceMismatch`, never a panic).

use dispatch_core::DType;
use dispatch_core::backends::{Autodiff, Candle, CandleDevice, NdArray, NdArrayDevice};
use dispatch_core::{ArgumentValue, AutodiffDevice, Backend, BoolTensor, Dispatch, Error, IntTensor, Result, Tensor};
use dispatch_tests::{assert_err, bools, floats, ints};

fn int_tensors_keep_their_values_shape_and_device<B: Backend>(device: &B::Device) {
    let matrix = ints::<B>(&[1, -2, 3, i64::MAX, i64::MIN, 0], &[2, 3], device);
    assert_eq!(matrix.dims(), [2, 3]);
    assert_eq!(matrix.to_vec().unwrap(), [1, -2, 3, i64::MAX, i64::MIN, 0]);
    assert_eq!(&matrix.device(), device);
    assert_eq!(matrix.to_device(device).unwrap().to_vec().unwrap(), matrix.to_vec().unwrap());
    assert_eq!(matrix.reshape([3, 2]).unwrap().dims(), [3, 2]);
    assert_err!(matrix.reshape([4]), Error::ElementCountMismatch { count: 6, .. });
    assert_eq!(IntTensor::<B>::arange(-2, 3, device).unwrap().to_vec().unwrap(), [-2, -1, 0, 1, 2]);
    assert_eq!(IntTensor::<B>::arange(3, 3, device).unwrap().dims(), [0]);
    assert_eq!(IntTensor::<B>::arange(5, 1, device).unwrap().dims(), [0]);
    assert!(IntTensor::<B>::from_vec(vec![1, 2, 3], [2, 2], device).is_err());
}

fn int_arithmetic_broadcasts_wraps_and_refuses_division_by_zero<B: Backend>(device: &B::Device) {
    let (column, row) = (ints::<B>(&[10, 20], &[2, 1], device), ints::<B>(&[1, 2, 3], &[3], device));
    assert_eq!(column.add(&row).unwrap().to_vec().unwrap(), [11, 12, 13, 21, 22, 23]);
    assert_eq!(column.sub(&row).unwrap().to_vec().unwrap(), [9, 8, 7, 19, 18, 17]);
    assert_eq!(column.mul(&row).unwrap().dims(), [2, 3]);
    assert_eq!(column.div(&row).unwrap().to_vec().unwrap(), [10, 5, 3, 20, 10, 6]);
    assert_eq!(ints::<B>(&[-7], &[1], device).div(&ints::<B>(&[2], &[1], device)).unwrap().to_vec().unwrap(), [-3]);
    let max = ints::<B>(&[i64::MAX], &[1], device);
    assert_eq!(max.add_scalar(1).unwrap().to_vec().unwrap(), [i64::MIN]);
    assert_eq!(max.mul_scalar(2).unwrap().to_vec().unwrap(), [-2]);
    assert_err!(
        row.div(&ints::<B>(&[1, 0, 1], &[3], device)),
        Error::InvalidValue { op: "int_div", parameter: "divisor", value: ArgumentValue::Int(0), .. }
    );
    let overflow = ints::<B>(&[i64::MIN], &[1], device).div(&ints::<B>(&[-1], &[1], device));
    assert_err!(
        overflow,
        Error::InvalidValue { op: "int_div", parameter: "divisor", value: ArgumentValue::Int(-1), .. }
    );
    assert!(matches!(row.add(&ints::<B>(&[1, 2], &[2], device)), Err(Error::ShapeMismatch { op: "int_add", .. })));
    assert_eq!(row.sum().unwrap().to_vec().unwrap(), [6]);
    assert_eq!(row.eq(&ints::<B>(&[1, 0, 3], &[3], device)).unwrap().to_vec().unwrap(), [true, false, true]);
    assert_eq!(row.eq_scalar(2).unwrap().to_vec().unwrap(), [false, true, false]);
    let twos = ints::<B>(&[2], &[1], device);
    assert_eq!(row.lt(&twos).unwrap().to_vec().unwrap(), [true, false, false]);
    assert_eq!(row.le(&twos).unwrap().to_vec().unwrap(), [true, true, false]);
    assert_eq!(row.gt(&twos).unwrap().to_vec().unwrap(), [false, false, true]);
    assert_eq!(row.ge(&twos).unwrap().to_vec().unwrap(), [false, true, true]);
    assert_eq!(column.lt(&row).unwrap().dims(), [2, 3]);
    assert_eq!(row.float(DType::F32).unwrap().to_vec().unwrap(), [1.0, 2.0, 3.0]);
}

fn bool_logic_broadcasts_and_casts<B: Backend>(device: &B::Device) {
    let (a, b) = (bools::<B>(&[true, true, false, false], &[4], device), bools::<B>(&[true, false], &[2, 1], device));
    assert_eq!(a.and(&b).unwrap().dims(), [2, 4]);
    assert_eq!(a.and(&b).unwrap().to_vec().unwrap(), [true, true, false, false, false, false, false, false]);
    assert_eq!(a.or(&b).unwrap().to_vec().unwrap(), [true, true, true, true, true, true, false, false]);
    assert_eq!(a.not().unwrap().to_vec().unwrap(), [false, false, true, true]);
    assert_eq!(a.any().unwrap().to_vec().unwrap(), [true]);
    assert_eq!(a.all().unwrap().to_vec().unwrap(), [false]);
    let empty = bools::<B>(&[], &[0], device);
    assert_eq!(
        (empty.any().unwrap().to_vec().unwrap(), empty.all().unwrap().to_vec().unwrap()),
        (vec![false], vec![true])
    );
    assert_eq!(a.int().unwrap().to_vec().unwrap(), [1, 1, 0, 0]);
    assert_eq!(a.float(DType::F32).unwrap().to_vec().unwrap(), [1.0, 1.0, 0.0, 0.0]);
    assert_eq!(&a.device(), device);
    assert!(matches!(a.and(&bools::<B>(&[true; 3], &[3], device)), Err(Error::ShapeMismatch { .. })));
}

fn comparisons_follow_ieee_and_broadcast<B: Backend>(device: &B::Device) {
    let x = floats::<B>(&[1.0, 2.0, f32::NAN], &[3], device);
    let two = floats::<B>(&[2.0], &[1], device);
    let check =
        |result: Result<BoolTensor<B>>, expected: [bool; 3]| assert_eq!(result.unwrap().to_vec().unwrap(), expected);
    check(x.eq(&two), [false, true, false]);
    check(x.ne(&two), [true, false, true]);
    check(x.lt(&two), [true, false, false]);
    check(x.le(&two), [true, true, false]);
    check(x.gt(&two), [false, false, false]);
    check(x.ge(&two), [false, true, false]);
    check(x.eq_scalar(1.0), [true, false, false]);
    check(x.ne_scalar(1.0), [false, true, true]);
    check(x.lt_scalar(2.0), [true, false, false]);
    check(x.le_scalar(2.0), [true, true, false]);
    check(x.gt_scalar(1.0), [false, true, false]);
    check(x.ge_scalar(1.0), [true, true, false]);
    let column = floats::<B>(&[1.5, 2.5], &[2, 1], device);
    assert_eq!(x.lt(&column).unwrap().dims(), [2, 3]);
    assert!(matches!(x.lt(&floats::<B>(&[1.0, 2.0], &[2], device)), Err(Error::ShapeMismatch { op: "lt", .. })));
}

fn masks_pick_and_fill_with_broadcasting<B: Backend>(device: &B::Device) {
    let mask = bools::<B>(&[true, false, true], &[3], device);
    let (a, b) = (floats::<B>(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3], device), floats::<B>(&[-1.0], &[1], device));
    let picked = Tensor::mask_where(&mask, &a, &b).unwrap();
    assert_eq!(picked.dims(), [2, 3]);
    assert_eq!(picked.to_vec().unwrap(), [1.0, -1.0, 3.0, 4.0, -1.0, 6.0]);
    let filled = a.mask_fill(&mask, f64::NEG_INFINITY).unwrap();
    assert_eq!(
        filled.to_vec().unwrap(),
        [f32::NEG_INFINITY, 2.0, f32::NEG_INFINITY, f32::NEG_INFINITY, 5.0, f32::NEG_INFINITY]
    );
    // On a transposed view (strided on both backends), in the view's order.
    let (transposed, rows) = (a.swap_dims(0, 1).unwrap(), bools::<B>(&[true, false, true], &[3, 1], device));
    assert_eq!(transposed.mask_fill(&rows, 0.0).unwrap().to_vec().unwrap(), [0.0, 0.0, 2.0, 5.0, 0.0, 0.0]);
    let picked = Tensor::mask_where(&rows, &transposed, &b).unwrap();
    assert_eq!(picked.to_vec().unwrap(), [1.0, 4.0, -1.0, -1.0, 3.0, 6.0]);
    // A mask larger than the tensor would change its shape: refused, naming both shapes.
    let wide = bools::<B>(&[true; 6], &[2, 3], device);
    assert!(matches!(b.mask_fill(&wide, 0.0), Err(Error::ShapeMismatch { op: "mask_fill", .. })));
    assert!(matches!(
        Tensor::mask_where(&bools::<B>(&[true, false], &[2], device), &a, &b),
        Err(Error::ShapeMismatch { op: "mask_where", .. })
    ));
}

dispatch_tests::tests_on_every_base_backend!(
    int_tensors_keep_their_values_shape_and_device,
    int_arithmetic_broadcasts_wraps_and_refuses_division_by_zero,
    bool_logic_broadcasts_and_casts,
    comparisons_follow_ieee_and_broadcast,
    masks_pick_and_fill_with_broadcasting,
);

/// The gradients of the masks, on `Autodiff` over every base backend: each branch of `mask_where` gets the
/// gradient where it was picked (summed over what it was broadcast along), `mask_fill` zero where it filled.
fn mask_gradients<B: dispatch_core::BaseBackend>(device: &B::Device) {
    let mask = bools::<Autodiff<B>>(&[true, false, true], &[3], device);
    let a = floats::<Autodiff<B>>(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3], device).require_grad().unwrap();
    let b = floats::<Autodiff<B>>(&[0.5], &[1], device).require_grad().unwrap();
    let weights = floats::<Autodiff<B>>(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3], device);
    let loss = Tensor::mask_where(&mask, &a, &b).unwrap().mul(&weights).unwrap().sum().unwrap();
    let gradients = loss.backward().unwrap();
    assert_eq!(a.grad(&gradients).unwrap().to_vec().unwrap(), [1.0, 0.0, 3.0, 4.0, 0.0, 6.0]);
    assert_eq!(b.grad(&gradients).unwrap().to_vec().unwrap(), [2.0 + 5.0]);

    let loss = a.mask_fill(&mask, 100.0).unwrap().mul(&weights).unwrap().sum().unwrap();
    let gradients = loss.backward().unwrap();
    assert_eq!(a.grad(&gradients).unwrap().to_vec().unwrap(), [0.0, 2.0, 0.0, 0.0, 5.0, 0.0]);
    // Comparisons and casts record nothing: their outputs are new leaves.
    assert_eq!(a.gt_scalar(2.0).unwrap().float(DType::F32).unwrap().id(), None);
}

#[test]
fn mask_gradients_on_autodiff_ndarray() {
    mask_gradients::<NdArray>(&NdArrayDevice);
}

#[test]
fn mask_gradients_on_autodiff_candle() {
    mask_gradients::<Candle>(&CandleDevice::cpu());
}

#[derive(Clone, Debug, PartialEq, Dispatch)]
pub enum Device {
    #[backend(Candle)]
    Candle(CandleDevice),
    #[backend(NdArray)]
    NdArray(NdArrayDevice),
    #[autodiff]
    Autodiff(AutodiffDevice<Self>),
}

fn on(name: &str) -> Device {
    name.parse().unwrap()
}

#[test]
fn a_derived_enum_dispatches_int_and_bool_tensors_to_their_variant() {
    for name in ["candle", "ndarray", "autodiff:candle", "autodiff:ndarray"] {
        let device = on(name);
        let x = ints::<DeviceBackend>(&[1, 2, 3], &[3], &device);
        assert_eq!(x.add_scalar(1).unwrap().to_vec().unwrap(), [2, 3, 4], "{name}");
        assert_eq!(x.device(), device, "{name}");
        let mask = x.eq_scalar(2).unwrap();
        assert_eq!(mask.device(), device, "{name}");
        let picked = Tensor::mask_where(&mask, &x.float(DType::F32).unwrap(), &floats(&[0.0], &[1], &device)).unwrap();
        assert_eq!(picked.to_vec().unwrap(), [0.0, 2.0, 0.0], "{name}");
        assert_eq!(picked.device(), device, "{name}");
    }
}

#[test]
fn int_and_bool_operands_on_two_variants_are_device_mismatches_naming_both() {
    let (candle, ndarray) = (on("candle"), on("ndarray"));
    let error = ints::<DeviceBackend>(&[1], &[1], &candle).add(&ints(&[1], &[1], &ndarray)).unwrap_err();
    let Error::DeviceMismatch { op, lhs, rhs } = &error else { panic!("{error}") };
    assert_eq!((*op, lhs.as_str(), rhs.as_str()), ("int_add", "candle", "ndarray"));
    let mask = bools::<DeviceBackend>(&[true], &[1], &candle);
    let error =
        Tensor::mask_where(&mask, &floats(&[1.0], &[1], &ndarray), &floats(&[2.0], &[1], &ndarray)).unwrap_err();
    let Error::DeviceMismatch { op, lhs, rhs } = &error else { panic!("{error}") };
    assert_eq!((*op, lhs.as_str(), rhs.as_str()), ("mask_where", "candle", "ndarray"));
    // A mask on the autodiff variant of the same backend is another device too.
    let error = floats::<DeviceBackend>(&[1.0], &[1], &on("autodiff:candle")).mask_fill(&mask, 0.0).unwrap_err();
    assert!(matches!(error, Error::DeviceMismatch { op: "mask_fill", .. }), "{error}");
}

#[test]
fn int_and_bool_tensors_move_between_variants_through_host_memory() {
    let (candle, ndarray) = (on("candle"), on("ndarray"));
    let x = ints::<DeviceBackend>(&[4, 5], &[2], &candle).to_device(&ndarray).unwrap();
    assert_eq!((x.device(), x.to_vec().unwrap()), (ndarray.clone(), vec![4, 5]));
    let mask = bools::<DeviceBackend>(&[false, true], &[2], &ndarray).to_device(&on("autodiff:candle")).unwrap();
    assert_eq!((mask.device(), mask.to_vec().unwrap()), (on("autodiff:candle"), vec![false, true]));
}
