//! Internals of the ndarray backend: layout ops share storage instead of copying, kernels read strided views, and
//! the device's names.

use ndarray::ArrayD;

use super::{NdArray, NdArrayDevice, NdArrayTensor};
use crate::backend::{Backend, Conv2dOptions, Window2d};
use crate::dtype::DType;
use crate::error::{Error, RankRule, Result};
use crate::shape::Shape;

fn matrix() -> NdArrayTensor {
    NdArray::from_vec((0..6).map(|i| i as f32).collect(), Shape::new([2, 3]), &NdArrayDevice).unwrap()
}

#[test]
fn swap_dims_narrow_and_row_major_reshape_share_storage() {
    let x = matrix();
    let base = x.view().unwrap().as_ptr();
    assert_eq!(NdArray::swap_dims(&x, 0, 1).unwrap().view().unwrap().as_ptr(), base);
    assert_eq!(NdArray::reshape(&x, Shape::new([3, 2])).unwrap().view().unwrap().as_ptr(), base);
    // Row 1 starts three elements into the same buffer.
    assert_eq!(NdArray::narrow(&x, 0, 1, 1).unwrap().view().unwrap().as_ptr(), base.wrapping_add(3));
}

#[test]
fn reshape_of_a_transposed_tensor_copies_into_row_major_order() {
    let transposed = NdArray::swap_dims(&matrix(), 0, 1).unwrap();
    assert!(!transposed.view().unwrap().is_standard_layout());
    let flat = NdArray::reshape(&transposed, Shape::new([6])).unwrap();
    assert!(flat.view().unwrap().is_standard_layout());
    assert_eq!(flat.to_vec().unwrap(), [0.0, 3.0, 1.0, 4.0, 2.0, 5.0]);
}

#[test]
fn flip_is_a_view_that_every_reader_takes() {
    let x = matrix();
    let flipped = NdArray::flip(&x, vec![0, 1, 1]).unwrap();
    // Axis 1 named twice is reversed once; the last element of the buffer comes first.
    assert_eq!(flipped.view().unwrap().as_ptr(), x.view().unwrap().as_ptr().wrapping_add(5));
    assert_eq!(flipped.to_vec().unwrap(), [5.0, 4.0, 3.0, 2.0, 1.0, 0.0]);
    // Negative strides through matrixmultiply: [[5, 4, 3], [2, 1, 0]] times its transpose.
    let product = NdArray::matmul(&flipped, &NdArray::swap_dims(&flipped, 0, 1).unwrap()).unwrap();
    assert_eq!(product.to_vec().unwrap(), [50.0, 14.0, 14.0, 5.0]);
    let flat = NdArray::reshape(&NdArray::flip(&x, vec![1]).unwrap(), Shape::new([6])).unwrap();
    assert_eq!(flat.to_vec().unwrap(), [2.0, 1.0, 0.0, 5.0, 4.0, 3.0]);
}

#[test]
fn from_array_rejects_rank_zero() {
    let scalar = NdArrayTensor::from_array(ArrayD::zeros(ndarray::IxDyn(&[])));
    assert!(matches!(scalar, Err(Error::UnexpectedRank { expected: RankRule::AtLeast(1), .. })), "{scalar:?}");
    let tensor = NdArrayTensor::from_array(ArrayD::zeros(ndarray::IxDyn(&[2, 1]))).unwrap();
    assert_eq!(tensor.shape(), Shape::new([2, 1]));
}

#[test]
fn the_device_is_named_cpu() {
    assert_eq!(NdArrayDevice.to_string(), "cpu");
    assert_eq!("cpu".parse::<NdArrayDevice>().unwrap(), NdArrayDevice);
    let error = "gpu".parse::<NdArrayDevice>().unwrap_err();
    assert_eq!(error.choices(), ["cpu"]);
    assert_eq!(NdArray::name(), "ndarray");
}

/// A tensor of `dims` whose axes are reversed in memory (a permuted view, far from row-major), and its row-major
/// copy.
fn strided_and_copy(dims: &[usize]) -> (NdArrayTensor, NdArrayTensor) {
    let count = dims.iter().product::<usize>();
    let values = (0..count).map(|i| ((i * 7) % 11) as f32 - 5.0).collect();
    let reversed: Vec<usize> = dims.iter().rev().copied().collect();
    let base = NdArray::from_vec(values, Shape::new(reversed), &NdArrayDevice).unwrap();
    let strided = NdArray::permute(&base, (0..dims.len()).rev().collect()).unwrap();
    assert!(!strided.view().unwrap().is_standard_layout());
    let copy = NdArray::from_vec(strided.to_vec().unwrap(), Shape::new(dims), &NdArrayDevice).unwrap();
    (strided, copy)
}

fn same_values(strided: Result<NdArrayTensor>, copy: Result<NdArrayTensor>) {
    assert_eq!(strided.unwrap().to_vec().unwrap(), copy.unwrap().to_vec().unwrap());
}

