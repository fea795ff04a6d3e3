//! Every window op at every size: zero-size dims and absurd options (0, 1, 2, `usize::MAX`, 2^63 and ordinary
//! values) on every backend, candle, ndarray and `Autodiff` over each. Each call is either an `Err` of the kind the
//! arguments call for, or an `Ok` of PyTorch's output shape (computed here in `u128`, see `window_cases::reference`)
//! holding the values of a direct loop; under `Autodiff` its backward runs too, and gives each operand a gradient
//! of its own shape. Never a panic, in debug or in release.

mod window_cases;

use dispatch_core::backend::{Conv1dOptions, Conv2dOptions, Window2d};
use dispatch_core::backends::{Autodiff, Candle, CandleDevice, NdArray, NdArrayDevice};
use dispatch_core::{Backend, BaseBackend, Error, Tensor};
use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use window_cases::reference::{self, Expected, volume};
use window_cases::{AdaptiveAvgPool, Conv1d, Conv2d, ConvTranspose2d, Fold, Output, Pool, Pooling, Unfold, WindowCall};

/// Outputs up to this many elements are compared value by value, and differentiated under `Autodiff`.
const COMPARED: u128 = 4096;

/// Distinct values in [-1, 1) for a tensor of `dims`, the same on every backend.
fn values(dims: &[usize]) -> Vec<f32> {
    (0..dims.iter().product::<usize>()).map(|i| (i * 37 % 101) as f32 / 50.5 - 1.0).collect()
}

/// `call` on every backend, each answer checked against the rules.
fn check<C: WindowCall>(call: &C) -> std::result::Result<(), TestCaseError> {
    let expected = call.expected();
    check_on(call, &expected, &operands::<NdArray>(call, &NdArrayDevice))?;
    check_on(call, &expected, &operands::<Candle>(call, &CandleDevice::cpu()))?;
    check_tracked::<NdArray, C>(&NdArrayDevice, call, &expected)?;
    check_tracked::<Candle, C>(&CandleDevice::cpu(), call, &expected)
}

/// The operands of `call` on `device`, holding [`values`].
fn operands<B: Backend>(call: &impl WindowCall, device: &B::Device) -> Vec<Tensor<B>> {
    let dims = call.operands();
    dims.iter().map(|dims| Tensor::from_vec(values(dims), dims.as_slice(), device).unwrap()).collect()
}

/// `call` on `operands`, its answer checked against `expected`; the output if it was compared.
fn check_on<B: Backend, C: WindowCall>(
    call: &C,
    expected: &Expected,
    operands: &[Tensor<B>],
) -> std::result::Result<Option<Tensor<B>>, TestCaseError> {
    let context = format!("{call:?} on {}, expecting {expected:?}", B::name());
    match (expected, call.call(operands)) {
        (Expected::Refused(why), Err(error)) if refusal_op(&error).is_some() => {
            prop_assert_eq!(refusal_op(&error), Some(call.refused_by(why)), "{}: {}", context, error);
        }
        (
            Expected::Output { big: true, .. },
            Err(Error::SizeOverflow { .. } | Error::OutOfMemory { .. } | Error::ShapeTooLarge { .. }),
        ) => {}
        (Expected::Output { dims, .. }, Ok(output)) => {
            let (actual, answer) = match &output {
                Output::Float(tensor) => (tensor.dims(), tensor.to_f64_vec().unwrap()),
                Output::Indices(tensor) => {
                    (tensor.dims(), tensor.to_vec().unwrap().iter().map(|&i| i as f64).collect())
                }
            };
            let actual_wide: Vec<u128> = actual.iter().map(|&dim| dim as u128).collect();
            prop_assert_eq!(&actual_wide, dims, "{}", context);
            if volume(dims) <= COMPARED {
                let mut output_dims = [1; 4];
                output_dims[..actual.len()].copy_from_slice(&actual);
                let data: Vec<Vec<f32>> = call.operands().iter().map(|dims| values(dims)).collect();
                let reference = call.reference(&data, output_dims);
                prop_assert_eq!(answer.len(), reference.len(), "{}", context);
                for (index, (&value, &reference)) in answer.iter().zip(&reference).enumerate() {
                    let close = value == reference || (value - reference).abs() <= 1e-5 * reference.abs().max(1.0);
                    prop_assert!(close, "{}: element {} is {}, not {}", context, index, value, reference);
                }
                if let Output::Float(output) = output {
                    return Ok(Some(output));
                }
            }
        }
        (_, other) => prop_assert!(false, "{}: got {:?}", context, other.map(|_| ())),
    }
    Ok(None)
}

