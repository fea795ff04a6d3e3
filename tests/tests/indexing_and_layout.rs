//! `permute`, `unsqueeze`, `squeeze`, `expand`, `flip`, `stack`, extremes and variance, and picking by int tensors
//! (`index_select`, `select_add`, `gather`, `scatter_add`, `embedding`, `one_hot`) on every backend: values computed
//! by hand, bad indices and axes as typed errors, and gradients against finite differences under `Autodiff`.

use dispatch_core::backends::Autodiff;
use dispatch_core::{ArgumentValue, Backend, BaseBackend, DType, Error, RankRule, Result, Tensor};
use dispatch_tests::{assert_err, check_gradients, floats, ints};

fn permute_squeeze_and_unsqueeze_move_dimensions<B: Backend>(device: &B::Device) {
    let x = floats::<B>(&[0.0, 1.0, 2.0, 3.0, 4.0, 5.0], &[1, 2, 3], device);
    let permuted = x.permute([2, 0, 1]).unwrap();
    assert_eq!((permuted.dims(), permuted.to_vec().unwrap()), (vec![3, 1, 2], vec![0.0, 3.0, 1.0, 4.0, 2.0, 5.0]));
    assert_err!(x.permute([0, 0, 1]), Error::InvalidValue { op: "permute", parameter: "axes", value, .. }
        if value == ArgumentValue::Sizes(vec![0, 0, 1]));
    assert_err!(x.permute([0, 1]), Error::InvalidValue { op: "permute", parameter: "axes", .. });
    assert_err!(x.permute([0, 3, 1]), Error::AxisOutOfRange { op: "permute", axis: 3, .. });
    assert_eq!(x.squeeze(0).unwrap().dims(), [2, 3]);
    assert_err!(x.squeeze(1), Error::UnexpectedShape { op: "squeeze", shape, .. } if shape.dims() == [1, 2, 3]);
    assert_err!(
        floats::<B>(&[1.0], &[1], device).squeeze(0),
        Error::UnexpectedRank { op: "squeeze", expected: RankRule::AtLeast(2), .. }
    );
    assert_eq!(x.unsqueeze(3).unwrap().dims(), [1, 2, 3, 1]);
    assert_eq!(x.unsqueeze(1).unwrap().to_vec().unwrap(), x.to_vec().unwrap());
    assert_err!(x.unsqueeze(4), Error::AxisOutOfRange { op: "unsqueeze", axis: 4, .. });
}

fn index_select_picks_and_select_add_adds_back<B: Backend>(device: &B::Device) {
    let x = floats::<B>(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[3, 2], device);
    let picked = x.index_select(0, &ints(&[2, 0, 2], &[3], device)).unwrap();
    assert_eq!((picked.dims(), picked.to_vec().unwrap()), (vec![3, 2], vec![5.0, 6.0, 1.0, 2.0, 5.0, 6.0]));
    assert_eq!(x.index_select(1, &ints(&[1], &[1], device)).unwrap().to_vec().unwrap(), [2.0, 4.0, 6.0]);
    let past_the_end = x.index_select(0, &ints(&[3], &[1], device));
    assert_err!(past_the_end, Error::IndexOutOfRange { op: "index_select", index: 3, len: 3 });
    let negative = x.index_select(0, &ints(&[-1], &[1], device));
    assert_err!(negative, Error::IndexOutOfRange { op: "index_select", index: -1, len: 3 });
    // The first index out of range is named; `i64::MAX` is one, not padding (as candle's own kernels take it).
    let largest = x.index_select(0, &ints(&[1, i64::MAX, -1], &[3], device));
    assert_err!(largest, Error::IndexOutOfRange { op: "index_select", index: i64::MAX, len: 3 });
    assert_err!(
        x.index_select(0, &ints(&[0, 1], &[1, 2], device)),
        Error::UnexpectedRank { op: "index_select", what: "indices", expected: RankRule::Exactly(1), .. }
    );
    // Repeated indices add up.
    let zeros = Tensor::<B>::zeros([3, 2], DType::F32, device).unwrap();
    let added = zeros.select_add(0, &ints(&[2, 0, 2], &[3], device), &picked).unwrap();
    assert_eq!(added.to_vec().unwrap(), [1.0, 2.0, 0.0, 0.0, 10.0, 12.0]);
    assert!(matches!(
        zeros.select_add(0, &ints(&[0], &[1], device), &picked),
        Err(Error::ShapeMismatch { op: "select_add", .. })
    ));
}

