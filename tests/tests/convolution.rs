//! Convolution and pooling on every backend: against direct loops in f64 over the same seeded inputs (stride,
//! padding, dilation and groups), the transposed convolution as the exact adjoint of the convolution, bad geometry
//! as typed errors, and gradients against finite differences under `Autodiff`.

use dispatch_core::backend::{Conv1dOptions, Conv2dOptions, Window2d};
use dispatch_core::backends::Autodiff;
use dispatch_core::{ArgumentValue, Backend, BaseBackend, DType, Error, RankRule, Result, Tensor};
use dispatch_tests::{assert_close, assert_err, check_gradients};

fn random<B: Backend>(dims: &[usize], seed: u64, device: &B::Device) -> Tensor<B> {
    Tensor::random_uniform(dims, (-1.0, 1.0), seed, DType::F32, device).unwrap()
}

/// `conv2d` by direct loops over every output, tap and channel, in f64.
fn reference_conv2d(
    x: &[f32],
    [n, c, h, w]: [usize; 4],
    k: &[f32],
    [o, cg, kh, kw]: [usize; 4],
    opt: &Conv2dOptions,
) -> Vec<f32> {
    let out = |side: usize, size: usize, kernel: usize| {
        (size + 2 * opt.padding[side] - opt.dilation[side] * (kernel - 1) - 1) / opt.stride[side] + 1
    };
    let (oh, ow) = (out(0, h, kh), out(1, w, kw));
    let og = o / opt.groups;
    let mut result = Vec::new();
    for image in 0..n {
        for oc in 0..o {
            let group = oc / og;
            for y in 0..oh {
                for xo in 0..ow {
                    let mut sum = 0.0f64;
                    for ic in 0..cg {
                        let channel = group * cg + ic;
                        for i in 0..kh {
                            for j in 0..kw {
                                let row = (y * opt.stride[0] + i * opt.dilation[0]) as isize - opt.padding[0] as isize;
                                let col = (xo * opt.stride[1] + j * opt.dilation[1]) as isize - opt.padding[1] as isize;
                                if row >= 0 && col >= 0 && (row as usize) < h && (col as usize) < w {
                                    let input = x[((image * c + channel) * h + row as usize) * w + col as usize];
                                    sum += f64::from(input) * f64::from(k[((oc * cg + ic) * kh + i) * kw + j]);
                                }
                            }
                        }
                    }
                    result.push(sum as f32);
                }
            }
        }
    }
    result
}

fn conv2d_matches_direct_loops<B: Backend>(device: &B::Device) {
    let cases = [
        ([2, 3, 5, 6], [4, 3, 3, 3], Conv2dOptions::default()),
        ([1, 2, 6, 6], [2, 2, 3, 2], Conv2dOptions { stride: [2, 1], padding: [1, 2], ..Default::default() }),
        ([1, 2, 7, 7], [3, 2, 2, 3], Conv2dOptions { dilation: [2, 3], padding: [1, 1], ..Default::default() }),
        // Columns strided, dilated and padded at once: rows of taps that start and end in the padding.
        (
            [1, 2, 5, 9],
            [2, 2, 2, 3],
            Conv2dOptions { stride: [1, 3], padding: [2, 4], dilation: [1, 2], ..Default::default() },
        ),
        ([2, 4, 4, 5], [6, 2, 3, 3], Conv2dOptions { groups: 2, padding: [1, 1], ..Default::default() }),
        // As many channels as rows and columns: candle 0.9.2's own kernel read these wrong (candle#3404).
        ([1, 3, 3, 3], [2, 3, 2, 2], Conv2dOptions::default()),
        ([2, 4, 4, 4], [2, 4, 3, 3], Conv2dOptions { padding: [1, 1], ..Default::default() }),
        (
            [1, 3, 4, 4],
            [3, 1, 3, 3],
            Conv2dOptions { groups: 3, stride: [2, 2], padding: [1, 1], ..Default::default() },
        ),
    ];
    for (seed, (input, weight, options)) in cases.into_iter().enumerate() {
        let (x, k) = (random::<B>(&input, seed as u64, device), random::<B>(&weight, 100 + seed as u64, device));
        let output = x.conv2d(&k, options).unwrap();
        let expected = reference_conv2d(&x.to_vec().unwrap(), input, &k.to_vec().unwrap(), weight, &options);
        assert_close(&output.to_vec().unwrap(), &expected, 1e-5);
        assert_eq!(output.dims()[..2], [input[0], weight[0]]);
    }
}