/// The op that refused its arguments, if `error` is a refusal: the arguments break a rule of the op (a kind the
/// window ops give), not a limit of size, which a refusal never is.
fn refusal_op(error: &Error) -> Option<&'static str> {
    match *error {
        Error::InvalidValue { op, .. }
        | Error::WindowTooLarge { op, .. }
        | Error::UnexpectedRank { op, .. }
        | Error::UnexpectedShape { op, .. }
        | Error::ShapeMismatch { op, .. } => Some(op),
        _ => None,
    }
}

/// [`check_on`] under `Autodiff<B>` with operands that require gradients; then the backward of `Σ output` gives
/// every operand a gradient of its own dims. One known exception, where a `max_pool2d` window covers only padding:
/// it has no maximum for the gradient to go to, and the backward says so.
fn check_tracked<B: BaseBackend, C: WindowCall>(
    device: &B::Device,
    call: &C,
    expected: &Expected,
) -> std::result::Result<(), TestCaseError> {
    let operands: Vec<Tensor<Autodiff<B>>> =
        operands::<Autodiff<B>>(call, device).iter().map(|operand| operand.require_grad().unwrap()).collect();
    let Some(output) = check_on(call, expected, &operands)? else { return Ok(()) };
    let context = format!("the backward of {call:?} on {}", Autodiff::<B>::name());
    let backward = output.sum().and_then(|sum| sum.backward());
    if call.backward_refused() {
        let padding_only = matches!(&backward, Err(Error::InvalidValue { parameter: "padding", .. }));
        prop_assert!(padding_only, "{}: {:?}", context, backward);
        return Ok(());
    }
    let gradients = backward.map_err(|error| TestCaseError::fail(format!("{context}: {error}")))?;
    for operand in &operands {
        let gradient = operand.grad(&gradients);
        prop_assert_eq!(gradient.map(|gradient| gradient.dims()), Some(operand.dims()), "{}", context);
    }
    Ok(())
}

// ---- cases ------------------------------------------------------------------------------------------------------

/// An option: mostly ordinary (0 to 3), else `usize::MAX`, 2^63, or 2^62 + 1 (twice that still fits).
fn option() -> impl Strategy<Value = usize> {
    prop_oneof![12 => 0usize..=3, 2 => Just(usize::MAX), 2 => Just(1usize << 63), 1 => Just((1usize << 62) + 1)]
}

fn option_pair() -> impl Strategy<Value = [usize; 2]> {
    [option(), option()]
}

/// A tensor dimension: small, sometimes 0.
fn dim() -> impl Strategy<Value = usize> {
    prop_oneof![1 => Just(0usize), 6 => 1usize..=4]
}

fn dims4() -> impl Strategy<Value = [usize; 4]> {
    [dim(), dim(), dim(), dim()]
}

/// A kernel dimension of a weight: 1 to 3, sometimes 0.
fn kernel() -> impl Strategy<Value = [usize; 2]> {
    let side = prop_oneof![1 => Just(0usize), 6 => 1usize..=3];
    [side.clone(), side]
}

