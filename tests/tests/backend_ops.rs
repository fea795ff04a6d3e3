//! Every op of the `Backend` trait against values computed by hand, on every real backend.

use dispatch_core::DType;
use dispatch_core::backend::AdamStep;
use dispatch_core::{Backend, Error, IntTensor, Result, Tensor};
use dispatch_tests::assert_close;

const TOLERANCE: f32 = 1e-6;

fn tensor<B: Backend>(data: &[f32], dims: &[usize], device: &B::Device) -> Tensor<B> {
    Tensor::from_vec(data.to_vec(), dims, device).unwrap()
}

/// The op's result: its dims and its values in row-major order.
fn result<B: Backend>(tensor: Result<Tensor<B>>) -> (Vec<usize>, Vec<f32>) {
    let tensor = tensor.unwrap();
    (tensor.dims(), tensor.to_vec().unwrap())
}

#[track_caller]
fn assert_tensor<B: Backend>(actual: Result<Tensor<B>>, dims: &[usize], values: &[f32]) {
    let (actual_dims, actual_values) = result(actual);
    assert_eq!(actual_dims, dims);
    assert_close(&actual_values, values, TOLERANCE);
}

#[track_caller]
fn assert_indices<B: Backend>(actual: Result<IntTensor<B>>, dims: &[usize], values: &[i64]) {
    let actual = actual.unwrap();
    assert_eq!((actual.dims(), actual.to_vec().unwrap()), (dims.to_vec(), values.to_vec()));
}

fn from_vec_keeps_row_major_order_and_device<B: Backend>(device: &B::Device) {
    let matrix = tensor::<B>(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3], device);
    assert_eq!(matrix.dims(), [2, 3]);
    assert_eq!(matrix.to_vec().unwrap(), [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    assert_eq!(&matrix.device(), device);
    assert_eq!(matrix.to_device(device).unwrap().to_vec().unwrap(), matrix.to_vec().unwrap());
    assert_eq!(tensor::<B>(&[7.5], &[1], device).to_scalar().unwrap(), 7.5);
}

fn full_zeros_and_ones_fill_the_shape<B: Backend>(device: &B::Device) {
    assert_tensor(Tensor::<B>::full([2, 2], -1.5, DType::F32, device), &[2, 2], &[-1.5; 4]);
    assert_tensor(Tensor::<B>::zeros([3], DType::F32, device), &[3], &[0.0; 3]);
    assert_tensor(Tensor::<B>::ones([1, 2, 1], DType::F32, device), &[1, 2, 1], &[1.0; 2]);
}

fn binary_ops_of_equal_shapes<B: Backend>(device: &B::Device) {
    let a = tensor::<B>(&[1.0, -2.0, 3.0, 8.0], &[2, 2], device);
    let b = tensor::<B>(&[4.0, 5.0, -6.0, 0.5], &[2, 2], device);
    assert_tensor(a.add(&b), &[2, 2], &[5.0, 3.0, -3.0, 8.5]);
    assert_tensor(a.sub(&b), &[2, 2], &[-3.0, -7.0, 9.0, 7.5]);
    assert_tensor(a.mul(&b), &[2, 2], &[4.0, -10.0, -18.0, 4.0]);
    assert_tensor(a.div(&b), &[2, 2], &[0.25, -0.4, -0.5, 16.0]);
}

fn bias_add_broadcasts_a_row_over_every_row<B: Backend>(device: &B::Device) {
    let x = tensor::<B>(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3], device);
    let bias = tensor::<B>(&[10.0, 20.0, 30.0], &[3], device);
    assert_tensor(x.add(&bias), &[2, 3], &[11.0, 22.0, 33.0, 14.0, 25.0, 36.0]);
    // The broadcast operand may be on either side.
    assert_tensor(bias.sub(&x), &[2, 3], &[9.0, 18.0, 27.0, 6.0, 15.0, 24.0]);
}

