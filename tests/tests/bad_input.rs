//! Bad input is a typed `Err` on every real backend, never a panic.
//!
//! Not here: `Error::DeviceMismatch` and `Error::Backend` from a single real backend. On a CPU-only machine neither
//! can be provoked honestly: `NdArray` has one device and candle's CPU devices are all the same device (a mix needs
//! the `cuda` feature), and every input that would make ndarray or candle fail is rejected by our own checks first.
//! The mapping of a real candle failure to `Error::Backend` is a unit test in `dispatch-core`'s candle backend;
//! mixed devices across backends are the dispatch enums' tests.

use dispatch_core::DType;
use dispatch_core::backends::{Candle, CandleDevice, NdArray, NdArrayDevice};
use dispatch_core::{ArgumentValue, Backend, Error, RankRule, Result, Shape, Tensor};
use dispatch_nn::models::classifier::one_hot;
use dispatch_tests::{assert_close, assert_err};
use proptest::prelude::*;

fn tensor<B: Backend>(dims: &[usize], device: &B::Device) -> Tensor<B> {
    let count = dims.iter().product();
    Tensor::from_vec(values(count, 0), dims, device).unwrap()
}

/// Half-integers in [-4.5, 4.5]: never zero (so division is finite), and sums and products stay exact.
fn values(count: usize, salt: usize) -> Vec<f32> {
    (0..count).map(|i| ((i * 7 + salt) % 10) as f32 - 4.5).collect()
}

#[track_caller]
fn assert_shape_mismatch<B: Backend>(result: Result<Tensor<B>>, op: &str, lhs: &[usize], rhs: &[usize]) {
    match result {
        Err(error @ Error::ShapeMismatch { .. }) => {
            let message = error.to_string();
            let Error::ShapeMismatch { op: actual_op, lhs: actual_lhs, rhs: actual_rhs } = error else { return };
            assert_eq!((actual_op, actual_lhs.dims(), actual_rhs.dims()), (op, lhs, rhs));
            for part in [op.to_owned(), format!("{lhs:?}"), format!("{rhs:?}")] {
                assert!(message.contains(&part), "`{message}` does not name {part}");
            }
        }
        other => panic!("expected a shape mismatch in `{op}`, got {other:?}"),
    }
}

/// The message of `result`'s error, which must be an `Err`.
#[track_caller]
fn message<T: std::fmt::Debug>(result: Result<T>) -> String {
    result.expect_err("an error").to_string()
}

fn mismatched_shapes_name_the_op_and_both_shapes<B: Backend>(device: &B::Device) {
    let (matrix, vector) = (tensor::<B>(&[2, 3], device), tensor::<B>(&[2], device));
    assert_shape_mismatch(matrix.add(&vector), "add", &[2, 3], &[2]);
    assert_shape_mismatch(matrix.sub(&vector), "sub", &[2, 3], &[2]);
    assert_shape_mismatch(vector.mul(&matrix), "mul", &[2], &[2, 3]);
    assert_shape_mismatch(matrix.div(&vector), "div", &[2, 3], &[2]);
    assert_shape_mismatch(matrix.matmul(&tensor::<B>(&[4, 2], device)), "matmul", &[2, 3], &[4, 2]);
    let batches = (tensor::<B>(&[2, 2, 3], device), tensor::<B>(&[3, 3, 2], device));
    assert_shape_mismatch(batches.0.matmul(&batches.1), "matmul", &[2, 2, 3], &[3, 3, 2]);
    assert_shape_mismatch(Tensor::cat(&[matrix.clone(), tensor::<B>(&[2, 4], device)], 0), "cat", &[2, 3], &[2, 4]);
    assert_shape_mismatch(Tensor::cat(&[matrix, tensor::<B>(&[6], device)], 0), "cat", &[2, 3], &[6]);
}

