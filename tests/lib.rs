//! Shared helpers of the integration tests under `tests/tests/`.

use proptest::test_runner::{Config, FileFailurePersistence};

/// Proptest settings of this crate. Failing cases are kept in `tests/proptest-regressions/<file>` (tests run with
/// this crate's folder as working directory) and re-run first next time; proptest's default would put them at the
/// repository's top level, since this crate's `lib.rs` is not under `src/`.
pub fn proptest_config(cases: u32, regressions_file: &'static str) -> Config {
    Config {
        cases,
        failure_persistence: Some(Box::new(FileFailurePersistence::Direct(regressions_file))),
        ..Config::default()
    }
}

/// A float tensor of `data` (row-major) on `device`; panics on bad input, as a test should.
pub fn floats<B: dispatch_core::Backend>(data: &[f32], dims: &[usize], device: &B::Device) -> dispatch_core::Tensor<B> {
    dispatch_core::Tensor::from_vec(data.to_vec(), dims, device).unwrap()
}

/// An int tensor of `data` (row-major) on `device`.
pub fn ints<B: dispatch_core::Backend>(
    data: &[i64],
    dims: &[usize],
    device: &B::Device,
) -> dispatch_core::IntTensor<B> {
    dispatch_core::IntTensor::from_vec(data.to_vec(), dims, device).unwrap()
}

/// A bool tensor of `data` (row-major) on `device`.
pub fn bools<B: dispatch_core::Backend>(
    data: &[bool],
    dims: &[usize],
    device: &B::Device,
) -> dispatch_core::BoolTensor<B> {
    dispatch_core::BoolTensor::from_vec(data.to_vec(), dims, device).unwrap()
}

/// Asserts that `result` is an `InvalidArgument` of `op` whose reason contains `words`.
#[track_caller]
pub fn assert_invalid_argument<T: std::fmt::Debug>(result: dispatch_core::Result<T>, op: &str, words: &str) {
    match result {
        Err(dispatch_core::Error::InvalidArgument { op: reported, reason }) => {
            assert_eq!(reported, op);
            assert!(reason.contains(words), "{reason}");
        }
        other => panic!("expected InvalidArgument from {op}, got {other:?}"),
    }
}

/// An argument of kind `$kind` of the op list (`Float`, `Int`, `Shape`, `usize`, ...) for a test that calls every
/// op through the list's callback: the tensors and the device from `$operands` (a struct with `float`, `floats`,
/// `int`, `bool` and `device` fields), fixed small values for the rest. Shapes and axes fit a `[1, 1, 1, 1]` float
/// tensor; not every op accepts every such value, which a test that only asks whether an op ran does not mind.
#[macro_export]
macro_rules! sample_operand {
    ($operands:ident, Float) => {
        &$operands.float
    };
    ($operands:ident, [Float]) => {
        &$operands.floats
    };
    ($operands:ident, Int) => {
        &$operands.int
    };
    ($operands:ident, Bool) => {
        &$operands.bool
    };
    ($operands:ident, Device) => {
        &$operands.device
    };
    ($operands:ident, Shape) => {
        ::dispatch_core::Shape::new([1, 1, 1, 1])
    };
    ($operands:ident, (::std::vec::Vec<f32>)) => {
        vec![1.0f32]
    };
    ($operands:ident, (::std::vec::Vec<i64>)) => {
        vec![0i64]
    };
    ($operands:ident, (::std::vec::Vec<usize>)) => {
        vec![0usize, 1, 2, 3]
    };
    ($operands:ident, (::std::vec::Vec<bool>)) => {
        vec![true]
    };
    ($operands:ident, (::std::sync::Arc $($host_op:tt)*)) => {
        ::std::sync::Arc::new($crate::IdentityHostOp)
    };
    ($operands:ident, ([usize; 2])) => {
        [1usize, 1]
    };
    // Options (`Window2d`, `Conv2dOptions`): their defaults.
    ($operands:ident, ($($options:tt)*)) => {
        ::core::default::Default::default()
    };
    ($operands:ident, f32) => {
        0.5f32
    };
    ($operands:ident, i64) => {
        1i64
    };
    ($operands:ident, u64) => {
        1u64
    };
    // Axes and sizes: 0 fits a `[1, 1, 1, 1]` tensor everywhere one is asked for.
    ($operands:ident, usize) => {
        0usize
    };
}