fn broadcasting_stretches_size_one_dims_on_both_sides<B: Backend>(device: &B::Device) {
    let column = tensor::<B>(&[1.0, 2.0], &[2, 1], device);
    let row = tensor::<B>(&[10.0, 20.0, 40.0], &[1, 3], device);
    assert_tensor(column.mul(&row), &[2, 3], &[10.0, 20.0, 40.0, 20.0, 40.0, 80.0]);
    assert_tensor(row.div(&column), &[2, 3], &[10.0, 20.0, 40.0, 5.0, 10.0, 20.0]);
    let batch = tensor::<B>(&[1.0, 2.0, 3.0, 4.0], &[2, 1, 2], device);
    let scale = tensor::<B>(&[1.0, 10.0], &[2, 1], device);
    assert_tensor(batch.mul(&scale), &[2, 2, 2], &[1.0, 2.0, 10.0, 20.0, 3.0, 4.0, 30.0, 40.0]);
}

fn scalar_ops_apply_to_every_element<B: Backend>(device: &B::Device) {
    let x = tensor::<B>(&[-2.0, 0.0, 1.5, 4.0], &[4], device);
    assert_tensor(x.add_scalar(1.0), &[4], &[-1.0, 1.0, 2.5, 5.0]);
    assert_tensor(x.sub_scalar(1.0), &[4], &[-3.0, -1.0, 0.5, 3.0]);
    assert_tensor(x.mul_scalar(-2.0), &[4], &[4.0, 0.0, -3.0, -8.0]);
    assert_tensor(x.div_scalar(4.0), &[4], &[-0.5, 0.0, 0.375, 1.0]);
    assert_tensor(x.powf_scalar(2.0), &[4], &[4.0, 0.0, 2.25, 16.0]);
    assert_tensor(x.gt_scalar(0.0).and_then(|step| step.float(DType::F32)), &[4], &[0.0, 0.0, 1.0, 1.0]);
    let positive = tensor::<B>(&[2.0, 9.0], &[2], device);
    assert_tensor(positive.sqrt(), &[2], &[std::f32::consts::SQRT_2, 3.0]);
}

fn unary_ops_match_their_math<B: Backend>(device: &B::Device) {
    let x = tensor::<B>(&[-1.0, 0.0, 2.0], &[3], device);
    assert_tensor(x.neg(), &[3], &[1.0, 0.0, -2.0]);
    assert_tensor(x.exp(), &[3], &[0.367_879_44, 1.0, 7.389_056]);
    assert_tensor(x.relu(), &[3], &[0.0, 0.0, 2.0]);
    assert_tensor(x.sigmoid(), &[3], &[0.268_941_43, 0.5, 0.880_797_1]);
    assert_tensor(x.tanh(), &[3], &[-0.761_594_2, 0.0, 0.964_027_6]);
    assert_tensor(x.square(), &[3], &[1.0, 0.0, 4.0]);
    let positive = tensor::<B>(&[1.0, std::f32::consts::E, 10.0], &[3], device);
    assert_tensor(positive.log(), &[3], &[0.0, 1.0, std::f32::consts::LN_10]);
}

fn matmul_of_two_matrices<B: Backend>(device: &B::Device) {
    let a = tensor::<B>(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3], device);
    let b = tensor::<B>(&[7.0, 8.0, 9.0, 10.0, 11.0, 12.0], &[3, 2], device);
    assert_tensor(a.matmul(&b), &[2, 2], &[58.0, 64.0, 139.0, 154.0]);
    // A transposed (strided) operand, as in `x @ w^T`.
    let w = tensor::<B>(&[7.0, 9.0, 11.0, 8.0, 10.0, 12.0], &[2, 3], device);
    assert_tensor(a.matmul(&w.transpose().unwrap()), &[2, 2], &[58.0, 64.0, 139.0, 154.0]);
}