fn axes_out_of_range_name_the_axis_and_the_shape<B: Backend>(device: &B::Device) {
    let x = tensor::<B>(&[2, 3], device);
    assert_err!(x.sum_dim(2), Error::AxisOutOfRange { op: "sum_dim", axis: 2, shape } if shape.dims() == [2, 3]);
    assert_err!(x.mean_dim(7), Error::AxisOutOfRange { op: "mean_dim", axis: 7, .. });
    assert_err!(x.log_softmax(2), Error::AxisOutOfRange { op: "log_softmax", axis: 2, .. });
    assert_err!(x.argmax(2), Error::AxisOutOfRange { op: "argmax", axis: 2, .. });
    assert_err!(x.narrow(2, 0, 1), Error::AxisOutOfRange { op: "narrow", axis: 2, .. });
    assert_err!(x.swap_dims(0, 2), Error::AxisOutOfRange { op: "swap_dims", axis: 2, .. });
    assert_eq!(
        message(x.sum_dim(2)),
        "invalid argument to `sum_dim`: axis 2 is out of range for a tensor of shape [2, 3]"
    );
    assert_err!(Tensor::cat(&[x.clone(), x], 2), Error::AxisOutOfRange { op: "cat", axis: 2, .. });
}

fn reshape_needs_the_same_element_count_and_a_shape<B: Backend>(device: &B::Device) {
    let x = tensor::<B>(&[2, 3], device);
    let too_few = x.reshape([4, 2]);
    assert_err!(too_few, Error::ElementCountMismatch { op: "reshape", count: 6, shape } if shape.dims() == [4, 2]);
    assert_eq!(
        message(x.reshape([4, 2])),
        "invalid argument to `reshape`: 6 values do not fill shape [4, 2] (8 elements)"
    );
    assert_err!(x.reshape(Vec::new()), Error::UnexpectedRank { op: "reshape", expected: RankRule::AtLeast(1), .. });
    assert_err!(x.reshape([usize::MAX, 0]), Error::ShapeTooLarge { op: "reshape", .. });
}

fn creation_rejects_empty_shapes_and_data_that_does_not_fit<B: Backend>(device: &B::Device) {
    let scalar = Tensor::<B>::from_vec(vec![1.0], Vec::new(), device);
    assert_err!(scalar, Error::UnexpectedRank { op: "from_vec", shape, .. } if shape.rank() == 0);
    assert_eq!(
        message(Tensor::<B>::from_vec(vec![1.0], Vec::new(), device)),
        "invalid argument to `from_vec`: needs a shape of rank 1 or more, got shape []; a scalar is `[1]`"
    );
    assert_err!(Tensor::<B>::full(Vec::new(), 1.0, DType::F32, device), Error::UnexpectedRank { op: "full", .. });
    assert_err!(
        Tensor::<B>::random_uniform(Vec::new(), (0.0, 1.0), 1, DType::F32, device),
        Error::UnexpectedRank { op: "random_uniform", .. }
    );
    assert_err!(
        Tensor::<B>::from_vec(vec![1.0; 3], [2, 2], device),
        Error::ElementCountMismatch { op: "from_vec", count: 3, .. }
    );
    assert_err!(
        Tensor::<B>::from_vec(vec![1.0; 5], [2, 2], device),
        Error::ElementCountMismatch { op: "from_vec", count: 5, .. }
    );
    assert_eq!(
        message(Tensor::<B>::from_vec(vec![1.0; 3], [2, 2], device)),
        "invalid argument to `from_vec`: 3 values do not fill shape [2, 2] (4 elements)"
    );
    // Shapes whose element count overflows, or cannot be allocated, are errors rather than panics or aborts.
    let too_large = Tensor::<B>::full([usize::MAX, 2], 0.0, DType::F32, device);
    assert_err!(too_large, Error::ShapeTooLarge { op: "full", max: Shape::MAX_ELEMENTS, .. });
    assert_eq!(
        message(Tensor::<B>::full([usize::MAX, 2], 0.0, DType::F32, device)),
        format!(
            "invalid argument to `full`: shape [{}, 2] is too large: at most {} elements fit",
            usize::MAX,
            Shape::MAX_ELEMENTS
        )
    );
    assert_err!(
        Tensor::<B>::from_vec(Vec::new(), [usize::MAX, 0], device),
        Error::ShapeTooLarge { op: "from_vec", .. }
    );
    assert_err!(
        Tensor::<B>::random_normal([1 << 62], (0.0, 1.0), 1, DType::F32, device),
        Error::ShapeTooLarge { op: "random_normal", .. }
    );
    let empty_range = Tensor::<B>::random_uniform([2], (1.0, 1.0), 1, DType::F32, device);
    assert_err!(
        empty_range,
        Error::InvalidValue { op: "random_uniform", parameter: "high", value: ArgumentValue::Float(1.0), .. }
    );
    let no_spread = Tensor::<B>::random_normal([2], (0.0, f64::NAN), 1, DType::F32, device);
    assert_err!(no_spread, Error::InvalidValue { op: "random_normal", parameter: "std", .. });
}