/// A host op that only passes values through.
pub struct IdentityHostOp;

impl dispatch_core::HostOp for IdentityHostOp {
    fn name(&self) -> &'static str {
        "identity"
    }

    fn forward(&self, input: dispatch_core::HostTensor) -> dispatch_core::Result<dispatch_core::HostTensor> {
        Ok(input)
    }

    fn backward(&self, grad_output: dispatch_core::HostTensor) -> dispatch_core::Result<dispatch_core::HostTensor> {
        Ok(grad_output)
    }
}

/// Asserts that two sequences of floats agree to a relative tolerance (absolute near zero), naming the first
/// element that does not.
#[track_caller]
pub fn assert_close(actual: &[f32], expected: &[f32], relative: f32) {
    assert_eq!(actual.len(), expected.len(), "lengths differ: {actual:?} vs {expected:?}");
    for (index, (&a, &e)) in actual.iter().zip(expected).enumerate() {
        assert!(close(a, e, relative), "element {index}: {a} vs {e} (relative tolerance {relative})");
    }
}

/// `a` and `e` agree to `relative` times the larger magnitude, or to `relative` absolutely when both are small.
pub fn close(a: f32, e: f32, relative: f32) -> bool {
    if a.is_nan() || e.is_nan() {
        return a.is_nan() && e.is_nan();
    }
    let scale = a.abs().max(e.abs()).max(1.0);
    (a - e).abs() <= relative * scale
}

/// One `#[test]` per check and base backend: each check is a function generic over the backend that takes
/// `&B::Device` (and returns `()` or a `Result`); it runs as `ndarray::<check>` and `candle::<check>`.
#[macro_export]
macro_rules! tests_on_every_base_backend {
    ($($check:ident),* $(,)?) => {
        $crate::tests_on_backend!(ndarray, ::dispatch_core::backends::NdArray,
            ::dispatch_core::backends::NdArrayDevice, $($check),*);
        $crate::tests_on_backend!(candle, ::dispatch_core::backends::Candle,
            ::dispatch_core::backends::CandleDevice::cpu(), $($check),*);
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! tests_on_backend {
    ($module:ident, $backend:ty, $device:expr, $($check:ident),*) => {
        mod $module {
            $(
                #[test]
                fn $check() -> impl ::std::process::Termination {
                    super::$check::<$backend>(&$device)
                }
            )*
        }
    };
}

/// The README's ```rust blocks, compiled and run as this crate's doctests (`cargo test --doc -p dispatch-tests`),
/// so what it tells a user to write keeps compiling. This crate is not published, so no package carries the README
/// through it.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

/// The device enum of the README's first block, which its later blocks use (one hidden `use` line each) rather
/// than repeat it in lines a reader of the README would see.
pub mod readme {
    use dispatch_core::backends::{Candle, CandleDevice, NdArray, NdArrayDevice};
    use dispatch_core::{AutodiffDevice, Dispatch, DistributedDevice};

    #[derive(Clone, Debug, PartialEq, Dispatch)]
    pub enum Device {
        #[backend(Candle)]
        Candle(CandleDevice),
        #[backend(NdArray)]
        NdArray(NdArrayDevice),
        #[autodiff]
        Autodiff(AutodiffDevice<Self>),
        #[distributed]
        Cluster(DistributedDevice<Self>),
    }

    /// The generated items the README's table names, so renaming one fails here before the README misleads.
    pub type Generated = (DeviceBackend, DeviceTensor, DeviceLocal, DeviceBase);
}