#[test]
fn kernels_read_a_strided_view_as_its_row_major_copy() {
    let (image, image_copy) = strided_and_copy(&[2, 4, 5, 6]);
    let window = Window2d::new([2, 3]).stride([2, 1]).padding([1, 1]).dilation([1, 2]);
    same_values(NdArray::unfold2d(&image, window, 0.5), NdArray::unfold2d(&image_copy, window, 0.5));
    same_values(NdArray::max_pool2d(&image, window), NdArray::max_pool2d(&image_copy, window));
    let indices = [&image, &image_copy].map(|image| NdArray::max_pool2d_indices(image, window).unwrap());
    assert_eq!(indices[0].to_vec().unwrap(), indices[1].to_vec().unwrap());
    same_values(NdArray::avg_pool2d(&image, window), NdArray::avg_pool2d(&image_copy, window));
    same_values(NdArray::adaptive_avg_pool2d(&image, [3, 4]), NdArray::adaptive_avg_pool2d(&image_copy, [3, 4]));
    let (columns, columns_copy) = strided_and_copy(&[2, 24, 12]);
    same_values(NdArray::fold2d(&columns, 5, 6, window), NdArray::fold2d(&columns_copy, 5, 6, window));
    let options = Conv2dOptions { stride: [2, 1], padding: [1, 0], dilation: [1, 2], groups: 2, ..Default::default() };
    let (filters, filters_copy) = strided_and_copy(&[6, 2, 2, 3]);
    same_values(NdArray::conv2d(&image, &filters, options), NdArray::conv2d(&image_copy, &filters_copy, options));
    let (transposed, transposed_copy) = strided_and_copy(&[4, 3, 2, 3]);
    same_values(
        NdArray::conv_transpose2d(&image, &transposed, options),
        NdArray::conv_transpose2d(&image_copy, &transposed_copy, options),
    );
}

/// `lhs @ rhs` of row-major `[batch, m, k]` and `[batch, k, n]` values, each sum in `f64`.
fn products_by_loops(lhs: &[f32], rhs: &[f32], [batch, m, k, n]: [usize; 4]) -> Vec<f32> {
    let mut out = Vec::with_capacity(batch * m * n);
    for b in 0..batch {
        for i in 0..m {
            for j in 0..n {
                let sum: f64 =
                    (0..k).map(|p| f64::from(lhs[(b * m + i) * k + p]) * f64::from(rhs[(b * k + p) * n + j])).sum();
                out.push(sum as f32);
            }
        }
    }
    out
}

#[test]
fn batched_products_read_flipped_transposed_and_broadcast_operands() {
    // The attention heads' size, and a small one.
    for [batch, m, k, n] in [[64, 64, 16, 64], [3, 2, 5, 4]] {
        let values = |count: usize, step: usize| (0..count).map(|i| ((i * step) % 13) as f32 - 6.0).collect();
        let tensor = |values: Vec<f32>, dims: &[usize]| NdArray::from_vec(values, Shape::new(dims), &NdArrayDevice);
        // Negative strides along the batch and the inner axis.
        let flipped = NdArray::flip(&tensor(values(batch * m * k, 7), &[batch, m, k]).unwrap(), vec![0, 2]).unwrap();
        // Stored `[batch, n, k]`, read transposed.
        let transposed = NdArray::swap_dims(&tensor(values(batch * n * k, 5), &[batch, n, k]).unwrap(), 1, 2).unwrap();
        // One matrix for the whole batch: a zero batch stride.
        let shared = tensor(values(k * n, 3), &[1, k, n]).unwrap();
        let shared_values = shared.to_vec().unwrap().repeat(batch);
        let row_major_lhs = tensor(values(batch * m * k, 11), &[batch, m, k]).unwrap();
        for (lhs, rhs, rhs_values) in [
            (&flipped, &transposed, transposed.to_vec().unwrap()),
            (&flipped, &shared, shared_values.clone()),
            (&row_major_lhs, &transposed, transposed.to_vec().unwrap()),
        ] {
            let product = NdArray::matmul(lhs, rhs).unwrap();
            assert_eq!(product.shape(), Shape::new([batch, m, n]));
            let expected = products_by_loops(&lhs.to_vec().unwrap(), &rhs_values, [batch, m, k, n]);
            for (got, want) in product.to_vec().unwrap().iter().zip(&expected) {
                assert!((got - want).abs() <= 1e-4 * want.abs().max(1.0), "{got} against {want}");
            }
        }
    }
}