fn other_arguments_out_of_their_domain<B: Backend>(device: &B::Device) {
    let (vector, matrix) = (tensor::<B>(&[3], device), tensor::<B>(&[2, 3], device));
    let matrices = RankRule::AtLeast(2);
    assert_err!(vector.matmul(&vector), Error::UnexpectedRank { op: "matmul", expected, .. } if expected == matrices);
    let vector_by_matrix = vector.matmul(&tensor::<B>(&[3, 4], device));
    assert_err!(vector_by_matrix, Error::UnexpectedRank { op: "matmul", shape, .. } if shape.dims() == [3]);
    assert_eq!(
        message(tensor::<B>(&[3, 4], device).matmul(&vector)),
        "invalid argument to `matmul`: needs operands (matrices, or batches of them) of rank 2 or more, got shape [3]"
    );
    assert_err!(matrix.narrow(1, 2, 2), Error::RangeOutOfBounds { op: "narrow", axis: 1, start: 2, len: 2, size: 3 });
    assert_eq!(
        message(matrix.narrow(1, 2, 2)),
        "invalid argument to `narrow`: range 2..4 is out of bounds for axis 1 of size 3"
    );
    assert_err!(matrix.narrow(1, usize::MAX, 2), Error::RangeOutOfBounds { op: "narrow", start: usize::MAX, .. });
    assert_err!(
        Tensor::<B>::cat(&[], 0),
        Error::InvalidValue { op: "cat", parameter: "tensors.len()", value: ArgumentValue::Size(0), .. }
    );
    assert_eq!(
        message(Tensor::<B>::cat(&[], 0)),
        "invalid argument to `cat`: `tensors.len()` is 0; it must be at least 1"
    );
    assert_err!(tensor::<B>(&[2, 0], device).argmax(1), Error::UnexpectedShape { op: "argmax", .. });
    assert_eq!(
        message(tensor::<B>(&[2, 0], device).argmax(1)),
        "invalid argument to `argmax`: needs at least one entry along the axis, got shape [2, 0]"
    );
    assert_err!(vector.transpose(), Error::UnexpectedRank { op: "transpose", expected: RankRule::AtLeast(2), .. });
    assert_err!(vector.to_scalar(), Error::UnexpectedShape { op: "to_scalar", shape, .. } if shape.dims() == [3]);
    assert_err!(
        vector.div_scalar(0.0),
        Error::InvalidValue { op: "div_scalar", parameter: "scalar", value: ArgumentValue::Float(0.0), .. }
    );
    assert_eq!(message(vector.div_scalar(0.0)), "invalid argument to `div_scalar`: `scalar` is 0; it must be non-zero");
    // The classifier's `one_hot` of host labels reports a label out of range like the op does.
    assert_err!(one_hot::<B>(&[0, 3], 3, device), Error::IndexOutOfRange { op: "one_hot", index: 3, len: 3 });
    assert_err!(one_hot::<B>(&[0, 1], usize::MAX, device), Error::ShapeTooLarge { op: "one_hot", .. });
}