fn batched_matmul_multiplies_each_pair<B: Backend>(device: &B::Device) {
    let a = tensor::<B>(&[1.0, 2.0, 3.0, 4.0, 1.0, 0.0, 0.0, 2.0], &[2, 2, 2], device);
    let b = tensor::<B>(&[1.0, 0.0, 0.0, 1.0, 5.0, 6.0, 7.0, 8.0], &[2, 2, 2], device);
    assert_tensor(a.matmul(&b), &[2, 2, 2], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 14.0, 16.0]);
    let row = tensor::<B>(&[1.0, 1.0, 2.0, 0.0, 0.0, 1.0], &[2, 1, 3], device);
    let columns = tensor::<B>(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3, 2], device);
    assert_tensor(row.matmul(&columns), &[2, 1, 2], &[14.0, 18.0, 5.0, 6.0]);
}

fn element_wise_functions_match_their_math<B: Backend>(device: &B::Device) {
    assert_tensor(tensor::<B>(&[4.0, 0.25, 0.0], &[3], device).sqrt(), &[3], &[2.0, 0.5, 0.0]);
    assert_tensor(tensor::<B>(&[2.0, -4.0], &[2], device).recip(), &[2], &[0.5, -0.25]);
    assert_tensor(tensor::<B>(&[-1.5, 2.0, 0.0], &[3], device).abs(), &[3], &[1.5, 2.0, 0.0]);
    let angles = tensor::<B>(&[0.0, std::f32::consts::FRAC_PI_2, std::f32::consts::PI], &[3], device);
    assert_tensor(angles.sin(), &[3], &[0.0, 1.0, 0.0]);
    assert_tensor(angles.cos(), &[3], &[1.0, 0.0, -1.0]);
    // erf, exact GELU and SiLU, to the precision of f32.
    let x = tensor::<B>(&[0.5, -1.0, 2.0], &[3], device);
    assert_tensor(x.erf(), &[3], &[0.520_499_9, -0.842_700_8, 0.995_322_3]);
    assert_tensor(x.gelu(), &[3], &[0.345_731_23, -0.158_655_25, 1.954_499_7]);
    assert_tensor(x.silu(), &[3], &[0.311_229_67, -0.268_941_42, 1.761_594_2]);
    let wide = tensor::<B>(&[-2.0, 0.5, 3.0], &[3], device);
    assert_tensor(wide.clamp(-1.0, 1.0), &[3], &[-1.0, 0.5, 1.0]);
    let crossed = wide.clamp(1.0, -1.0);
    assert!(matches!(crossed, Err(Error::InvalidValue { op: "clamp", parameter: "max", .. })), "{crossed:?}");
    assert_eq!(
        crossed.unwrap_err().to_string(),
        "invalid argument to `clamp`: `max` is -1; it must be a number no smaller than `min`"
    );
    assert!(matches!(wide.clamp(f64::NAN, 1.0), Err(Error::InvalidValue { op: "clamp", parameter: "min", .. })));
    assert!(matches!(wide.clamp(0.0, f64::NAN), Err(Error::InvalidValue { op: "clamp", parameter: "max", .. })));
    let three = tensor::<B>(&[3.0], &[1], device);
    assert_tensor(tensor::<B>(&[1.0, 5.0], &[2], device).maximum(&three), &[2], &[3.0, 5.0]);
    assert_tensor(tensor::<B>(&[1.0, 5.0], &[2], device).minimum(&three), &[2], &[1.0, 3.0]);
    // NaN in either operand is NaN, on every backend.
    let nan = tensor::<B>(&[f32::NAN, 1.0], &[2], device);
    let one_nan = tensor::<B>(&[1.0, f32::NAN], &[2], device);
    for result in [nan.maximum(&one_nan), one_nan.maximum(&nan), nan.minimum(&one_nan), one_nan.minimum(&nan)] {
        assert!(result.unwrap().to_vec().unwrap().iter().all(|x| x.is_nan()));
    }
}