#[test]
fn index_and_reduce_ops_read_a_strided_view_as_its_row_major_copy() {
    let (cube, cube_copy) = strided_and_copy(&[3, 4, 5]);
    let picks = NdArray::int_from_vec(vec![3, 0, 3], Shape::new([3]), &NdArrayDevice).unwrap();
    same_values(NdArray::index_select(&cube, 1, &picks), NdArray::index_select(&cube_copy, 1, &picks));
    let (added, added_copy) = strided_and_copy(&[3, 3, 5]);
    same_values(NdArray::select_add(&cube, 1, &picks, &added), NdArray::select_add(&cube_copy, 1, &picks, &added_copy));
    let lanes = NdArray::int_from_vec((0..36).map(|i| (i * 5) % 4).collect(), Shape::new([3, 4, 3]), &NdArrayDevice);
    let lanes = lanes.unwrap();
    same_values(NdArray::gather(&cube, 2, &lanes), NdArray::gather(&cube_copy, 2, &lanes));
    let (source, source_copy) = strided_and_copy(&[3, 4, 3]);
    same_values(
        NdArray::scatter_add(&cube, 2, &lanes, &source),
        NdArray::scatter_add(&cube_copy, 2, &lanes, &source_copy),
    );
    let (table, table_copy) = strided_and_copy(&[6, 4]);
    same_values(NdArray::embedding(&table, &lanes), NdArray::embedding(&table_copy, &lanes));
    for axis in 0..3 {
        same_values(NdArray::max_dim(&cube, axis), NdArray::max_dim(&cube_copy, axis));
        same_values(NdArray::min_dim(&cube, axis), NdArray::min_dim(&cube_copy, axis));
        same_values(NdArray::prod_dim(&cube, axis), NdArray::prod_dim(&cube_copy, axis));
        // A row-major tensor is summed a row at a time, a strided one by ndarray's `sum_axis`.
        same_values(NdArray::sum_dim(&cube, axis), NdArray::sum_dim(&cube_copy, axis));
        same_values(NdArray::mean_dim(&cube, axis), NdArray::mean_dim(&cube_copy, axis));
        let argmin = [&cube, &cube_copy].map(|cube| NdArray::argmin(cube, axis).unwrap().to_vec().unwrap());
        assert_eq!(argmin[0], argmin[1]);
    }
}

#[test]
fn sums_along_an_axis_of_empty_and_size_one_axes() {
    let sums = |dims: &[usize], axis| {
        let len = dims.iter().product::<usize>();
        let tensor = NdArray::from_vec((1..=len).map(|i| i as f32).collect(), Shape::new(dims), &NdArrayDevice);
        let sum = NdArray::sum_dim(&tensor.unwrap(), axis).unwrap();
        (sum.shape().dims().to_vec(), sum.to_vec().unwrap())
    };
    assert_eq!(sums(&[2, 0, 3], 1), (vec![2, 1, 3], vec![0.0; 6]));
    assert_eq!(sums(&[2, 0, 3], 0), (vec![1, 0, 3], vec![]));
    assert_eq!(sums(&[2, 3, 1], 1), (vec![2, 1, 1], vec![6.0, 15.0]));
    assert_eq!(sums(&[2, 3, 1], 2), (vec![2, 3, 1], vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]));
    assert_eq!(sums(&[2, 2, 2], 0), (vec![1, 2, 2], vec![6.0, 8.0, 10.0, 12.0]));
}

/// Large element-wise outputs are written into the storage of tensors dropped before them: the same values as the
/// scalar function gives, with nothing left of the buffer's previous contents.
#[test]
fn large_element_wise_outputs_reuse_dropped_storage_and_give_the_scalar_values() {
    let len = 1 << 14;
    let values: Vec<f32> = (0..len).map(|i| (i % 251) as f32 / 50.0 - 2.5).collect();
    let x = NdArray::from_vec(values.clone(), Shape::new([len / 64, 64]), &NdArrayDevice).unwrap();
    let first = NdArray::exp(&x).unwrap();
    let storage = first.view().unwrap().as_ptr();
    drop(first);
    let second = NdArray::add(&x, &x).unwrap();
    assert_eq!(second.view().unwrap().as_ptr(), storage, "the dropped output's storage was not reused");
    let doubled: Vec<u32> = values.iter().map(|v| (v + v).to_bits()).collect();
    assert_eq!(NdArray::to_vec(&second).unwrap().iter().map(|v| v.to_bits()).collect::<Vec<_>>(), doubled);
    // A tensor that still shares its storage keeps it.
    let shared = NdArray::tanh(&x).unwrap();
    let view = NdArray::narrow(&shared, 0, 1, 2).unwrap();
    let shared_storage = shared.view().unwrap().as_ptr();
    drop(shared);
    let third = NdArray::neg(&x).unwrap();
    assert_ne!(third.view().unwrap().as_ptr(), shared_storage);
    let tanh: Vec<u32> = values[64..192].iter().map(|v| v.tanh().to_bits()).collect();
    assert_eq!(NdArray::to_vec(&view).unwrap().iter().map(|v| v.to_bits()).collect::<Vec<_>>(), tanh);
}

#[test]
fn fused_gelu_backward_gives_the_composed_default_bit_for_bit_in_every_dtype() {
    use crate::backend::defaults;

    // Both signs, zero, the tails where the density underflows and erf saturates, NaN and the infinities; a large
    // tensor (a kept buffer) and a broadcast gradient (the strided walk).
    let mut values: Vec<f64> = (0..6000).map(|i| (f64::from(i) - 3000.0) * 0.004_321).collect();
    values.extend([0.0, -0.0, 40.0, -40.0, f64::NAN, f64::INFINITY, f64::NEG_INFINITY, 1e-30]);
    let len = values.len();
    let gradient: Vec<f64> = (0..len).map(|i| ((i % 17) as f64 - 8.0) * 0.37).collect();
    for dtype in [DType::F32, DType::F64, DType::F16, DType::BF16] {
        let tensor = |values: &[f64], dims: &[usize]| {
            NdArray::from_f64_vec(values.to_vec(), Shape::new(dims), dtype, &NdArrayDevice).unwrap()
        };
        let x = tensor(&values, &[len]);
        let cases =
            [(tensor(&gradient, &[len]), "a gradient of one shape"), (tensor(&[0.75], &[1]), "a broadcast gradient")];
        for (g, what) in cases {
            let fused = NdArray::to_f64_vec(&NdArray::gelu_backward(&x, &g).unwrap()).unwrap();
            let composed = NdArray::to_f64_vec(&defaults::gelu_backward::<NdArray>(&x, &g).unwrap()).unwrap();
            for ((f, c), input) in fused.iter().zip(&composed).zip(&values) {
                assert!(
                    f.to_bits() == c.to_bits() || f.is_nan() && c.is_nan(),
                    "{dtype:?}, {what}, x = {input}: {f} against {c}"
                );
            }
        }
    }
}