/// `conv1d` by direct loops over every output, tap and channel, in f64.
fn reference_conv1d(
    x: &[f32],
    [n, c, l]: [usize; 3],
    k: &[f32],
    [o, cg, kl]: [usize; 3],
    opt: &Conv1dOptions,
) -> Vec<f32> {
    let length = (l + 2 * opt.padding - opt.dilation * (kl - 1) - 1) / opt.stride + 1;
    let og = o / opt.groups;
    let mut result = Vec::new();
    for image in 0..n {
        for oc in 0..o {
            for position in 0..length {
                let mut sum = 0.0f64;
                for ic in 0..cg {
                    let channel = oc / og * cg + ic;
                    for tap in 0..kl {
                        let cell = (position * opt.stride + tap * opt.dilation) as isize - opt.padding as isize;
                        if cell >= 0 && (cell as usize) < l {
                            let input = f64::from(x[(image * c + channel) * l + cell as usize]);
                            sum += input * f64::from(k[(oc * cg + ic) * kl + tap]);
                        }
                    }
                }
                result.push(sum as f32);
            }
        }
    }
    result
}

fn conv1d_matches_direct_loops<B: Backend>(device: &B::Device) {
    // Each option alone, then all at once: the output length and values follow each one.
    let cases = [
        (Conv1dOptions::default(), 7),
        (Conv1dOptions { stride: 2, ..Default::default() }, 4),
        (Conv1dOptions { padding: 2, ..Default::default() }, 11),
        (Conv1dOptions { dilation: 3, ..Default::default() }, 3),
        (Conv1dOptions { stride: 3, padding: 1, dilation: 2, ..Default::default() }, 3),
    ];
    for (seed, (options, length)) in cases.into_iter().enumerate() {
        let (line, kernel) = (random::<B>(&[2, 4, 9], seed as u64, device), random::<B>(&[6, 4, 3], 50, device));
        let output = line.conv1d(&kernel, options).unwrap();
        assert_eq!(output.dims(), [2, 6, length], "{options:?}");
        let expected =
            reference_conv1d(&line.to_vec().unwrap(), [2, 4, 9], &kernel.to_vec().unwrap(), [6, 4, 3], &options);
        assert_close(&output.to_vec().unwrap(), &expected, 1e-5);
    }
    let (line, kernel) = (random::<B>(&[1, 4, 8], 9, device), random::<B>(&[6, 2, 2], 10, device));
    let options = Conv1dOptions { groups: 2, stride: 2, ..Default::default() };
    let output = line.conv1d(&kernel, options).unwrap();
    let expected = reference_conv1d(&line.to_vec().unwrap(), [1, 4, 8], &kernel.to_vec().unwrap(), [6, 2, 2], &options);
    assert_eq!(output.dims(), [1, 6, 4]);
    assert_close(&output.to_vec().unwrap(), &expected, 1e-5);
    // An error names conv1d, not the conv2d it runs as.
    let bad = line.conv1d(&kernel, Conv1dOptions { stride: 0, groups: 2, ..Default::default() });
    assert_err!(bad, Error::InvalidValue { op: "conv1d", parameter: "stride", .. });
}

/// `Σ a ⊙ b` in f64.
fn dot(a: &[f32], b: &[f32]) -> f64 {
    a.iter().zip(b).map(|(&x, &y)| f64::from(x) * f64::from(y)).sum()
}