/// Mostly windows that fit a small input, else any option on each side.
fn window() -> impl Strategy<Value = Window2d> {
    let ordinary = ([1usize..=3, 1..=3], [1usize..=2, 1..=2], [0usize..=1, 0..=1], [1usize..=2, 1..=2]);
    prop_oneof![
        4 => ordinary.prop_map(|(kernel, stride, padding, dilation)| Window2d { kernel, stride, padding, dilation }),
        1 => (option_pair(), option_pair(), option_pair(), option_pair())
            .prop_map(|(kernel, stride, padding, dilation)| Window2d { kernel, stride, padding, dilation }),
    ]
}

/// The groups of a convolution: mostly 1 to 3.
fn groups() -> impl Strategy<Value = usize> {
    prop_oneof![1 => Just(0usize), 12 => 1usize..=3, 1 => Just(usize::MAX), 1 => Just(1usize << 63)]
}

fn conv2d_options() -> impl Strategy<Value = Conv2dOptions> {
    let extra = prop_oneof![6 => Just(0usize), 2 => Just(1usize), 1 => option()];
    (window(), groups(), [extra.clone(), extra]).prop_map(|(window, groups, output_padding)| Conv2dOptions {
        stride: window.stride,
        padding: window.padding,
        dilation: window.dilation,
        groups,
        output_padding,
    })
}

/// Mostly channels that the groups split (`(in, in per group)` from the groups and `per_group`), else any.
fn channels() -> impl Strategy<Value = (bool, usize, [usize; 2])> {
    (prop::bool::weighted(0.85), 0usize..=2, [0usize..=4, 0..=3])
}

fn conv2d_case() -> impl Strategy<Value = Conv2d> {
    (dims4(), kernel(), conv2d_options(), channels(), prop_oneof![1 => Just(0usize), 6 => 1usize..=2]).prop_map(
        |([n, _, h, w], [kh, kw], options, (fitting, per_group, [any_c, any_cg]), out_per_group)| {
            let g = options.groups;
            let (c, cg, o) = if fitting && (1..=3).contains(&g) {
                (per_group * g, per_group, out_per_group * g)
            } else {
                (any_c, any_cg, out_per_group * 2)
            };
            Conv2d { input: [n, c, h, w], weight: [o, cg, kh, kw], options }
        },
    )
}

fn conv1d_case() -> impl Strategy<Value = Conv1d> {
    conv2d_case().prop_map(|case| {
        let ([n, c, _, length], [o, cg, _, kernel], options) = (case.input, case.weight, case.options);
        let options = Conv1dOptions {
            stride: options.stride[1],
            padding: options.padding[1],
            dilation: options.dilation[1],
            groups: options.groups,
        };
        Conv1d { input: [n, c, length], weight: [o, cg, kernel], options }
    })
}

fn conv_transpose2d_case() -> impl Strategy<Value = ConvTranspose2d> {
    let out_per_group = prop_oneof![1 => Just(0usize), 6 => 1usize..=2];
    (dims4(), kernel(), conv2d_options(), channels(), out_per_group).prop_map(
        |([n, _, h, w], [kh, kw], options, (fitting, per_group, [any_c, any_cw]), out_per_group)| {
            // The weight is [in, out / groups, kh, kw].
            let g = options.groups;
            let (c, weight) = if fitting && (1..=3).contains(&g) {
                (per_group.max(1) * g, [per_group.max(1) * g, out_per_group, kh, kw])
            } else {
                (any_c, [any_cw, out_per_group, kh, kw])
            };
            ConvTranspose2d { input: [n, c, h, w], weight, options }
        },
    )
}

fn fold_case() -> impl Strategy<Value = Fold> {
    (window(), [dim(), dim()], 0usize..=2, 1usize..=2, any::<bool>(), [0usize..=6, 0..=9]).prop_map(
        |(window, output, n, c, fitting, any)| {
            // With `fitting`, the columns of `unfold2d` of an `output`-sized image, where that is small.
            let sides = [0, 1].map(|side| reference::Side::of(&window, output, side));
            let taps = window.kernel[0] as u128 * window.kernel[1] as u128;
            let fitted = match (sides[0].positions(), sides[1].positions()) {
                (Some(down), Some(across)) if fitting && reference::volume(&[c as u128, taps, down, across]) <= 256 => {
                    Some([n, c * taps as usize, (down * across) as usize])
                }
                _ => None,
            };
            Fold { input: fitted.unwrap_or([n, any[0], any[1]]), output, window }
        },
    )
}