fn argmin_picks_the_first_smallest_as_an_int<B: Backend>(device: &B::Device) {
    let x = tensor::<B>(&[3.0, 1.0, 1.0, 0.0, 5.0, -1.0], &[2, 3], device);
    let lanes = x.argmin(1).unwrap();
    assert_eq!((lanes.dims(), lanes.to_vec().unwrap()), (vec![2, 1], vec![1, 2]));
    assert_eq!(x.argmin(0).unwrap().to_vec().unwrap(), [1, 0, 1]);
    // NaN is skipped: among NaN and infinities the first infinity is the smallest; a lane of NaN alone gives 0.
    let (nan, inf) = (f32::NAN, f32::INFINITY);
    let skipped = tensor::<B>(&[nan, inf, inf, nan, nan, nan], &[2, 3], device).argmin(1).unwrap();
    assert_eq!(skipped.to_vec().unwrap(), [1, 0]);
    assert!(matches!(tensor::<B>(&[], &[2, 0], device).argmin(1), Err(Error::UnexpectedShape { op: "argmin", .. })));
}

fn matmul_broadcasts_batch_dimensions<B: Backend>(device: &B::Device) {
    // [2, 1, 2, 2] @ [3, 2, 1]: batches [2, 1] and [3] broadcast to [2, 3]; each product is a 2x2 times a 2x1.
    let lhs_values = [1.0, 2.0, 3.0, 4.0, -1.0, 0.0, 0.0, 1.0];
    let rhs_values = [1.0, 1.0, 2.0, 0.0, 0.0, 3.0];
    let lhs = tensor::<B>(&lhs_values, &[2, 1, 2, 2], device);
    let rhs = tensor::<B>(&rhs_values, &[3, 2, 1], device);
    let mut expected = Vec::new();
    for a in 0..2 {
        for b in 0..3 {
            for i in 0..2 {
                let row = &lhs_values[(a * 2 + i) * 2..][..2];
                expected.push(row[0] * rhs_values[b * 2] + row[1] * rhs_values[b * 2 + 1]);
            }
        }
    }
    assert_tensor(lhs.matmul(&rhs), &[2, 3, 2, 1], &expected);
    // A batch of matrices times one matrix, as attention scores times a projection: [2, 2, 2] @ [2, 3].
    let weights = tensor::<B>(&[1.0, 0.0, 2.0, 0.0, 1.0, -1.0], &[2, 3], device);
    let product = lhs.reshape([2, 2, 2]).unwrap().matmul(&weights).unwrap();
    assert_eq!(product.dims(), [2, 2, 3]);
    let expected = [1.0, 2.0, 0.0, 3.0, 4.0, 2.0, -1.0, 0.0, -2.0, 0.0, 1.0, -1.0];
    assert_close(&product.to_vec().unwrap(), &expected, TOLERANCE);
    // The same matrix stored transposed (a weight's gradient pass reads it so), or with a batch of one.
    let stored_transposed = tensor::<B>(&[1.0, 0.0, 0.0, 1.0, 2.0, -1.0], &[3, 2], device).transpose().unwrap();
    let batch_of_one = weights.reshape([1, 2, 3]).unwrap();
    for matrix in [stored_transposed, batch_of_one] {
        assert_tensor(lhs.reshape([2, 2, 2]).unwrap().matmul(&matrix), &[2, 2, 3], &expected);
    }
    // Permuted batches, as attention's heads: [2, 3, 2, 2] read as [2, 2, 3, 2], and a permuted view of a
    // product times a matrix; each equals the product of contiguous copies.
    let values: Vec<f32> = (0..24).map(|i| (i as f32 - 11.0) / 4.0).collect();
    let heads = tensor::<B>(&values, &[2, 3, 2, 2], device).permute([0, 2, 1, 3]).unwrap();
    let copied = tensor::<B>(&heads.to_vec().unwrap(), &[2, 2, 3, 2], device);
    let keys = heads.swap_dims(2, 3).unwrap();
    let copied_keys = tensor::<B>(&keys.to_vec().unwrap(), &[2, 2, 2, 3], device);
    let expected = copied.matmul(&copied_keys).unwrap().to_vec().unwrap();
    assert_close(&heads.matmul(&keys).unwrap().to_vec().unwrap(), &expected, TOLERANCE);
    let expected = copied.matmul(&weights).unwrap().to_vec().unwrap();
    assert_close(&heads.matmul(&weights).unwrap().to_vec().unwrap(), &expected, TOLERANCE);
}