#[test]
fn fused_attention_weights_give_the_composed_default_bit_for_bit_in_every_dtype() {
    use crate::backend::defaults;

    let grid = |len: usize, step: f64| (0..len).map(|i| ((i * 7 % len) as f64 - len as f64 / 2.0) * step).collect();
    let queries: Vec<f64> = grid(3 * 5 * 4, 0.21);
    let mut keys: Vec<f64> = grid(3 * 7 * 4, 0.17);
    // A NaN score in one row of the second block: the composition's softmax makes that whole row NaN, masked
    // entries included.
    keys[7 * 4 + 1] = f64::NAN;
    for dtype in [DType::F32, DType::F64, DType::F16, DType::BF16] {
        let tensor = |values: &Vec<f64>, dims: &[usize]| {
            NdArray::from_f64_vec(values.clone(), Shape::new(dims), dtype, &NdArrayDevice).unwrap()
        };
        let query = tensor(&queries, &[3, 5, 4]);
        // More keys than queries, fewer, and keys read through a transposed view.
        let more = tensor(&keys, &[3, 7, 4]);
        let fewer = NdArray::narrow(&more, 1, 0, 3).unwrap();
        let transposed = NdArray::swap_dims(&tensor(&keys, &[3, 4, 7]), 1, 2).unwrap();
        for (key, what) in [(&more, "more keys"), (&fewer, "fewer keys"), (&transposed, "transposed keys")] {
            for causal in [false, true] {
                let fused = NdArray::to_f64_vec(&NdArray::attention_weights(&query, key, 0.37, causal).unwrap());
                let composed = defaults::attention_weights::<NdArray>(&query, key, 0.37, causal).unwrap();
                let (fused, composed) = (fused.unwrap(), NdArray::to_f64_vec(&composed).unwrap());
                assert_eq!(fused.len(), composed.len());
                for (index, (f, c)) in fused.iter().zip(&composed).enumerate() {
                    assert!(
                        f.to_bits() == c.to_bits() || f.is_nan() && c.is_nan(),
                        "{dtype:?}, {what}, causal {causal}, entry {index}: {f} against {c}"
                    );
                }
            }
        }
    }
    let query = varied(&[2, 3, 4], 0.0);
    let rank_one = NdArray::attention_weights(&query, &varied(&[4], 1.0), 1.0, false);
    assert!(matches!(rank_one, Err(Error::UnexpectedRank { expected: RankRule::AtLeast(2), .. })), "{rank_one:?}");
    let other_batch = NdArray::attention_weights(&query, &varied(&[3, 3, 4], 1.0), 1.0, false);
    assert!(matches!(other_batch, Err(Error::ShapeMismatch { .. })), "{other_batch:?}");
    let other_width = NdArray::attention_weights(&query, &varied(&[2, 3, 5], 1.0), 1.0, false);
    assert!(matches!(other_width, Err(Error::ShapeMismatch { .. })), "{other_width:?}");
    let wide = NdArray::cast(&varied(&[2, 3, 4], 1.0), DType::F64).unwrap();
    let other_dtype = NdArray::attention_weights(&query, &wide, 1.0, false);
    assert!(matches!(other_dtype, Err(Error::DTypeMismatch { .. })), "{other_dtype:?}");
}