fn conv_transpose2d_is_the_adjoint_of_conv2d<B: Backend>(device: &B::Device) {
    // <conv2d(x, w), y> = <x, conv_transpose2d(y, w)> for every x and y: the transposed convolution is exactly the
    // gradient of the convolution with respect to its input.
    for (input, weight, options) in [
        ([1, 2, 7, 6], [3, 2, 3, 3], Conv2dOptions { stride: [2, 2], padding: [1, 1], ..Default::default() }),
        ([2, 4, 5, 5], [4, 2, 2, 3], Conv2dOptions { groups: 2, dilation: [2, 1], ..Default::default() }),
    ] {
        let (x, k) = (random::<B>(&input, 1, device), random::<B>(&weight, 2, device));
        let forward = x.conv2d(&k, options).unwrap();
        let y = random::<B>(&forward.dims(), 3, device);
        // conv2d's weight, [out, in / groups, kh, kw], read as the transposed convolution's [in, out / groups, ..]:
        // its input is conv2d's output.
        let [_, _, kh, kw] = weight;
        let transposed_weight = k.clone();
        // An output padding that makes the transposed output the input's size again.
        let mut back_options = options;
        for side in 0..2 {
            let kernel = [kh, kw][side];
            let reach = options.dilation[side] * (kernel - 1) + 1;
            let span = (forward.dims()[2 + side] - 1) * options.stride[side] + reach;
            back_options.output_padding[side] = input[2 + side] + 2 * options.padding[side] - span;
        }
        let back = y.conv_transpose2d(&transposed_weight, back_options).unwrap();
        assert_eq!(back.dims(), input);
        let (lhs, rhs) =
            (dot(&forward.to_vec().unwrap(), &y.to_vec().unwrap()), dot(&x.to_vec().unwrap(), &back.to_vec().unwrap()));
        assert!((lhs - rhs).abs() < 1e-4 * lhs.abs().max(1.0), "{lhs} vs {rhs}");
    }
}

fn pooling_matches_direct_loops<B: Backend>(device: &B::Device) {
    let x = Tensor::<B>::from_vec((0..2 * 16).map(|v| ((v * 7) % 11) as f32 - 5.0).collect(), [1, 2, 4, 4], device)
        .unwrap();
    let values = x.to_vec().unwrap();
    let at = |c: usize, r: usize, col: usize| values[(c * 4 + r) * 4 + col];
    let max = x.max_pool2d(Window2d::new([2, 2]).stride([2, 2])).unwrap();
    let expected_max: Vec<f32> = (0..2)
        .flat_map(|c| {
            (0..4).map(move |cell| {
                let (r, col) = (cell / 2 * 2, cell % 2 * 2);
                [at(c, r, col), at(c, r, col + 1), at(c, r + 1, col), at(c, r + 1, col + 1)]
                    .into_iter()
                    .fold(f32::NEG_INFINITY, f32::max)
            })
        })
        .collect();
    assert_eq!((max.dims(), max.to_vec().unwrap()), (vec![1, 2, 2, 2], expected_max));
    // Padding never wins a max: it reads -inf.
    let padded = x.mul_scalar(-1.0).unwrap().abs().unwrap().neg().unwrap();
    let padded_max = padded.max_pool2d(Window2d::new([3, 3]).padding([1, 1])).unwrap().to_vec().unwrap();
    assert!(padded_max.iter().all(|&v| v <= 0.0), "{padded_max:?}");
    let avg = x.avg_pool2d(Window2d::new([2, 2]).stride([2, 2])).unwrap().to_vec().unwrap();
    let adaptive = x.adaptive_avg_pool2d([2, 2]).unwrap().to_vec().unwrap();
    assert_close(&avg, &adaptive, 1e-6);
    assert_close(&avg[..1], &[(at(0, 0, 0) + at(0, 0, 1) + at(0, 1, 0) + at(0, 1, 1)) / 4.0], 1e-6);
    // 4 cells into 3 windows: [0, 2), [1, 3), [2, 4).
    let uneven = x.adaptive_avg_pool2d([3, 1]).unwrap().to_vec().unwrap();
    let row_mean = |c: usize, rows: std::ops::Range<usize>| {
        let count = rows.len() as f32 * 4.0;
        rows.flat_map(|r| (0..4).map(move |col| (r, col))).map(|(r, col)| at(c, r, col)).sum::<f32>() / count
    };
    assert_close(&uneven[..3], &[row_mean(0, 0..2), row_mean(0, 1..3), row_mean(0, 2..4)], 1e-6);
}