fn reductions_over_everything_give_shape_one<B: Backend>(device: &B::Device) {
    let x = tensor::<B>(&[1.0, 2.0, 3.0, 4.0, 5.0, 9.0], &[2, 3], device);
    assert_tensor(x.sum(), &[1], &[24.0]);
    assert_tensor(x.mean(), &[1], &[4.0]);
}

fn reductions_along_an_axis_keep_it_with_size_one<B: Backend>(device: &B::Device) {
    let x = tensor::<B>(&[1.0, 2.0, 3.0, 4.0, 5.0, 9.0], &[2, 3], device);
    assert_tensor(x.sum_dim(0), &[1, 3], &[5.0, 7.0, 12.0]);
    assert_tensor(x.sum_dim(1), &[2, 1], &[6.0, 18.0]);
    assert_tensor(x.mean_dim(0), &[1, 3], &[2.5, 3.5, 6.0]);
    assert_tensor(x.mean_dim(1), &[2, 1], &[2.0, 6.0]);
    // A reduction over a middle axis of a 3-D tensor.
    let cube = tensor::<B>(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0], &[2, 2, 2], device);
    assert_tensor(cube.sum_dim(1), &[2, 1, 2], &[4.0, 6.0, 12.0, 14.0]);
    // Over a leading axis (as a bias's gradient is summed), of a row-major tensor, of a transposed view, and after
    // leading axes of size 1.
    assert_tensor(cube.sum_dim(0), &[1, 2, 2], &[6.0, 8.0, 10.0, 12.0]);
    assert_tensor(cube.swap_dims(0, 2).unwrap().sum_dim(0), &[1, 2, 2], &[3.0, 11.0, 7.0, 15.0]);
    assert_tensor(cube.reshape([1, 4, 2]).unwrap().sum_dim(1), &[1, 1, 2], &[16.0, 20.0]);
}

fn log_softmax_normalises_each_lane<B: Backend>(device: &B::Device) {
    let expected_row = [-2.407_606, -1.407_606, -0.407_606];
    let x = tensor::<B>(&[1.0, 2.0, 3.0, 0.5, -1.5, 0.5], &[2, 3], device);
    let by_row = result(x.log_softmax(1));
    assert_eq!(by_row.0, [2, 3]);
    assert_close(&by_row.1[..3], &expected_row, TOLERANCE);
    assert_close(&by_row.1[3..], &[-0.758_623_7, -2.758_623_7, -0.758_623_7], TOLERANCE);
    // Along axis 0: pairs (1, 0.5), (2, -1.5), (3, 0.5).
    let by_column = result(x.log_softmax(0)).1;
    assert_close(
        &by_column,
        &[-0.474_077, -0.029_750_42, -0.078_889_73, -0.974_077, -3.529_750_4, -2.578_889_8],
        TOLERANCE,
    );
    // Subtracting the max first keeps large logits finite.
    let large = tensor::<B>(&[1000.0, 1001.0, 1002.0], &[1, 3], device);
    assert_tensor(large.log_softmax(1), &[1, 3], &expected_row);
    assert_tensor(large.softmax(1), &[1, 3], &[0.090_030_57, 0.244_728_48, 0.665_240_9]);
}

fn argmax_picks_the_first_of_equal_maxima<B: Backend>(device: &B::Device) {
    let x = tensor::<B>(&[1.0, 3.0, 3.0, 2.0, 2.0, 1.0], &[2, 3], device);
    assert_indices(x.argmax(1), &[2, 1], &[1, 0]);
    assert_indices(x.argmax(0), &[1, 3], &[1, 0, 0]);
    let negative = tensor::<B>(&[-5.0, -1.0, -1.0, -7.0], &[4], device);
    assert_indices(negative.argmax(0), &[1], &[1]);
}