#[test]
fn fused_adam_step_gives_the_composed_default_bit_for_bit_in_every_dtype() {
    use crate::backend::{AdamStep, defaults};

    // Parameters and gradients of both signs, zero and NaN; a second moment of zero (the first step) and a large
    // one; Adam with an L2 penalty and AdamW with decay, early and late steps.
    let len = 5000;
    let wave =
        |scale: f64, phase: f64| -> Vec<f64> { (0..len).map(|i| ((i as f64) * 0.618 + phase).sin() * scale).collect() };
    let (mut parameter, mut gradient) = (wave(2.0, 0.0), wave(0.3, 1.0));
    parameter[7] = 0.0;
    gradient[11] = f64::NAN;
    let first = wave(0.1, 2.0);
    let mut second: Vec<f64> = wave(0.05, 3.0).iter().map(|v| v * v).collect();
    second[13] = 0.0;
    second[17] = 1e6;
    let moments = [first, second].concat();
    let adam_w = AdamStep { lr: 3e-3, betas: (0.9, 0.999), eps: 1e-8, weight_decay: 0.01, decoupled: true, step: 1 };
    let adam = AdamStep { weight_decay: 0.1, decoupled: false, step: 250, ..adam_w };
    for dtype in [DType::F32, DType::F64, DType::F16, DType::BF16] {
        let tensor = |values: &[f64], dims: &[usize]| {
            NdArray::from_f64_vec(values.to_vec(), Shape::new(dims), dtype, &NdArrayDevice).unwrap()
        };
        let (p, g, m) =
            (tensor(&parameter, &[50, 100]), tensor(&gradient, &[50, 100]), tensor(&moments, &[2, 50, 100]));
        for options in [adam_w, adam, AdamStep { weight_decay: 0.0, ..adam }] {
            let fused = NdArray::adam_step(&p, &g, &m, options).unwrap();
            assert_eq!(NdArray::shape(&fused), Shape::new([3, 50, 100]));
            let fused = NdArray::to_f64_vec(&fused).unwrap();
            let composed = NdArray::to_f64_vec(&defaults::adam_step::<NdArray>(&p, &g, &m, options).unwrap()).unwrap();
            for (at, (f, c)) in fused.iter().zip(&composed).enumerate() {
                assert!(
                    f.to_bits() == c.to_bits() || f.is_nan() && c.is_nan(),
                    "{dtype:?}, {options:?}, {at}: {f} against {c}"
                );
            }
        }
    }
    // A permuted parameter and gradient are read in row-major order, as the composition reads them.
    let (p, g) = (varied(&[4, 6], 0.0), varied(&[4, 6], 1.0));
    let (p_t, g_t) = (NdArray::swap_dims(&p, 0, 1).unwrap(), NdArray::swap_dims(&g, 0, 1).unwrap());
    let m = NdArray::abs(&varied(&[2, 6, 4], 2.0)).unwrap();
    let fused = NdArray::to_vec(&NdArray::adam_step(&p_t, &g_t, &m, adam_w).unwrap()).unwrap();
    let composed = NdArray::to_vec(&defaults::adam_step::<NdArray>(&p_t, &g_t, &m, adam_w).unwrap()).unwrap();
    assert_eq!(fused, composed);
    // Bad options and operands: the errors of the default.
    let m = NdArray::abs(&varied(&[2, 4, 6], 2.0)).unwrap();
    let refused =
        |parameter, gradient, moments, options| NdArray::adam_step(parameter, gradient, moments, options).unwrap_err();
    assert!(matches!(
        refused(&p, &g, &m, AdamStep { step: 0, ..adam_w }),
        Error::InvalidValue { parameter: "step", .. }
    ));
    assert!(matches!(
        refused(&p, &g, &m, AdamStep { betas: (0.9, 1.0), ..adam_w }),
        Error::InvalidValue { parameter: "betas.1", .. }
    ));
    assert!(matches!(
        refused(&p, &g, &m, AdamStep { eps: f64::NAN, ..adam_w }),
        Error::InvalidValue { parameter: "eps", .. }
    ));
    assert!(matches!(refused(&p, &p_t, &m, adam_w), Error::ShapeMismatch { .. }));
    assert!(matches!(refused(&p, &g, &g, adam_w), Error::UnexpectedShape { op: "adam_step", .. }));
}

#[test]
fn cat_copies_row_major_stretches_of_strided_empty_and_plain_tensors() {
    let tensor = |dims: &[usize], start: f32| {
        let len = Shape::new(dims).num_elements();
        NdArray::from_vec((0..len).map(|i| start + i as f32).collect(), Shape::new(dims), &NdArrayDevice).unwrap()
    };
    // [2, 2, 3] by swapping the axes of a [3, 2, 2]: a strided operand.
    let strided = NdArray::permute(&tensor(&[3, 2, 2], 100.0), vec![2, 1, 0]).unwrap();
    let parts = [tensor(&[2, 1, 3], 0.0), tensor(&[2, 0, 3], 50.0), strided, tensor(&[2, 3, 3], 200.0)];
    let joined = NdArray::cat(&parts, 1).unwrap();
    let arrays: Vec<ArrayD<f32>> = parts.iter().map(|part| part.view().unwrap().to_owned()).collect();
    let views: Vec<_> = arrays.iter().map(|array| array.view()).collect();
    assert_eq!(joined.view().unwrap().to_owned(), ndarray::concatenate(ndarray::Axis(1), &views).unwrap());
    assert_eq!(NdArray::shape(&joined), Shape::new([2, 6, 3]));
    // Along the first axis, and of tensors that are all empty.
    let rows = NdArray::cat(&[tensor(&[1, 3], 0.0), tensor(&[2, 3], 3.0)], 0).unwrap();
    assert_eq!(rows.to_vec().unwrap(), (0..9).map(|i| i as f32).collect::<Vec<_>>());
    let empty = NdArray::cat(&[tensor(&[4, 0], 0.0), tensor(&[4, 0], 0.0)], 0).unwrap();
    assert_eq!(NdArray::shape(&empty), Shape::new([8, 0]));
}

/// A tensor of `shape` with varied values of both signs (no two neighbours alike), from `seed`.
fn varied(shape: &[usize], seed: f32) -> NdArrayTensor {
    let len = shape.iter().product::<usize>();
    let values = (0..len).map(|i| (i as f32 * 0.618 + seed).sin() * 3.0).collect();
    NdArray::from_vec(values, Shape::new(shape), &NdArrayDevice).unwrap()
}