fn embedding_and_one_hot_follow_the_ids<B: Backend>(device: &B::Device) {
    let weights = floats::<B>(&[0.0, 0.1, 1.0, 1.1, 2.0, 2.1], &[3, 2], device);
    let ids = ints::<B>(&[2, 0, 1, 2], &[2, 2], device);
    let rows = weights.embedding(&ids).unwrap();
    assert_eq!(rows.dims(), [2, 2, 2]);
    assert_eq!(rows.to_vec().unwrap(), [2.0, 2.1, 0.0, 0.1, 1.0, 1.1, 2.0, 2.1]);
    assert_err!(weights.embedding(&ints(&[3], &[1], device)), Error::IndexOutOfRange { index: 3, len: 3, .. });
    let hot = ints::<B>(&[1, 0, 2], &[3], device).one_hot(3, DType::F32).unwrap();
    assert_eq!((hot.dims(), hot.to_vec().unwrap()), (vec![3, 3], vec![0.0, 1.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0]));
    let past_the_end = ints::<B>(&[3], &[1], device).one_hot(3, DType::F32);
    assert_err!(past_the_end, Error::IndexOutOfRange { op: "one_hot", index: 3, len: 3 });
    let negative = ints::<B>(&[-2], &[1], device).one_hot(3, DType::F32);
    assert_err!(negative, Error::IndexOutOfRange { op: "one_hot", index: -2, len: 3 });
}

fn expand_flip_and_stack<B: Backend>(device: &B::Device) {
    let row = floats::<B>(&[1.0, 2.0, 3.0], &[3], device);
    let expanded = row.expand([2, 3]).unwrap();
    assert_eq!((expanded.dims(), expanded.to_vec().unwrap()), (vec![2, 3], vec![1.0, 2.0, 3.0, 1.0, 2.0, 3.0]));
    assert!(matches!(row.expand([2, 4]), Err(Error::ShapeMismatch { op: "expand", .. })));
    assert!(matches!(expanded.expand([3]), Err(Error::ShapeMismatch { op: "expand", .. })));
    assert_eq!(expanded.flip([1]).unwrap().to_vec().unwrap(), [3.0, 2.0, 1.0, 3.0, 2.0, 1.0]);
    let x = floats::<B>(&[1.0, 2.0, 3.0, 4.0], &[2, 2], device);
    assert_eq!(x.flip([0, 1]).unwrap().to_vec().unwrap(), [4.0, 3.0, 2.0, 1.0]);
    assert_err!(x.flip([2]), Error::AxisOutOfRange { op: "flip", axis: 2, .. });
    let tiled = x.repeat([2, 3]).unwrap();
    assert_eq!(tiled.dims(), [4, 6]);
    assert_eq!(tiled.narrow(0, 0, 1).unwrap().to_vec().unwrap(), [1.0, 2.0, 1.0, 2.0, 1.0, 2.0]);
    assert_eq!(tiled.narrow(0, 2, 1).unwrap().to_vec().unwrap(), [1.0, 2.0, 1.0, 2.0, 1.0, 2.0]);
    assert_eq!(tiled.narrow(0, 3, 1).unwrap().to_vec().unwrap(), [3.0, 4.0, 3.0, 4.0, 3.0, 4.0]);
    assert_err!(x.repeat([2]), Error::InvalidValue { op: "repeat", parameter: "times", .. });
    let assigned = x.slice_assign(1, 1, &floats::<B>(&[9.0, 8.0], &[2, 1], device)).unwrap();
    assert_eq!(assigned.to_vec().unwrap(), [1.0, 9.0, 3.0, 8.0]);
    assert!(matches!(
        x.slice_assign(1, 1, &floats::<B>(&[9.0, 8.0], &[1, 2], device)),
        Err(Error::ShapeMismatch { op: "slice_assign", .. })
    ));
    assert!(x.slice_assign(1, 2, &floats::<B>(&[9.0, 8.0], &[2, 1], device)).is_err());
    let stacked = Tensor::stack(&[row.clone(), row.mul_scalar(2.0).unwrap()], 1).unwrap();
    assert_eq!((stacked.dims(), stacked.to_vec().unwrap()), (vec![3, 2], vec![1.0, 2.0, 2.0, 4.0, 3.0, 6.0]));
}

