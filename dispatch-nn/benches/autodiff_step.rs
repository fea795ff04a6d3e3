//! Group 2 of BENCHMARKS.md: one training step of a 2-layer MLP (batch 64, 784 -> 128 (ReLU) -> 10, mean softmax
//! cross-entropy), forward and backward.
//!
//! `Autodiff<Candle>` against candle's own `Var` + `backward()` on the same computation, and `Autodiff<NdArray>`;
//! the forward alone too, so that the cost of the backward pass shows. Hand-written backpropagation and the
//! untracked forward are there for reference. Every implementation's loss and gradients are checked against
//! candle's own before anything is timed. The same step through a derived enum's `#[autodiff]` variant shows what
//! the dispatch costs in a real step.

#[path = "autodiff/candle_var.rs"]
mod candle_var;
#[path = "autodiff/derived.rs"]
mod derived;

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use dispatch_core::DType;
use dispatch_core::backends::{Autodiff, Candle, CandleDevice, NdArray, NdArrayDevice};
use dispatch_core::{AutodiffBackend, Backend, Result, Tensor};
use dispatch_nn::models::classifier::{Classifier, ClassifierGradients, one_hot};

use self::candle_var::CandleVarMlp;
use self::derived::{DeviceBackend, DeviceBase, autodiff};

const BATCH: usize = 64;
const INPUTS: usize = 784;
const HIDDEN: usize = 128;
const CLASSES: usize = 10;
const SEED: u64 = 42;

/// A batch in host memory: inputs in `[0, 1)`, like pixel intensities, and one label per row.
struct Batch {
    x: Vec<f32>,
    labels: Vec<usize>,
}

impl Batch {
    fn new() -> Result<Self> {
        let x = Tensor::<NdArray>::random_uniform([BATCH, INPUTS], (0.0, 1.0), SEED + 7, DType::F32, &NdArrayDevice)?
            .to_vec()?;
        Ok(Self { x, labels: (0..BATCH).map(|row| (row * 7) % CLASSES).collect() })
    }

    fn on<B: Backend>(&self, device: &B::Device) -> Result<(Tensor<B>, Tensor<B>)> {
        Ok((Tensor::from_vec(self.x.clone(), [BATCH, INPUTS], device)?, one_hot(&self.labels, CLASSES, device)?))
    }
}

/// The loss and the gradients in parameter order (`w1, b1, w2, b2`), as host values.
type HostGradients = (f32, [Vec<f32>; 4]);

fn host_gradients<B: Backend>(gradients: &ClassifierGradients<B>) -> Result<HostGradients> {
    let [w1, b1, w2, b2] = gradients.tensors();
    Ok((gradients.loss as f32, [w1.to_vec()?, b1.to_vec()?, w2.to_vec()?, b2.to_vec()?]))
}

/// Panics unless `actual` matches candle's own gradients to float rounding: the implementations must do the same
/// computation for their times to be comparable.
fn assert_close(name: &str, actual: &HostGradients, reference: &HostGradients) {
    let close = |a: f32, b: f32| (a - b).abs() <= 1e-5 + 1e-3 * b.abs();
    assert!(close(actual.0, reference.0), "{name}: loss {} against candle's {}", actual.0, reference.0);
    for (index, (a, b)) in actual.1.iter().zip(&reference.1).enumerate() {
        assert_eq!(a.len(), b.len(), "{name}: gradient {index} has another size");
        let worst = a.iter().zip(b).find(|&(&a, &b)| !close(a, b));
        assert!(worst.is_none(), "{name}: gradient {index} differs from candle's: {worst:?}");
    }
}

/// One implementation's model and batch, on backend `B`.
struct Setup<B: Backend> {
    model: Classifier<B>,
    x: Tensor<B>,
    targets: Tensor<B>,
}

impl<B: Backend> Setup<B> {
    fn new(device: &B::Device) -> Result<Self> {
        let model = Classifier::new(INPUTS, HIDDEN, CLASSES, SEED, device)?;
        let (x, targets) = Batch::new()?.on::<B>(device)?;
        Ok(Self { model, x, targets })
    }

    /// Backpropagation written by hand: the reference for what a step costs without a graph.
    fn step_by_hand(&self) -> Result<ClassifierGradients<B>> {
        self.model.gradients_by_hand(&self.x, &self.targets)
    }

    fn untracked_forward(&self) -> Result<f64> {
        self.model.loss(&self.x, &self.targets)?.to_scalar()
    }
}