/// Dividing by a subnormal divides; its reciprocal would overflow to infinity and turn 0 / s into NaN.
fn division_by_a_subnormal_scalar_is_exact<B: Backend>(device: &B::Device) {
    let tiny = f32::MIN_POSITIVE / 4.0;
    let quotient =
        Tensor::<B>::from_vec(vec![0.0, tiny, -tiny], [3], device).unwrap().div_scalar(f64::from(tiny)).unwrap();
    assert_eq!(quotient.to_vec().unwrap(), [0.0, 1.0, -1.0]);
}

dispatch_tests::tests_on_every_base_backend!(
    mismatched_shapes_name_the_op_and_both_shapes,
    axes_out_of_range_name_the_axis_and_the_shape,
    reshape_needs_the_same_element_count_and_a_shape,
    creation_rejects_empty_shapes_and_data_that_does_not_fit,
    other_arguments_out_of_their_domain,
    division_by_a_subnormal_scalar_is_exact,
);

// ---- random shapes: Err, or Ok with the result a host reference computes ---------------------------------------

/// A host tensor: dims and row-major values.
type Host = (Vec<usize>, Vec<f32>);

/// What an op must do with given operands: succeed with `Host`, or fail with the named error variant.
#[derive(Debug)]
enum Expected {
    Value(Host),
    ShapeMismatch,
    UnexpectedRank,
    AxisOutOfRange,
}

fn host_broadcast(lhs: &[usize], rhs: &[usize]) -> Option<Vec<usize>> {
    let rank = lhs.len().max(rhs.len());
    let aligned = |dims: &[usize], i: usize| if i + dims.len() < rank { 1 } else { dims[i + dims.len() - rank] };
    (0..rank)
        .map(|i| match (aligned(lhs, i), aligned(rhs, i)) {
            (l, r) if l == r || r == 1 => Some(l),
            (1, r) => Some(r),
            _ => None,
        })
        .collect()
}

/// The flat index into `dims` (aligned to the right, size-1 dims repeated) of the output position `index`.
fn broadcast_source(index: &[usize], dims: &[usize]) -> usize {
    let skipped = index.len() - dims.len();
    dims.iter().zip(&index[skipped..]).fold(0, |flat, (&dim, &i)| flat * dim + if dim == 1 { 0 } else { i })
}

fn unravel(mut flat: usize, dims: &[usize]) -> Vec<usize> {
    let mut index = vec![0; dims.len()];
    for (slot, &dim) in index.iter_mut().zip(dims).rev() {
        (*slot, flat) = (flat % dim, flat / dim);
    }
    index
}

/// An element-wise binary op on the host.
type HostOp = fn(f32, f32) -> f32;

fn host_binary(lhs: &Host, rhs: &Host, f: HostOp) -> Expected {
    let Some(dims) = host_broadcast(&lhs.0, &rhs.0) else { return Expected::ShapeMismatch };
    let count = dims.iter().product();
    let values = (0..count)
        .map(|flat| {
            let index = unravel(flat, &dims);
            f(lhs.1[broadcast_source(&index, &lhs.0)], rhs.1[broadcast_source(&index, &rhs.0)])
        })
        .collect();
    Expected::Value((dims, values))
}