fn max_pool_indices_point_at_each_windows_first_maximum<B: Backend>(device: &B::Device) {
    // One 3x4 plane; the 2x2 windows of stride 2 hold a tie (5 at columns 0 and 1) and a NaN.
    let x = Tensor::<B>::from_vec(
        vec![5.0, 5.0, 1.0, 2.0, 0.0, -1.0, 3.0, f32::NAN, 9.0, 4.0, 8.0, 8.5],
        [1, 1, 3, 4],
        device,
    )
    .unwrap();
    let (pooled, indices) = x.max_pool2d_with_indices(Window2d::new([2, 2]).stride([2, 2])).unwrap();
    assert_eq!(indices.dims(), vec![1, 1, 1, 2]);
    assert_eq!(indices.to_vec().unwrap(), [0, 7], "the first of the tie, then the NaN");
    let pooled = pooled.to_vec().unwrap();
    assert!(pooled[0] == 5.0 && pooled[1].is_nan(), "{pooled:?}");
    // Overlapping windows with padding: padding never wins, and each index is in the plane.
    let (_, overlapping) = x.max_pool2d_with_indices(Window2d::new([3, 3]).padding([1, 1])).unwrap();
    assert_eq!(overlapping.dims(), vec![1, 1, 3, 4]);
    assert_eq!(overlapping.to_vec().unwrap(), [0, 0, 7, 7, 8, 8, 7, 7, 8, 8, 7, 7]);
}

/// Under autodiff the gradient of a window goes to its first maximum only; windows that pick one input add up.
fn max_pool_gradients_follow_the_indices<B: BaseBackend>(device: &B::Device) {
    let x = Tensor::<Autodiff<B>>::from_vec(vec![2.0, 2.0, 1.0, 0.0, 3.0, 3.0], [1, 1, 2, 3], device)
        .unwrap()
        .require_grad()
        .unwrap();
    let pooled = x.max_pool2d(Window2d::new([2, 2])).unwrap();
    assert_eq!(pooled.to_vec().unwrap(), [3.0, 3.0]);
    let gradients = pooled.mul_scalar(2.0).unwrap().sum().unwrap().backward().unwrap();
    // Both windows' maximum is the first 3 (index 4): it gets both gradients, the tied 3 nothing.
    assert_eq!(x.grad(&gradients).unwrap().to_vec().unwrap(), [0.0, 0.0, 0.0, 0.0, 4.0, 0.0]);
}

fn bad_geometry_is_an_error<B: Backend>(device: &B::Device) {
    let (x, k) = (random::<B>(&[1, 2, 3, 3], 1, device), random::<B>(&[2, 2, 4, 4], 2, device));
    assert_err!(
        x.conv2d(&k, Conv2dOptions::default()),
        Error::WindowTooLarge { op: "conv2d", span: 4, input: 3, padded: 3 }
    );
    let message = x.conv2d(&k, Conv2dOptions::default()).unwrap_err().to_string();
    assert_eq!(
        message,
        "invalid argument to `conv2d`: a window spanning 4 cells does not fit an input of 3 padded to 3"
    );
    let no_stride = Conv2dOptions { stride: [0, 1], ..Default::default() };
    assert_err!(
        x.conv2d(&random(&[2, 2, 2, 2], 3, device), no_stride),
        Error::InvalidValue { op: "conv2d", parameter: "stride", value: ArgumentValue::Sizes(stride), .. }
            if stride == [0, 1]
    );
    assert_err!(
        x.conv2d(&random(&[3, 1, 2, 2], 3, device), Conv2dOptions { groups: 2, ..Default::default() }),
        Error::InvalidValue { op: "conv2d", parameter: "groups", value: ArgumentValue::Size(2), .. }
    );
    assert_err!(
        x.conv2d(&random(&[2, 3, 2, 2], 3, device), Conv2dOptions::default()),
        Error::ShapeMismatch { op: "conv2d", lhs, rhs } if lhs.dims() == [1, 2, 3, 3] && rhs.dims() == [2, 3, 2, 2]
    );
    assert_err!(
        random::<B>(&[2, 3], 4, device).conv2d(&k, Conv2dOptions::default()),
        Error::UnexpectedRank { op: "conv2d", expected: RankRule::Exactly(4), .. }
    );
    assert_err!(x.max_pool2d(Window2d::new([4, 1])), Error::WindowTooLarge { op: "max_pool2d", span: 4, .. });
    // As PyTorch: an empty plane has nothing to average, an empty output size is an empty output.
    assert_err!(
        random::<B>(&[1, 2, 0, 3], 4, device).adaptive_avg_pool2d([1, 1]),
        Error::UnexpectedShape { op: "adaptive_avg_pool2d", .. }
    );
    assert_eq!(x.adaptive_avg_pool2d([0, 1]).unwrap().dims(), [1, 2, 0, 1]);
    let output_padding = Conv2dOptions { output_padding: [1, 0], ..Default::default() };
    assert_err!(
        x.conv_transpose2d(&random(&[2, 1, 2, 2], 5, device), output_padding),
        Error::InvalidValue { op: "conv_transpose2d", parameter: "output_padding", .. }
    );
}