fn narrow_and_cat_slice_and_join<B: Backend>(device: &B::Device) {
    let x = tensor::<B>(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3], device);
    let middle = x.narrow(1, 1, 2).unwrap();
    assert_tensor(Ok(middle.clone()), &[2, 2], &[2.0, 3.0, 5.0, 6.0]);
    assert_tensor(x.narrow(0, 1, 1), &[1, 3], &[4.0, 5.0, 6.0]);
    let y = tensor::<B>(&[7.0, 8.0, 9.0], &[1, 3], device);
    assert_tensor(Tensor::cat(&[x.clone(), y], 0), &[3, 3], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0]);
    let first = x.narrow(1, 0, 1).unwrap();
    assert_tensor(Tensor::cat(&[middle, first], 1), &[2, 3], &[2.0, 3.0, 1.0, 5.0, 6.0, 4.0]);
    assert_tensor(Tensor::cat(std::slice::from_ref(&x), 1), &[2, 3], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
}

fn reshape_and_swap_dims_keep_row_major_semantics<B: Backend>(device: &B::Device) {
    let x = tensor::<B>(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3], device);
    assert_tensor(x.reshape([3, 2]), &[3, 2], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    let transposed = x.transpose().unwrap();
    assert_tensor(Ok(transposed.clone()), &[3, 2], &[1.0, 4.0, 2.0, 5.0, 3.0, 6.0]);
    // Reshaping a transposed tensor reads it in its own row-major order.
    assert_tensor(transposed.reshape([6]), &[6], &[1.0, 4.0, 2.0, 5.0, 3.0, 6.0]);
    let cube = tensor::<B>(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0], &[2, 2, 2], device);
    assert_tensor(cube.swap_dims(0, 2), &[2, 2, 2], &[1.0, 5.0, 3.0, 7.0, 2.0, 6.0, 4.0, 8.0]);
    assert_tensor(cube.swap_dims(1, 1), &[2, 2, 2], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]);
}

fn ops_read_strided_views_correctly<B: Backend>(device: &B::Device) {
    let x = tensor::<B>(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0], &[3, 3], device);
    // [[2, 5], [3, 6]]: a narrowed, then transposed view.
    let view = x.narrow(0, 0, 2).unwrap().narrow(1, 1, 2).unwrap().transpose().unwrap();
    assert_tensor(view.matmul(&view), &[2, 2], &[19.0, 40.0, 24.0, 51.0]);
    assert_tensor(view.add(&view), &[2, 2], &[4.0, 10.0, 6.0, 12.0]);
    assert_tensor(view.sum_dim(1), &[2, 1], &[7.0, 9.0]);
    assert_tensor(view.log_softmax(0).unwrap().exp().unwrap().sum_dim(0), &[1, 2], &[1.0, 1.0]);
    assert_indices(view.argmax(0), &[1, 2], &[1, 1]);
    assert_tensor(Tensor::cat(&[view.clone(), view], 0), &[4, 2], &[2.0, 5.0, 3.0, 6.0, 2.0, 5.0, 3.0, 6.0]);
}