/// Every op that splits its work across threads, on tensors large enough to be split, each kind of operand layout
/// included (row-major, broadcast, permuted): the values of each, as bits.
fn split_ops_values() -> Vec<Vec<u32>> {
    let bits = |tensor: Result<NdArrayTensor>| tensor.unwrap().to_vec().unwrap().iter().map(|x| x.to_bits()).collect();
    let (x, y) = (varied(&[2, 64, 2048], 0.0), varied(&[2, 64, 2048], 1.0));
    let (row, permuted) = (varied(&[2048], 2.0), NdArray::swap_dims(&varied(&[2, 2048, 64], 3.0), 1, 2).unwrap());
    let mask = NdArray::gt_scalar(&varied(&[64, 2048], 4.0), 0.5).unwrap();
    let (gamma, beta) = (varied(&[2048], 5.0), varied(&[2048], 6.0));
    let (queries, keys) = (varied(&[64, 64, 16], 7.0), varied(&[64, 16, 64], 8.0));
    let image = varied(&[8, 16, 32, 32], 9.0);
    let window = Window2d::new([3, 3]).stride([2, 2]).padding([1, 1]);
    let indices = NdArray::max_pool2d_indices(&image, window).unwrap().to_vec().unwrap();
    vec![
        bits(NdArray::add(&x, &y)),
        bits(NdArray::mul(&x, &row)),
        bits(NdArray::sub(&permuted, &x)),
        bits(NdArray::exp(&x)),
        bits(NdArray::gelu(&permuted)),
        bits(NdArray::gelu_backward(&x, &y)),
        bits(NdArray::softmax(&x, 2)),
        bits(NdArray::log_softmax(&x, 1)),
        bits(NdArray::layer_norm(&x, &gamma, &beta, 1e-5)),
        bits(NdArray::sum_dim(&x, 0)),
        bits(NdArray::softmax_backward(&x, &y, 2)),
        bits(NdArray::layer_norm_backward(&x, &gamma, &y, 1e-5)),
        bits(NdArray::mask_fill(&x, &mask, -1.5)),
        bits(NdArray::mask_where(&mask, &x, &permuted)),
        bits(NdArray::matmul(&queries, &keys)),
        bits(NdArray::attention_weights(&queries, &NdArray::swap_dims(&keys, 1, 2).unwrap(), 0.25, true)),
        bits(NdArray::max_pool2d(&image, window)),
        indices.iter().map(|&index| index as u32).collect(),
    ]
}

#[test]
fn ops_split_across_threads_give_the_values_of_one_thread() {
    let on = |threads| rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap().install(split_ops_values);
    let (one, three) = (on(1), on(3));
    for (op, (one, three)) in one.iter().zip(&three).enumerate() {
        assert!(one.len() >= 1 << 15, "op {op} is too small to be split");
        assert!(one == three, "op {op} differs when split across threads");
    }
}

/// The parameter gradients of layer norm add rows in fixed groups, so the groups' split across threads (their output
/// is too small for `split_ops_values`, their input is not) gives the bits of one thread.
#[test]
fn layer_norm_parameter_gradients_split_across_threads_give_the_values_of_one_thread() {
    let on = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        let (x, gradient) = (varied(&[16, 64, 64], 0.0), varied(&[16, 64, 64], 1.0));
        let sums = pool.install(|| NdArray::layer_norm_parameter_gradients(&x, &gradient, 1e-5)).unwrap();
        sums.to_vec().unwrap().iter().map(|value| value.to_bits()).collect::<Vec<_>>()
    };
    assert_eq!(on(1), on(3));
}

/// The slice loops (row-major operands), the row-by-row loops (operands broadcast along leading axes) and the
/// strided walk (a permuted operand) give every element-wise op the same bits.
#[test]
fn element_wise_ops_give_the_same_bits_in_every_layout() {
    let bits = |tensor: Result<NdArrayTensor>| -> Vec<u32> {
        tensor.unwrap().to_vec().unwrap().iter().map(|x| x.to_bits()).collect()
    };
    let dims = [3, 40, 64];
    let row_major = |tensor: &NdArrayTensor| {
        let expanded = NdArray::expand(tensor, Shape::new(dims)).unwrap();
        NdArray::from_vec(expanded.to_vec().unwrap(), Shape::new(dims), &NdArrayDevice).unwrap()
    };
    let permuted = NdArray::swap_dims(&varied(&[3, 64, 40], 0.0), 1, 2).unwrap();
    let x = row_major(&permuted);
    for unary in [NdArray::exp, NdArray::erf, NdArray::gelu, NdArray::neg] {
        assert_eq!(bits(unary(&permuted)), bits(unary(&x)));
    }
    let (bias, statistic, corner) = (varied(&[64], 1.0), varied(&[3, 40, 1], 2.0), varied(&[1, 1, 1], 3.0));
    let y = varied(&dims, 4.0);
    for binary in [NdArray::add, NdArray::sub, NdArray::mul, NdArray::div, NdArray::gelu_backward] {
        for other in [&bias, &statistic, &corner, &y] {
            let expected = bits(binary(&permuted, &row_major(other)));
            assert_eq!(bits(binary(&x, other)), expected);
            assert_eq!(bits(binary(other, &x)), bits(binary(&row_major(other), &permuted)));
        }
    }
    // Masks repeated along leading axes (filled block by block on a row-major tensor) and along the last (walked).
    for mask_dims in [&[40, 64][..], &[1, 40, 64], &[64], &[3, 40, 64], &[3, 1, 64], &[40, 1]] {
        let mask = NdArray::gt_scalar(&varied(mask_dims, 5.0), 0.5).unwrap();
        let expected = bits(NdArray::mask_fill(&permuted, &mask, -1.5));
        assert_eq!(bits(NdArray::mask_fill(&x, &mask, -1.5)), expected, "mask {mask_dims:?}");
        let filled = expected.iter().filter(|&&value| value == (-1.5f32).to_bits()).count();
        assert!(filled > 0 && filled < expected.len(), "mask {mask_dims:?}: {filled} filled");
    }
}