dispatch_tests::tests_on_every_base_backend!(
    conv2d_matches_direct_loops,
    conv1d_matches_direct_loops,
    conv_transpose2d_is_the_adjoint_of_conv2d,
    pooling_matches_direct_loops,
    max_pool_indices_point_at_each_windows_first_maximum,
    max_pool_gradients_follow_the_indices,
    bad_geometry_is_an_error,
);

/// The gradient of `Σ w ⊙ op(x)` by `x` under `Autodiff`, for `x` random in `[-1, 1)`, against central
/// differences of the same op, in F64.
fn check_gradient<B: BaseBackend>(
    device: &B::Device,
    label: &str,
    dims: &[usize],
    op: impl Fn(&Tensor<Autodiff<B>>) -> Result<Tensor<Autodiff<B>>>,
) {
    let x = random::<B>(dims, 11, device).to_f64_vec().unwrap();
    check_gradients::<B>(device, label, &[(x, dims.to_vec())], |x| op(&x[0])).unwrap();
}

/// A random F64 tensor, a constant of an F64 gradient check.
fn random_f64<B: Backend>(dims: &[usize], seed: u64, device: &B::Device) -> Tensor<B> {
    random::<B>(dims, seed, device).cast(DType::F64).unwrap()
}

fn module_gradients<B: BaseBackend>(device: &B::Device) {
    let weight = random_f64::<Autodiff<B>>(&[4, 1, 2, 3], 21, device);
    let options = Conv2dOptions { groups: 2, padding: [1, 0], stride: [2, 1], ..Default::default() };
    check_gradient::<B>(device, "conv2d input", &[1, 2, 4, 5], |x| x.conv2d(&weight, options));
    let input = random_f64::<Autodiff<B>>(&[1, 2, 4, 5], 22, device);
    check_gradient::<B>(device, "conv2d weight", &[4, 1, 2, 3], |w| input.conv2d(w, options));
    let transposed = random_f64::<Autodiff<B>>(&[2, 3, 3, 2], 23, device);
    let stride = Conv2dOptions { stride: [2, 2], padding: [1, 0], ..Default::default() };
    check_gradient::<B>(device, "conv_transpose2d", &[1, 2, 3, 3], |x| x.conv_transpose2d(&transposed, stride));
    // Offsets 3 apart added to inputs in [-1, 1]: no two values of a window come within the step of a tie.
    let offsets: Vec<f32> = (0..16).map(|v| (v * 5 % 16) as f32 * 3.0).collect();
    let offsets = Tensor::<Autodiff<B>>::from_vec(offsets, [1, 1, 4, 4], device).unwrap().cast(DType::F64).unwrap();
    check_gradient::<B>(device, "max_pool2d", &[1, 1, 4, 4], |x| {
        x.add(&offsets)?.max_pool2d(Window2d::new([2, 2]).stride([2, 2]))
    });
    check_gradient::<B>(device, "avg_pool2d", &[1, 2, 4, 4], |x| x.avg_pool2d(Window2d::new([3, 3]).padding([1, 1])));
    check_gradient::<B>(device, "adaptive_avg_pool2d", &[1, 2, 5, 4], |x| x.adaptive_avg_pool2d([3, 2]));
}

#[test]
fn module_gradients_on_autodiff_ndarray() {
    module_gradients::<dispatch_core::backends::NdArray>(&dispatch_core::backends::NdArrayDevice);
}

#[test]
fn module_gradients_on_autodiff_candle() {
    module_gradients::<dispatch_core::backends::Candle>(&dispatch_core::backends::CandleDevice::cpu());
}