fn zero_sized_dims_follow_the_documented_rules<B: Backend>(device: &B::Device) {
    let empty_rows = tensor::<B>(&[], &[2, 0], device);
    assert_tensor(empty_rows.add(&tensor::<B>(&[], &[0], device)), &[2, 0], &[]);
    assert_tensor(empty_rows.mul(&tensor::<B>(&[3.0], &[1], device)), &[2, 0], &[]);
    assert_tensor(empty_rows.exp(), &[2, 0], &[]);
    assert_tensor(empty_rows.matmul(&tensor::<B>(&[], &[0, 3], device)), &[2, 3], &[0.0; 6]);
    assert_tensor(
        tensor::<B>(&[], &[0, 2], device).matmul(&Tensor::ones([2, 3], DType::F32, device).unwrap()),
        &[0, 3],
        &[],
    );
    assert_tensor(empty_rows.sum(), &[1], &[0.0]);
    assert!(empty_rows.mean().unwrap().to_scalar().unwrap().is_nan());
    assert_tensor(empty_rows.sum_dim(1), &[2, 1], &[0.0, 0.0]);
    assert_tensor(empty_rows.sum_dim(0), &[1, 0], &[]);
    let means = empty_rows.mean_dim(1).unwrap().to_vec().unwrap();
    assert!(means.len() == 2 && means.iter().all(|mean| mean.is_nan()), "{means:?}");
    assert_tensor(empty_rows.log_softmax(1), &[2, 0], &[]);
    assert_tensor(empty_rows.log_softmax(0), &[2, 0], &[]);
    assert_indices(tensor::<B>(&[], &[0, 3], device).argmax(1), &[0, 1], &[]);
    assert_tensor(empty_rows.reshape([0, 5]), &[0, 5], &[]);
    assert_tensor(empty_rows.transpose(), &[0, 2], &[]);
    let x = tensor::<B>(&[1.0, 2.0, 3.0, 4.0], &[2, 2], device);
    assert_tensor(x.narrow(1, 2, 0), &[2, 0], &[]);
    assert_tensor(Tensor::cat(&[empty_rows, x], 1), &[2, 2], &[1.0, 2.0, 3.0, 4.0]);
}

/// Both CPU backends run dispatch-core's own `exp`, `erf`, GELU and GELU-backward kernels, its softmax, softmax-
/// backward, layer-norm, layer-norm-backward and attention rows (after the same product), its layer-norm parameter
/// sums and its Adam step on `f32` and `f64`, so they give the same bits: on a strided input, on rows longer than a softmax row's chunk, and in the
/// GELU's left tail, where candle's own `f32` kernel cancels (it gave -0 for the GELU of -6, whose value is -5.9e-9).
#[test]
fn exp_erf_gelu_and_its_backward_give_the_same_bits_on_both_cpu_backends() {
    use dispatch_core::backends::{Candle, CandleDevice, NdArray, NdArrayDevice};
    const OPS: usize = 12;
    fn bits<B: Backend>(values: &[f64], dtype: DType, device: &B::Device) -> Vec<Vec<u64>> {
        // 40 rows of 16 columns, read through a transpose so the ops see a strided layout as well, and 8 rows of
        // 80, longer than the 64 exponentials the softmax rows take at a time.
        let rows = Tensor::<B>::from_f64_vec(values.to_vec(), [40, 16], dtype, device).unwrap();
        let (columns, wide) = (rows.transpose().unwrap(), rows.reshape([8, 80]).unwrap());
        type Op<B> = fn(&Tensor<B>) -> Result<Tensor<B>>;
        let ops: [Op<B>; OPS] = [
            Tensor::exp,
            Tensor::erf,
            Tensor::gelu,
            |x| x.softmax(1),
            |x| x.log_softmax(1),
            |x| x.gelu_backward(x),
            |x| x.softmax(1)?.softmax_backward(x, 1),
            |x| x.layer_norm_backward(&x.narrow(0, 0, 1)?.reshape([x.dims()[1]])?, &x.exp()?, 1e-5),
            |x| {
                let parameter = |row: usize| x.narrow(0, row, 1)?.reshape([x.dims()[1]]);
                x.layer_norm(&parameter(0)?, &parameter(1)?, 1e-5)
            },
            |x| x.layer_norm_parameter_gradients(&x.exp()?, 1e-5),
            |x| {
                let options = AdamStep { weight_decay: 0.01, decoupled: true, step: 2, ..AdamStep::default() };
                x.adam_step(&x.exp()?, &Tensor::stack(&[x.clone(), x.square()?], 0)?, options)
            },
            |x| x.attention_weights(x, 0.25, true),
        ];
        let mut all = Vec::new();
        for input in [&rows, &columns, &wide] {
            for op in ops {
                all.push(op(input).unwrap().to_f64_vec().unwrap().iter().map(|value| value.to_bits()).collect());
            }
        }
        all
    }
    let tail = Tensor::<Candle>::from_vec(vec![-6.0], [1], &CandleDevice::cpu()).unwrap().gelu().unwrap();
    let tail = tail.to_vec().unwrap()[0];
    assert!((tail + 5.9e-9).abs() < 1e-10, "candle's GELU of -6 is {tail}, not -5.9e-9");
    let values: Vec<f64> = (0..640).map(|i| (f64::from(i) - 320.0) / 29.0 + 0.001 * f64::from(i % 7)).collect();
    for dtype in [DType::F32, DType::F64] {
        let (ndarray, candle) =
            (bits::<NdArray>(&values, dtype, &NdArrayDevice), bits::<Candle>(&values, dtype, &CandleDevice::cpu()));
        for (index, (ndarray, candle)) in ndarray.iter().zip(&candle).enumerate() {
            let differing = ndarray.iter().zip(candle).filter(|(a, b)| a != b).count();
            let first = ndarray.iter().zip(candle).position(|(a, b)| a != b);
            let first = first.map(|i| (i, f64::from_bits(ndarray[i]), f64::from_bits(candle[i])));
            let layout = ["row-major", "strided", "wide rows"][index / OPS];
            assert_eq!(
                differing,
                0,
                "{dtype}: op {} of the list, {layout}; first (index, ndarray, candle): {first:?}",
                index % OPS
            );
        }
    }
}