fn host_matmul(lhs: &Host, rhs: &Host) -> Expected {
    let (l, r) = (lhs.0.as_slice(), rhs.0.as_slice());
    if l.len() < 2 || r.len() < 2 {
        return Expected::UnexpectedRank;
    }
    let ((lhs_batch, lhs_matrix), (rhs_batch, rhs_matrix)) = (l.split_at(l.len() - 2), r.split_at(r.len() - 2));
    let (m, k, k2, n) = (lhs_matrix[0], lhs_matrix[1], rhs_matrix[0], rhs_matrix[1]);
    let Some(batch) = host_broadcast(lhs_batch, rhs_batch).filter(|_| k == k2) else {
        return Expected::ShapeMismatch;
    };
    let batches: usize = batch.iter().product();
    let mut values = vec![0.0; batches * m * n];
    for b in 0..batches {
        let index = unravel(b, &batch);
        let (lb, rb) = (broadcast_source(&index, lhs_batch), broadcast_source(&index, rhs_batch));
        for (i, j) in (0..m).flat_map(|i| (0..n).map(move |j| (i, j))) {
            let dot = (0..k).map(|p| lhs.1[(lb * m + i) * k + p] * rhs.1[(rb * k + p) * n + j]).sum();
            values[(b * m + i) * n + j] = dot;
        }
    }
    Expected::Value(([batch.as_slice(), &[m, n]].concat(), values))
}

fn host_cat(parts: &[Host], axis: usize) -> Expected {
    let first = &parts[0].0;
    if axis >= first.len() {
        return Expected::AxisOutOfRange;
    }
    let agree = |dims: &Vec<usize>| {
        dims.len() == first.len() && dims.iter().zip(first).enumerate().all(|(i, (a, b))| i == axis || a == b)
    };
    if !parts.iter().all(|(dims, _)| agree(dims)) {
        return Expected::ShapeMismatch;
    }
    let (outer, inner): (usize, usize) = (first[..axis].iter().product(), first[axis + 1..].iter().product());
    let mut values = Vec::new();
    for o in 0..outer {
        for (dims, data) in parts {
            let chunk = dims[axis] * inner;
            values.extend_from_slice(&data[o * chunk..(o + 1) * chunk]);
        }
    }
    let mut dims = first.clone();
    dims[axis] = parts.iter().map(|(dims, _)| dims[axis]).sum();
    Expected::Value((dims, values))
}

#[track_caller]
fn check<B: Backend>(op: &str, actual: Result<Tensor<B>>, expected: &Expected) {
    match (actual, expected) {
        (Ok(tensor), Expected::Value((dims, values))) => {
            assert_eq!(&tensor.dims(), dims, "{op} on {}", B::name());
            assert_close(&tensor.to_vec().unwrap(), values, 1e-6);
        }
        (Err(Error::ShapeMismatch { .. }), Expected::ShapeMismatch) => {}
        (Err(Error::UnexpectedRank { .. }), Expected::UnexpectedRank) => {}
        (Err(Error::AxisOutOfRange { .. }), Expected::AxisOutOfRange) => {}
        (actual, expected) => panic!("{op} on {}: got {actual:?}, expected {expected:?}", B::name()),
    }
}

/// Builds each operand (an empty shape must be refused) and checks `op` against `expected` on backend `B`.
fn check_on<B: Backend>(device: &B::Device, hosts: &[Host], op: &str, expected: &Expected) {
    let mut operands = Vec::new();
    for (dims, values) in hosts {
        let made = Tensor::<B>::from_vec(values.clone(), dims.as_slice(), device);
        if dims.is_empty() {
            assert_err!(made, Error::UnexpectedRank { expected: RankRule::AtLeast(1), .. });
            return;
        }
        operands.push(made.unwrap());
    }
    let actual = match (op, operands.as_slice()) {
        ("add", [l, r]) => l.add(r),
        ("sub", [l, r]) => l.sub(r),
        ("mul", [l, r]) => l.mul(r),
        ("div", [l, r]) => l.div(r),
        ("matmul", [l, r]) => l.matmul(r),
        (axis, parts) => Tensor::cat(parts, axis.trim_start_matches("cat").parse().unwrap()),
    };
    check(op, actual, expected);
}