/// The fused backward kernels against the composed defaults they replace, within rounding: their sums add in another
/// order, and both compute the half dtypes in `f32`, rounding once.
#[test]
fn fused_backward_ops_agree_with_their_composed_defaults() {
    use crate::backend::defaults;
    for (dtype, tolerance) in [(DType::F32, 1e-5), (DType::F64, 1e-13), (DType::F16, 2e-3), (DType::BF16, 1.6e-2)] {
        let of = |dims: &[usize], seed: f32| NdArray::cast(&varied(dims, seed), dtype).unwrap();
        let (x, gradient, gamma) = (of(&[3, 5, 70], 0.0), of(&[3, 5, 70], 1.0), of(&[70], 2.0));
        let agree = |fused: Result<NdArrayTensor>, composed: Result<NdArrayTensor>, what: &str| {
            let (fused, composed) = (fused.unwrap().to_f64_vec().unwrap(), composed.unwrap().to_f64_vec().unwrap());
            let scale = composed.iter().fold(1.0f64, |max, value| max.max(value.abs()));
            for (index, (a, b)) in fused.iter().zip(&composed).enumerate() {
                assert!((a - b).abs() <= tolerance * scale, "{dtype} {what}, element {index}: {a} vs {b}");
            }
        };
        for axis in 0..3 {
            let composed = defaults::softmax_backward::<NdArray>(&x, &gradient, axis);
            agree(NdArray::softmax_backward(&x, &gradient, axis), composed, &format!("softmax_backward along {axis}"));
        }
        let composed = defaults::layer_norm_backward::<NdArray>(&x, &gamma, &gradient, 1e-5);
        agree(NdArray::layer_norm_backward(&x, &gamma, &gradient, 1e-5), composed, "layer_norm_backward");
        let composed = defaults::layer_norm_parameter_gradients::<NdArray>(&x, &gradient, 1e-5);
        let fused = NdArray::layer_norm_parameter_gradients(&x, &gradient, 1e-5);
        agree(fused, composed, "layer_norm_parameter_gradients");
    }
    let (x, short) = (varied(&[3, 5], 0.0), varied(&[3, 4], 1.0));
    assert!(matches!(NdArray::softmax_backward(&x, &short, 1), Err(Error::ShapeMismatch { .. })));
    assert!(matches!(
        NdArray::layer_norm_backward(&x, &varied(&[5], 2.0), &short, 1e-5),
        Err(Error::ShapeMismatch { .. })
    ));
    let wide = NdArray::cast(&x, DType::F64).unwrap();
    assert!(matches!(NdArray::softmax_backward(&x, &wide, 1), Err(Error::DTypeMismatch { .. })));
    assert!(matches!(NdArray::layer_norm_parameter_gradients(&x, &short, 1e-5), Err(Error::ShapeMismatch { .. })));
}

type GivenUp = fn(NdArrayTensor, &NdArrayTensor) -> Result<NdArrayTensor>;
type Lent = fn(&NdArrayTensor, &NdArrayTensor) -> Result<NdArrayTensor>;

/// Each arithmetic op that takes its left operand by value, beside the op that borrows it.
const GIVEN_UP: [(&str, GivenUp, Lent); 4] = [
    ("add", NdArray::add_into, NdArray::add),
    ("sub", NdArray::sub_into, NdArray::sub),
    ("mul", NdArray::mul_into, NdArray::mul),
    ("div", NdArray::div_into, NdArray::div),
];

/// `varied`'s values in `dtype`, in a tensor nothing else holds.
fn owned(shape: &[usize], seed: f32, dtype: DType) -> NdArrayTensor {
    NdArray::cast(&varied(shape, seed), dtype).unwrap()
}

/// Where the tensor's elements start in memory.
fn address(tensor: &NdArrayTensor) -> usize {
    let f32_start = tensor.view().map(|view| view.as_ptr() as usize);
    f32_start.or_else(|| tensor.view_f64().map(|view| view.as_ptr() as usize)).unwrap()
}

fn f64_bits(tensor: &NdArrayTensor) -> Vec<u64> {
    tensor.to_f64_vec().unwrap().iter().map(|value| value.to_bits()).collect()
}