#[test]
fn seeded_random_numbers_are_identical_across_backends() {
    use dispatch_core::backends::{Candle, CandleDevice, NdArray, NdArrayDevice};
    let (ndarray, candle) = (NdArrayDevice, CandleDevice::cpu());
    let uniform =
        Tensor::<NdArray>::random_uniform([3, 4], (-1.0, 1.0), 42, DType::F32, &ndarray).unwrap().to_vec().unwrap();
    let same_seed =
        Tensor::<Candle>::random_uniform([3, 4], (-1.0, 1.0), 42, DType::F32, &candle).unwrap().to_vec().unwrap();
    assert_eq!(uniform, same_seed);
    assert!(uniform.iter().all(|x| (-1.0..1.0).contains(x)), "{uniform:?}");
    let other_seed =
        Tensor::<Candle>::random_uniform([3, 4], (-1.0, 1.0), 43, DType::F32, &candle).unwrap().to_vec().unwrap();
    assert_ne!(uniform, other_seed);

    let normal = Tensor::<NdArray>::random_normal([5], (2.0, 0.5), 7, DType::F32, &ndarray).unwrap();
    let same_seed = Tensor::<Candle>::random_normal([5], (2.0, 0.5), 7, DType::F32, &candle).unwrap();
    assert_eq!(normal.dims(), [5]);
    assert_eq!(normal.to_vec().unwrap(), same_seed.to_vec().unwrap());
}

// Every check above, on every base backend.
dispatch_tests::tests_on_every_base_backend!(
    from_vec_keeps_row_major_order_and_device,
    full_zeros_and_ones_fill_the_shape,
    binary_ops_of_equal_shapes,
    bias_add_broadcasts_a_row_over_every_row,
    broadcasting_stretches_size_one_dims_on_both_sides,
    scalar_ops_apply_to_every_element,
    unary_ops_match_their_math,
    matmul_of_two_matrices,
    batched_matmul_multiplies_each_pair,
    matmul_broadcasts_batch_dimensions,
    reductions_over_everything_give_shape_one,
    reductions_along_an_axis_keep_it_with_size_one,
    log_softmax_normalises_each_lane,
    argmax_picks_the_first_of_equal_maxima,
    element_wise_functions_match_their_math,
    argmin_picks_the_first_smallest_as_an_int,
    narrow_and_cat_slice_and_join,
    reshape_and_swap_dims_keep_row_major_semantics,
    ops_read_strided_views_correctly,
    zero_sized_dims_follow_the_documented_rules,
);