fn pool_case() -> impl Strategy<Value = Pool> {
    let pooling = prop_oneof![Just(Pooling::Max), Just(Pooling::MaxIndices), Just(Pooling::Average)];
    (pooling, dims4(), window()).prop_map(|(pooling, input, window)| Pool { pooling, input, window })
}

fn adaptive_case() -> impl Strategy<Value = AdaptiveAvgPool> {
    let size = prop_oneof![1 => Just(0usize), 4 => 1usize..=5, 1 => Just(usize::MAX), 1 => Just(1usize << 63)];
    (dims4(), [size.clone(), size]).prop_map(|(input, output)| AdaptiveAvgPool { input, output })
}

proptest! {
    #![proptest_config(dispatch_tests::proptest_config(256, "proptest-regressions/window_sizes.txt"))]

    #[test]
    fn unfold2d_fails_or_matches_pytorch(input in dims4(), window in window()) {
        check(&Unfold { input, window })?;
    }

    #[test]
    fn fold2d_fails_or_matches_pytorch(case in fold_case()) {
        check(&case)?;
    }

    #[test]
    fn conv2d_fails_or_matches_pytorch(case in conv2d_case()) {
        check(&case)?;
    }

    #[test]
    fn conv1d_fails_or_matches_pytorch(case in conv1d_case()) {
        check(&case)?;
    }

    #[test]
    fn conv_transpose2d_fails_or_matches_pytorch(case in conv_transpose2d_case()) {
        check(&case)?;
    }

    #[test]
    fn pooling_fails_or_matches_pytorch(case in pool_case()) {
        check(&case)?;
    }

    #[test]
    fn adaptive_avg_pool2d_fails_or_matches_pytorch(case in adaptive_case()) {
        check(&case)?;
    }
}

/// The cases of the issue, each once: they panicked, or (in release) returned a wrong shape.
#[test]
fn the_reported_cases_are_errors_of_the_right_kind() {
    let padded = Window2d::new([1, 1]).padding([1, 1]);
    for pooling in [Pooling::Max, Pooling::MaxIndices] {
        let case = Pool { pooling, input: [1, 1, 0, 3], window: padded };
        assert!(matches!(case.expected(), Expected::Refused(_)));
        check(&case).unwrap();
    }
    let dilated = Conv2dOptions { dilation: [usize::MAX, usize::MAX], ..Default::default() };
    let case = Conv2d { input: [1, 1, 2, 2], weight: [1, 1, 2, 2], options: dilated };
    assert!(matches!(case.expected(), Expected::Refused(_)));
    check(&case).unwrap();
    // Padding past the address space: a valid window, whose padded input no `usize` can index.
    let padded = Conv2dOptions { padding: [1 << 63, 0], ..Default::default() };
    let case = Conv2d { input: [1, 1, 2, 2], weight: [1, 1, 1, 1], options: padded };
    assert!(matches!(case.expected(), Expected::Output { big: true, .. }));
    check(&case).unwrap();
    let case = AdaptiveAvgPool { input: [1, 1, 2, 2], output: [usize::MAX, 1] };
    check(&case).unwrap();
    // A padded input past `isize::MAX`, which candle's own kernel counts in.
    let far = Conv2dOptions { padding: [(1 << 62) + 1; 2], stride: [1 << 63; 2], ..Default::default() };
    let case = Conv2d { input: [1, 1, 2, 2], weight: [1, 1, 2, 2], options: far };
    assert_eq!(case.expected(), Expected::Output { dims: vec![1, 1, 2, 2], big: true });
    check(&case).unwrap();
}