impl<B: AutodiffBackend> Setup<B> {
    fn step(&self) -> Result<ClassifierGradients<B>> {
        self.model.gradients_by_autodiff(&self.x, &self.targets)
    }

    /// The forward of a step: the parameters are tracked, so it records the graph that backward walks.
    fn forward(&self) -> Result<f64> {
        let [w1, b1, w2, b2] = self.model.parameters().map(Tensor::require_grad);
        let tracked = Classifier { w1: w1?, b1: b1?, w2: w2?, b2: b2? };
        tracked.loss(&self.x, &self.targets)?.to_scalar()
    }
}

fn checked<B: Backend>(name: &str, gradients: Result<ClassifierGradients<B>>, reference: &HostGradients) {
    let host = gradients.and_then(|gradients| host_gradients(&gradients)).expect("the step runs");
    assert_close(name, &host, reference);
}

fn mlp_step(c: &mut Criterion) {
    let batch = Batch::new().expect("batch");
    // The same initial weights as `Classifier::new` draws on every backend.
    let weights = Classifier::<NdArray>::new(INPUTS, HIDDEN, CLASSES, SEED, &NdArrayDevice).expect("model");
    let candle_own = CandleVarMlp::new(&weights, &batch.x, &batch.labels, CLASSES).expect("candle's own model");
    let reference = candle_own.step().and_then(|step| step.to_host()).expect("candle's own step");

    let autodiff_candle = Setup::<Autodiff<Candle>>::new(&CandleDevice::cpu()).expect("setup");
    let autodiff_ndarray = Setup::<Autodiff<NdArray>>::new(&NdArrayDevice).expect("setup");
    let derived_candle =
        Setup::<DeviceBackend>::new(&autodiff(DeviceBase::Candle(CandleDevice::cpu()))).expect("setup");
    let derived_ndarray = Setup::<DeviceBackend>::new(&autodiff(DeviceBase::NdArray(NdArrayDevice))).expect("setup");
    let candle = Setup::<Candle>::new(&CandleDevice::cpu()).expect("setup");
    let ndarray = Setup::<NdArray>::new(&NdArrayDevice).expect("setup");
    checked("autodiff_candle", autodiff_candle.step(), &reference);
    checked("autodiff_ndarray", autodiff_ndarray.step(), &reference);
    checked("derived_autodiff_candle", derived_candle.step(), &reference);
    checked("derived_autodiff_ndarray", derived_ndarray.step(), &reference);
    checked("by_hand_candle", candle.step_by_hand(), &reference);
    checked("by_hand_ndarray", ndarray.step_by_hand(), &reference);

    let mut group = c.benchmark_group("autodiff/step");
    group.bench_function("candle_var", |b| b.iter(|| black_box(black_box(&candle_own).step())));
    group.bench_function("autodiff_candle", |b| b.iter(|| black_box(black_box(&autodiff_candle).step())));
    group.bench_function("autodiff_ndarray", |b| b.iter(|| black_box(black_box(&autodiff_ndarray).step())));
    group.bench_function("derived_autodiff_candle", |b| b.iter(|| black_box(black_box(&derived_candle).step())));
    group.bench_function("derived_autodiff_ndarray", |b| b.iter(|| black_box(black_box(&derived_ndarray).step())));
    group.bench_function("by_hand_candle", |b| b.iter(|| black_box(black_box(&candle).step_by_hand())));
    group.bench_function("by_hand_ndarray", |b| b.iter(|| black_box(black_box(&ndarray).step_by_hand())));
    group.finish();

    let mut group = c.benchmark_group("autodiff/forward");
    group.bench_function("candle_var", |b| b.iter(|| black_box(black_box(&candle_own).forward())));
    group.bench_function("autodiff_candle", |b| b.iter(|| black_box(black_box(&autodiff_candle).forward())));
    group.bench_function("autodiff_ndarray", |b| b.iter(|| black_box(black_box(&autodiff_ndarray).forward())));
    group.bench_function("derived_autodiff_candle", |b| b.iter(|| black_box(black_box(&derived_candle).forward())));
    group.bench_function("derived_autodiff_ndarray", |b| b.iter(|| black_box(black_box(&derived_ndarray).forward())));
    group.bench_function("untracked_candle", |b| b.iter(|| black_box(black_box(&candle).untracked_forward())));
    group.bench_function("untracked_ndarray", |b| b.iter(|| black_box(black_box(&ndarray).untracked_forward())));
    group.finish();
}

criterion_group!(benches, mlp_step);
criterion_main!(benches);