fn check_both(hosts: &[Host], op: &str, expected: &Expected) {
    check_on::<NdArray>(&NdArrayDevice, hosts, op, expected);
    check_on::<Candle>(&CandleDevice::cpu(), hosts, op, expected);
}

fn host(dims: Vec<usize>, salt: usize) -> Host {
    let count = Shape::new(dims.as_slice()).num_elements();
    (dims, values(count, salt))
}

fn dims() -> impl Strategy<Value = Vec<usize>> {
    prop::collection::vec(0usize..5, 0..=4)
}

/// `dims` with its leading dims dropped and some dims set to 1: a shape that broadcasts against it.
fn broadcastable(dims: Vec<usize>) -> impl Strategy<Value = Vec<usize>> {
    let rank = dims.len();
    (0..=rank, prop::collection::vec(any::<bool>(), rank)).prop_map(move |(dropped, ones)| {
        dims.iter().zip(ones).skip(dropped).map(|(&dim, one)| if one { 1 } else { dim }).collect()
    })
}

/// Mostly shapes that fit together (the interesting case: a left operand of a rank in `ranks` and a right one
/// made by `fitting`), sometimes any two shapes, in either order.
fn operand_pair(
    ranks: std::ops::RangeInclusive<usize>,
    fitting: fn(Vec<usize>) -> BoxedStrategy<Vec<usize>>,
) -> impl Strategy<Value = (Vec<usize>, Vec<usize>)> {
    prop_oneof![
        1 => (dims(), dims()),
        3 => prop::collection::vec(0usize..5, ranks).prop_flat_map(move |lhs| (Just(lhs.clone()), fitting(lhs))),
    ]
    .prop_flat_map(|(a, b)| prop_oneof![Just((a.clone(), b.clone())), Just((b, a))])
}

/// A right operand for `lhs @ rhs`: same batch, inner size taken from `lhs`, any number of columns.
fn multipliable(lhs: Vec<usize>) -> BoxedStrategy<Vec<usize>> {
    (0usize..5)
        .prop_map(move |n| match lhs.as_slice() {
            [.., k] if lhs.len() > 1 => [&lhs[..lhs.len() - 2], &[*k, n]].concat(),
            _ => vec![n],
        })
        .boxed()
}

proptest! {
    #![proptest_config(dispatch_tests::proptest_config(256, "proptest-regressions/bad_input.txt"))]

    #[test]
    fn binary_ops_on_random_shapes_fail_or_match_the_host((lhs, rhs) in operand_pair(0..=4, |l| broadcastable(l).boxed())) {
        let hosts = [host(lhs, 1), host(rhs, 4)];
        let ops: [(&str, HostOp); 4] =
            [("add", |a, b| a + b), ("sub", |a, b| a - b), ("mul", |a, b| a * b), ("div", |a, b| a / b)];
        for (op, f) in ops {
            check_both(&hosts, op, &host_binary(&hosts[0], &hosts[1], f));
        }
    }

    #[test]
    fn matmul_on_random_shapes_fails_or_matches_the_host((lhs, rhs) in operand_pair(2..=3, multipliable)) {
        let hosts = [host(lhs, 2), host(rhs, 3)];
        check_both(&hosts, "matmul", &host_matmul(&hosts[0], &hosts[1]));
    }

    #[test]
    fn cat_on_random_shapes_fails_or_matches_the_host(
        first in dims(),
        others in prop::collection::vec((any::<bool>(), 0usize..5, dims()), 0..3),
        axis in 0usize..5,
    ) {
        // Each further part either shares `first`'s dims except along `axis`, or has random dims.
        let mut parts = vec![host(first.clone(), 0)];
        for (index, (similar, len, random)) in others.into_iter().enumerate() {
            let dims = if similar && axis < first.len() {
                let mut dims = first.clone();
                dims[axis] = len;
                dims
            } else {
                random
            };
            parts.push(host(dims, index + 5));
        }
        check_both(&parts, &format!("cat{axis}"), &host_cat(&parts, axis));
    }
}
