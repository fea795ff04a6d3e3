//! Shared helpers of the integration tests under `tests/tests/`.

use dispatch_core::backends::Autodiff;
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

/// Asserts that `$result` is an `Err` whose error matches `$pattern` (a pattern of `dispatch_core::Error`), e.g.
/// `assert_err!(x.sum_dim(2), Error::AxisOutOfRange { op: "sum_dim", axis: 2, .. })`.
#[macro_export]
macro_rules! assert_err {
    ($result:expr, $pattern:pat $(if $guard:expr)? $(,)?) => {
        match $result {
            ::std::result::Result::Err($pattern) $(if $guard)? => {}
            other => panic!("expected Err({}), got {other:?}", ::core::stringify!($pattern)),
        }
    };
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
    ($operands:ident, Owned) => {
        ::core::clone::Clone::clone(&$operands.float)
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
    ($operands:ident, (::std::vec::Vec<f64>)) => {
        vec![1.0f64]
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
    // Options (`Window2d`, `Conv2dOptions`) and the dtype: their defaults.
    ($operands:ident, ($($options:tt)*)) => {
        ::core::default::Default::default()
    };
    ($operands:ident, f32) => {
        0.5f32
    };
    ($operands:ident, f64) => {
        0.5f64
    };
    ($operands:ident, i64) => {
        1i64
    };
    ($operands:ident, u64) => {
        1u64
    };
    // Flags (`causal`): the case that does more.
    ($operands:ident, bool) => {
        true
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

/// A host op that passes values through, and whose backward rule notes whether the op it watches (that of a node
/// the reverse pass reaches earlier) had already been freed when the rule ran.
pub struct WitnessHostOp {
    watched: std::sync::Weak<IdentityHostOp>,
    saw_it_freed: std::sync::Mutex<Option<bool>>,
}

impl WitnessHostOp {
    /// A witness of `watched`, which has not yet seen a backward pass.
    pub fn of(watched: &std::sync::Arc<IdentityHostOp>) -> Self {
        Self { watched: std::sync::Arc::downgrade(watched), saw_it_freed: std::sync::Mutex::new(None) }
    }

    /// What the last backward pass through this op saw; `None` before any.
    pub fn saw_it_freed(&self) -> Option<bool> {
        self.saw_it_freed.lock().ok().and_then(|saw| *saw)
    }
}

impl dispatch_core::HostOp for WitnessHostOp {
    fn name(&self) -> &'static str {
        "witness"
    }

    fn forward(&self, input: dispatch_core::HostTensor) -> dispatch_core::Result<dispatch_core::HostTensor> {
        Ok(input)
    }

    fn backward(&self, grad_output: dispatch_core::HostTensor) -> dispatch_core::Result<dispatch_core::HostTensor> {
        if let Ok(mut saw) = self.saw_it_freed.lock() {
            *saw = Some(self.watched.upgrade().is_none());
        }
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

/// [`assert_close`] for `f64` values.
pub fn assert_close_f64(actual: &[f64], expected: &[f64], relative: f64) {
    assert_eq!(actual.len(), expected.len(), "lengths differ: {actual:?} vs {expected:?}");
    for (index, (&a, &e)) in actual.iter().zip(expected).enumerate() {
        assert!(close_f64(a, e, relative), "element {index}: {a} vs {e} (relative tolerance {relative})");
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
/// `&B::Device` (and returns `()` or a `Result`); it runs as `ndarray::<check>` and `candle::<check>`, each on every
/// device of its backend that [`every_variant::every_device`] holds (the CPU, then those [`EXTRA_DEVICES`] names).
#[macro_export]
macro_rules! tests_on_every_base_backend {
    ($($check:ident),* $(,)?) => {
        $crate::tests_on_backend!(ndarray, ::dispatch_core::backends::NdArray,
            [::dispatch_core::backends::NdArrayDevice], $($check),*);
        $crate::tests_on_backend!(candle, ::dispatch_core::backends::Candle,
            $crate::every_variant::candle_devices(), $($check),*);
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! tests_on_backend {
    ($module:ident, $backend:ty, $devices:expr, $($check:ident),*) => {
        mod $module {
            $(
                #[test]
                fn $check() -> ::std::result::Result<(), ::std::string::String> {
                    for device in $devices {
                        // Captured, and shown beside a panic's message: which device failed.
                        println!("{} on {device}", stringify!($check));
                        $crate::CheckOutcome::into_result(super::$check::<$backend>(&device))
                            .map_err(|error| format!("{} on {device}: {error}", stringify!($check)))?;
                    }
                    Ok(())
                }
            )*
        }
    };
}

/// What a check of [`tests_on_every_base_backend!`] returns: nothing (it asserts), or a `Result`.
pub trait CheckOutcome {
    /// The check's failure, as text.
    fn into_result(self) -> Result<(), String>;
}

impl CheckOutcome for () {
    fn into_result(self) -> Result<(), String> {
        Ok(())
    }
}

impl<E: std::fmt::Debug> CheckOutcome for Result<(), E> {
    fn into_result(self) -> Result<(), String> {
        self.map_err(|error| format!("{error:?}"))
    }
}

/// The environment variable that adds devices to those the cross-device tests loop over: names that
/// [`every_variant::Device`] parses, comma-separated, e.g. `candle:cuda:0,autodiff:candle:cuda:0` on a machine with a
/// GPU, in a build with `--features dispatch-core/cuda`. The CPU devices are always tested, first; a name that does
/// not parse or open fails the tests that read it, naming the variable.
pub const EXTRA_DEVICES: &str = "DISPATCH_TEST_DEVICES";

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

/// How precisely a gradient check computes: the dtype of the tensors, the step of the central differences (for
/// inputs of magnitude about 1), and the relative tolerance (absolute below magnitude 1) between backward and
/// differences.
#[derive(Clone, Copy, Debug)]
pub struct Precision {
    pub dtype: dispatch_core::DType,
    pub step: f64,
    pub tolerance: f64,
}

impl Precision {
    /// Every op's check. The truncation error of central differences is `h² f''' / 6`: about 1e-8 for the
    /// steepest function checked (exp on [-2, 2]) at `h = 1e-4`. Rounding adds about `1e-16 · |objective| / h`,
    /// under 1e-10, and the backward itself is exact to a few ulps. 1e-6 leaves a margin of two orders for the
    /// truncation, and a wrong rule (a missing factor, a sign, a transposed gradient) is off by far more.
    pub const F64: Precision = Precision { dtype: dispatch_core::DType::F64, step: 1e-4, tolerance: 1e-6 };

    /// For a check in `F32` tensors. Each perturbed output carries a rounding error of about 1e-7 of its
    /// magnitude; the few outputs an input reaches contribute about `k · 1e-6 / (2h)` for `k <= 5`, and truncation
    /// about 2e-4: 2e-3 covers the sum.
    pub const F32: Precision = Precision { dtype: dispatch_core::DType::F32, step: 1e-2, tolerance: 2e-3 };
}

/// [`check_gradients_in`] at [`Precision::F64`].
pub fn check_gradients<B: dispatch_core::BaseBackend>(
    device: &B::Device,
    label: &str,
    inputs: &[(Vec<f64>, Vec<usize>)],
    op: impl Fn(&[dispatch_core::Tensor<Autodiff<B>>]) -> dispatch_core::Result<dispatch_core::Tensor<Autodiff<B>>>,
) -> dispatch_core::Result<()> {
    check_gradients_in::<B>(Precision::F64, device, label, inputs, op)
}

/// Checks the gradient `Autodiff` gives `Σ w ⊙ op(inputs)` (`w` fixed random weights, so every output element
/// counts, each differently: a permuted gradient cannot pass) by every input against central differences of the
/// op's own forward, with tensors of the precision's dtype. Each input is its row-major values and its dims.
/// Constants the op uses must have that dtype too: a mixed dtype is an error.
pub fn check_gradients_in<B: dispatch_core::BaseBackend>(
    precision: Precision,
    device: &B::Device,
    label: &str,
    inputs: &[(Vec<f64>, Vec<usize>)],
    op: impl Fn(&[dispatch_core::Tensor<Autodiff<B>>]) -> dispatch_core::Result<dispatch_core::Tensor<Autodiff<B>>>,
) -> dispatch_core::Result<()> {
    use dispatch_core::Tensor;
    let dtype = precision.dtype;
    let tensors = |data: &[Vec<f64>]| -> dispatch_core::Result<Vec<Tensor<Autodiff<B>>>> {
        data.iter()
            .zip(inputs)
            .map(|(values, (_, dims))| Tensor::from_f64_vec(values.clone(), dims.as_slice(), dtype, device))
            .collect()
    };
    // The values the tensors hold, so that each perturbation is measured from them.
    let data: Vec<Vec<f64>> =
        inputs.iter().map(|(values, _)| values.iter().map(|&value| dtype.round(value)).collect()).collect();
    let tracked: Vec<Tensor<Autodiff<B>>> =
        tensors(&data)?.iter().map(Tensor::require_grad).collect::<Result<_, _>>()?;
    let output = op(&tracked)?;
    assert_eq!(output.dtype(), dtype, "`{label}` turned {dtype} inputs into {}", output.dtype());
    let weights = Tensor::<Autodiff<B>>::random_uniform(output.shape(), (-1.0, 1.0), 99, dtype, device)?;
    let gradients = output.mul(&weights)?.sum()?.backward()?;

    let weights = weights.to_f64_vec()?;
    let objective = |data: &[Vec<f64>]| -> dispatch_core::Result<f64> {
        Ok(op(&tensors(data)?)?.to_f64_vec()?.iter().zip(&weights).map(|(y, w)| y * w).sum())
    };
    for (k, tensor) in tracked.iter().enumerate() {
        let gradient = tensor.grad(&gradients).expect("every input of the op gets a gradient");
        assert_eq!(gradient.dtype(), dtype, "`{label}`: the gradient of input {k} is not {dtype}");
        let analytic = gradient.to_f64_vec()?;
        let context = format!("`{label}` in {dtype}, gradient of input {k} (dims {:?})", inputs[k].1);
        assert_eq!(analytic.len(), data[k].len(), "{context}: {analytic:?}");
        for (j, &backward) in analytic.iter().enumerate() {
            let (mut plus, mut minus) = (data.clone(), data.clone());
            plus[k][j] = dtype.round(data[k][j] + precision.step);
            minus[k][j] = dtype.round(data[k][j] - precision.step);
            // The step actually taken, after rounding the perturbed inputs to the dtype.
            let numeric = (objective(&plus)? - objective(&minus)?) / (plus[k][j] - minus[k][j]);
            assert!(
                close_f64(backward, numeric, precision.tolerance),
                "{context}, element {j}: backward {backward} vs finite differences {numeric}"
            );
        }
    }
    Ok(())
}

/// An F64 tensor of `data` (row-major) on `device`.
pub fn f64s<B: dispatch_core::Backend>(
    data: &[f64],
    dims: &[usize],
    device: &B::Device,
) -> dispatch_core::Result<dispatch_core::Tensor<B>> {
    dispatch_core::Tensor::from_f64_vec(data.to_vec(), dims, dispatch_core::DType::F64, device)
}

/// Whether `a` is within `relative` of `e` (absolutely, below magnitude 1); NaN only matches NaN.
pub fn close_f64(a: f64, e: f64, relative: f64) -> bool {
    if a.is_nan() || e.is_nan() {
        return a.is_nan() && e.is_nan();
    }
    (a - e).abs() <= relative * a.abs().max(e.abs()).max(1.0)
}

/// How closely the backends agree on one program of ops (`cross_backend.rs`, `dtypes.rs`), relative (absolute below magnitude 1), by dtype: about four
/// times the largest deviation measured over 1,000 random programs per run (in brackets, outputs and gradients
/// alike).
///
/// - `F32`: 1e-5, what the issue asks (3.6e-7).
/// - `F64`: 1e-12 (1.1e-14).
/// - `F16`: 1e-2 (1.6e-3) and `BF16`: 6e-2 (1.6e-2). ndarray computes both in f32 and rounds each op's result;
///   candle rounds inside some kernels too (its sums accumulate in the dtype). One rounding is 2^-11 (f16) or 2^-8
///   (bf16) of the value, and a program of up to six ops compounds several. What these still catch is a wrong op
///   (a sign, a transposed operand, a missing term), which is off by far more.
pub fn agreement(dtype: dispatch_core::DType) -> f64 {
    use dispatch_core::DType;
    match dtype {
        DType::F32 => 1e-5,
        DType::F64 => 1e-12,
        DType::F16 => 1e-2,
        DType::BF16 => 6e-2,
    }
}

/// A device enum of both backends and their autodiff variant, for the tests that run one check on every variant
/// of a derived enum (the dtype, model and training tests); tests of the derive itself declare their own.
pub mod every_variant {
    use std::sync::OnceLock;

    use dispatch_core::backends::{Candle, CandleDevice, NdArray, NdArrayDevice};
    use dispatch_core::{AutodiffDevice, Dispatch};

    #[derive(Clone, Debug, PartialEq, Dispatch)]
    pub enum Device {
        #[backend(Candle)]
        Candle(CandleDevice),
        #[backend(NdArray)]
        NdArray(NdArrayDevice),
        #[autodiff]
        Autodiff(AutodiffDevice<Self>),
    }

    /// Every device of [`Device`]: each backend on the CPU, and the autodiff variant over each, then the devices
    /// that [`EXTRA_DEVICES`](crate::EXTRA_DEVICES) names.
    pub fn every_device() -> Vec<Device> {
        let mut devices = vec![
            Device::Candle(CandleDevice::cpu()),
            Device::NdArray(NdArrayDevice),
            Device::Autodiff(AutodiffDevice::new(DeviceBase::Candle(CandleDevice::cpu()))),
            Device::Autodiff(AutodiffDevice::new(DeviceBase::NdArray(NdArrayDevice))),
        ];
        devices.extend(extra_devices().iter().filter(|device| !devices.contains(device)).cloned().collect::<Vec<_>>());
        devices
    }

    /// The devices of [`every_device`] that record gradients.
    pub fn autodiff_devices() -> Vec<Device> {
        every_device().into_iter().filter(|device| matches!(device, Device::Autodiff(_))).collect()
    }

    /// The candle devices of [`every_device`], the base of an autodiff variant included, each once: the CPU first.
    pub fn candle_devices() -> Vec<CandleDevice> {
        let mut devices: Vec<CandleDevice> = Vec::new();
        for device in every_device() {
            if let Some(candle) = candle_base(&device)
                && !devices.contains(candle)
            {
                devices.push(candle.clone());
            }
        }
        devices
    }

    /// The candle device `device` computes on, if it is one.
    fn candle_base(device: &Device) -> Option<&CandleDevice> {
        match device {
            Device::Candle(candle) => Some(candle),
            Device::Autodiff(autodiff) => match autodiff.base() {
                DeviceBase::Candle(candle) => Some(candle),
                DeviceBase::NdArray(_) => None,
            },
            Device::NdArray(_) => None,
        }
    }

    /// The devices [`EXTRA_DEVICES`](crate::EXTRA_DEVICES) names, opened once per test process: every test then
    /// computes on the same handle of a GPU (candle refuses to mix tensors of two handles of one GPU), and a GPU's
    /// set-up is paid once.
    fn extra_devices() -> &'static [Device] {
        static EXTRA: OnceLock<Vec<Device>> = OnceLock::new();
        EXTRA.get_or_init(|| {
            let names = std::env::var(crate::EXTRA_DEVICES).unwrap_or_default();
            let devices = names
                .split(',')
                .map(str::trim)
                .filter(|name| !name.is_empty())
                .map(|name| {
                    name.parse::<Device>().unwrap_or_else(|error| {
                        panic!("{}={names}: cannot test on `{name}`: {error}", crate::EXTRA_DEVICES)
                    })
                })
                .collect();
            one_handle_per_gpu(devices)
        })
    }

    /// `devices` with every candle device replaced by the first one of the same location: each name parsed opened
    /// a handle of its own, and candle refuses to mix tensors of two handles of one GPU.
    fn one_handle_per_gpu(devices: Vec<Device>) -> Vec<Device> {
        let mut handles: Vec<CandleDevice> = Vec::new();
        let mut shared = |candle: &CandleDevice| match handles.iter().find(|handle| *handle == candle) {
            Some(handle) => handle.clone(),
            None => {
                handles.push(candle.clone());
                candle.clone()
            }
        };
        devices
            .into_iter()
            .map(|device| match &device {
                Device::Candle(candle) => Device::Candle(shared(candle)),
                Device::Autodiff(autodiff) => match autodiff.base() {
                    DeviceBase::Candle(candle) => {
                        Device::Autodiff(AutodiffDevice::new(DeviceBase::Candle(shared(candle))))
                    }
                    DeviceBase::NdArray(_) => device,
                },
                Device::NdArray(_) => device,
            })
            .collect()
    }
}