fn extremes_and_variance<B: Backend>(device: &B::Device) {
    let x = floats::<B>(&[1.0, 5.0, 3.0, -2.0, 0.5, 4.0], &[2, 3], device);
    assert_eq!(x.max_dim(1).unwrap().to_vec().unwrap(), [5.0, 4.0]);
    assert_eq!(x.min_dim(0).unwrap().to_vec().unwrap(), [-2.0, 0.5, 3.0]);
    assert_eq!((x.max().unwrap().to_vec().unwrap(), x.min().unwrap().to_vec().unwrap()), (vec![5.0], vec![-2.0]));
    let var = x.var_dim(1, 0).unwrap().to_vec().unwrap();
    dispatch_tests::assert_close(&var, &[8.0 / 3.0, 18.166_666 / 3.0], 1e-6);
    dispatch_tests::assert_close(&x.var_dim(1, 1).unwrap().to_vec().unwrap(), &[4.0, 9.083_333], 1e-6);
    assert_err!(
        floats::<B>(&[1.0], &[1], device).var_dim(0, 1),
        Error::InvalidValue { op: "var_dim", parameter: "correction", value: ArgumentValue::Size(1), .. }
    );
    assert_eq!(x.prod_dim(1).unwrap().to_vec().unwrap(), [15.0, -4.0]);
    assert_eq!(x.prod().unwrap().to_vec().unwrap(), [-60.0]);
    assert_err!(floats::<B>(&[], &[2, 0], device).max_dim(1), Error::UnexpectedShape { op: "max_dim", .. });
    assert!(floats::<B>(&[1.0, f32::NAN], &[2], device).max().unwrap().to_vec().unwrap()[0].is_nan());
}

fn gather_and_scatter_add<B: Backend>(device: &B::Device) {
    let x = floats::<B>(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3], device);
    // For each row, the entries at the given columns (as cross-entropy picks each row's label).
    let picked = x.gather(1, &ints(&[2, 0, 1, 1], &[2, 2], device)).unwrap();
    assert_eq!((picked.dims(), picked.to_vec().unwrap()), (vec![2, 2], vec![3.0, 1.0, 5.0, 5.0]));
    assert_err!(
        x.gather(1, &ints(&[3, 0], &[2, 1], device)),
        Error::IndexOutOfRange { op: "gather", index: 3, len: 3 }
    );
    assert!(matches!(x.gather(1, &ints(&[0, 0, 0], &[3, 1], device)), Err(Error::ShapeMismatch { op: "gather", .. })));
    let zeros = Tensor::<B>::zeros([2, 3], DType::F32, device).unwrap();
    assert_err!(
        zeros.scatter_add(1, &ints(&[0, 1, i64::MAX, 2], &[2, 2], device), &picked),
        Error::IndexOutOfRange { op: "scatter_add", index: i64::MAX, len: 3 }
    );
    let added = zeros.scatter_add(1, &ints(&[2, 0, 1, 1], &[2, 2], device), &picked).unwrap();
    assert_eq!(added.to_vec().unwrap(), [1.0, 0.0, 3.0, 0.0, 10.0, 0.0]);
}

dispatch_tests::tests_on_every_base_backend!(
    expand_flip_and_stack,
    extremes_and_variance,
    gather_and_scatter_add,
    permute_squeeze_and_unsqueeze_move_dimensions,
    index_select_picks_and_select_add_adds_back,
    embedding_and_one_hot_follow_the_ids,
);

/// `Σ w ⊙ op(x)` differentiated by `Autodiff`, against central differences of the same forward, in F64.
fn check_gradient<B: BaseBackend>(
    device: &B::Device,
    label: &str,
    x: &[f32],
    dims: &[usize],
    op: impl Fn(&Tensor<Autodiff<B>>) -> Result<Tensor<Autodiff<B>>>,
) {
    let x = x.iter().map(|&value| f64::from(value)).collect();
    check_gradients::<B>(device, label, &[(x, dims.to_vec())], |x| op(&x[0])).unwrap();
}