#[test]
fn arithmetic_given_a_tensor_nothing_else_holds_writes_over_it_the_values_of_new_memory() {
    // A right operand of the left's shape and broadcast ones; the large shape is split across threads.
    let cases: [(&[usize], &[usize]); 5] =
        [(&[4, 37], &[4, 37]), (&[4, 37], &[37]), (&[4, 37], &[4, 1]), (&[2, 3, 5], &[1]), (&[300, 400], &[400])];
    for dtype in DType::ALL {
        for (name, given_up, lent) in GIVEN_UP {
            for (lhs_dims, rhs_dims) in cases {
                let rhs = owned(rhs_dims, 0.25, dtype);
                let expected = lent(&owned(lhs_dims, 1.5, dtype), &rhs).unwrap();
                let lhs = owned(lhs_dims, 1.5, dtype);
                let start = address(&lhs);
                let output = given_up(lhs, &rhs).unwrap();
                let case = format!("{name} {dtype} {lhs_dims:?} {rhs_dims:?}");
                assert_eq!(address(&output), start, "{case}: written over the given tensor");
                assert_eq!((output.shape(), output.dtype()), (expected.shape(), dtype), "{case}");
                assert_eq!(f64_bits(&output), f64_bits(&expected), "{case}");
            }
            // A permuted tensor is written over in its own layout.
            let transposed = NdArray::swap_dims(&owned(&[37, 4], 1.5, dtype), 0, 1).unwrap();
            let rhs = owned(&[4, 37], 0.25, dtype);
            let expected = lent(&transposed, &rhs).unwrap();
            let start = address(&transposed);
            let output = given_up(transposed, &rhs).unwrap();
            assert_eq!(address(&output), start, "{name} {dtype} transposed");
            assert_eq!(f64_bits(&output), f64_bits(&expected), "{name} {dtype} transposed");
        }
    }
}

#[test]
fn arithmetic_given_a_shared_or_outgrown_tensor_writes_new_memory_and_leaves_it_as_it_was() {
    for dtype in DType::ALL {
        for (name, given_up, lent) in GIVEN_UP {
            let (lhs, rhs) = (owned(&[4, 37], 1.5, dtype), owned(&[37], 0.25, dtype));
            let (kept, before) = (lhs.clone(), f64_bits(&lhs));
            let output = given_up(lhs, &rhs).unwrap();
            assert_ne!(address(&output), address(&kept), "{name} {dtype}: the clone shares the memory");
            assert_eq!(f64_bits(&kept), before, "{name} {dtype}: the clone is as it was");
            assert_eq!(f64_bits(&output), f64_bits(&lent(&kept, &rhs).unwrap()), "{name} {dtype}");

            // The output is larger than the given tensor, which broadcasts into it.
            let (row, matrix) = (owned(&[1, 37], 1.5, dtype), owned(&[4, 37], 0.25, dtype));
            let expected = lent(&row, &matrix).unwrap();
            let output = given_up(row, &matrix).unwrap();
            assert_eq!(output.shape(), Shape::new([4, 37]), "{name} {dtype}");
            assert_eq!(f64_bits(&output), f64_bits(&expected), "{name} {dtype}");

            // The same operand on both sides is shared.
            let square = owned(&[4, 37], 1.5, dtype);
            let expected = lent(&square, &square).unwrap();
            let output = given_up(square.clone(), &square).unwrap();
            assert_eq!(f64_bits(&output), f64_bits(&expected), "{name} {dtype} with itself");
        }
    }
}

#[test]
fn arithmetic_given_bad_operands_fails_as_the_borrowing_op_does() {
    for (name, given_up, lent) in GIVEN_UP {
        let (lhs, narrower) = (owned(&[4, 37], 1.5, DType::F32), owned(&[4, 36], 0.25, DType::F32));
        let other_dtype = owned(&[4, 37], 0.25, DType::BF16);
        for rhs in [narrower, other_dtype] {
            let expected = format!("{:?}", lent(&lhs, &rhs).unwrap_err());
            assert_eq!(
                format!("{:?}", given_up(owned(&[4, 37], 1.5, DType::F32), &rhs).unwrap_err()),
                expected,
                "{name}"
            );
        }
    }
}

#[test]
fn scalar_ops_given_a_tensor_nothing_else_holds_write_over_it_the_values_of_new_memory() {
    type GivenUpScalar = fn(NdArrayTensor, f64) -> Result<NdArrayTensor>;
    type LentScalar = fn(&NdArrayTensor, f64) -> Result<NdArrayTensor>;
    let ops: [(&str, GivenUpScalar, LentScalar); 2] = [
        ("add_scalar", NdArray::add_scalar_into, NdArray::add_scalar),
        ("mul_scalar", NdArray::mul_scalar_into, NdArray::mul_scalar),
    ];
    for dtype in DType::ALL {
        for (name, given_up, lent) in ops {
            for dims in [&[4, 37][..], &[300, 400]] {
                // 1/3 is rounded to the dtype first, then every output to the dtype.
                let expected = lent(&owned(dims, 1.5, dtype), 1.0 / 3.0).unwrap();
                let tensor = owned(dims, 1.5, dtype);
                let start = address(&tensor);
                let output = given_up(tensor, 1.0 / 3.0).unwrap();
                assert_eq!(address(&output), start, "{name} {dtype} {dims:?}");
                assert_eq!(f64_bits(&output), f64_bits(&expected), "{name} {dtype} {dims:?}");
            }
            let tensor = owned(&[4, 37], 1.5, dtype);
            let (kept, before) = (tensor.clone(), f64_bits(&tensor));
            let output = given_up(tensor, 1.0 / 3.0).unwrap();
            assert_ne!(address(&output), address(&kept), "{name} {dtype}");
            assert_eq!(f64_bits(&kept), before, "{name} {dtype}");
        }
    }
}