/// An F64 tensor of `data`, a constant of an F64 gradient check.
fn constant<B: Backend>(data: &[f32], dims: &[usize], device: &B::Device) -> Tensor<B> {
    floats::<B>(data, dims, device).cast(DType::F64).unwrap()
}

fn indexing_and_layout_gradients<B: BaseBackend>(device: &B::Device) {
    let x = [0.3, -1.2, 0.8, 1.5, -0.4, 2.0];
    check_gradient::<B>(device, "permute", &x, &[1, 2, 3], |x| x.permute([2, 0, 1]));
    check_gradient::<B>(device, "unsqueeze", &x, &[2, 3], |x| x.unsqueeze(1)?.exp());
    check_gradient::<B>(device, "index_select", &x, &[3, 2], |x| {
        x.index_select(0, &ints(&[2, 0, 2], &[3], device))?.tanh()
    });
    check_gradient::<B>(device, "embedding", &x, &[3, 2], |x| x.embedding(&ints(&[1, 1, 0], &[3], device)));
    let base = constant::<Autodiff<B>>(&[1.0; 6], &[3, 2], device);
    check_gradient::<B>(device, "select_add source", &x[..4], &[2, 2], |source| {
        base.select_add(0, &ints(&[2, 2], &[2], device), source)?.sigmoid()
    });
    check_gradient::<B>(device, "expand", &x[..3], &[3], |x| x.expand([2, 3])?.exp());
    check_gradient::<B>(device, "flip", &x, &[2, 3], |x| x.flip([1])?.exp());
    check_gradient::<B>(device, "repeat", &x, &[2, 3], |x| x.repeat([2, 2])?.exp());
    check_gradient::<B>(device, "stack", &x, &[2, 3], |x| Tensor::stack(&[x.clone(), x.exp()?], 0));
    check_gradient::<B>(device, "max_dim", &x, &[2, 3], |x| x.max_dim(1));
    check_gradient::<B>(device, "min_dim", &x, &[2, 3], |x| x.min_dim(0));
    check_gradient::<B>(device, "max", &x, &[2, 3], |x| x.max());
    check_gradient::<B>(device, "var_dim", &x, &[2, 3], |x| x.var_dim(1, 1));
    check_gradient::<B>(device, "prod_dim", &x, &[2, 3], |x| x.prod_dim(1));
    check_gradient::<B>(device, "prod with a zero", &[0.0, 1.5, -2.0, 0.7], &[4], |x| x.prod());
    let patch = constant::<Autodiff<B>>(&[0.5, -0.5], &[2, 1], device).require_grad().unwrap();
    check_gradient::<B>(device, "slice_assign tensor", &x, &[2, 3], |x| x.slice_assign(1, 1, &patch)?.exp());
    let base = constant::<Autodiff<B>>(&x, &[2, 3], device);
    check_gradient::<B>(device, "slice_assign source", &x[..2], &[2, 1], |source| {
        base.slice_assign(1, 2, source)?.exp()
    });
    check_gradient::<B>(device, "gather", &x, &[2, 3], |x| x.gather(1, &ints(&[2, 0, 2, 1], &[2, 2], device))?.exp());
    let source = constant::<Autodiff<B>>(&[0.5, -0.5], &[1, 2], device);
    check_gradient::<B>(device, "select_add tensor", &x, &[3, 2], |tensor| {
        tensor.select_add(0, &ints(&[1], &[1], device), &source)?.sigmoid()
    });
    let base = constant::<Autodiff<B>>(&[1.0; 6], &[2, 3], device);
    check_gradient::<B>(device, "scatter_add source", &x[..4], &[2, 2], |source| {
        base.scatter_add(1, &ints(&[2, 2, 0, 1], &[2, 2], device), source)?.sigmoid()
    });
}

#[test]
fn indexing_and_layout_gradients_on_autodiff_ndarray() {
    indexing_and_layout_gradients::<dispatch_core::backends::NdArray>(&dispatch_core::backends::NdArrayDevice);
}

#[test]
fn indexing_and_layout_gradients_on_autodiff_candle() {
    indexing_and_layout_gradients::<dispatch_core::backends::Candle>(&dispatch_core::backends::CandleDevice::cpu());
}
