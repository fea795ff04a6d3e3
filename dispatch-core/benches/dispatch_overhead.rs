//! Group 1 of BENCHMARKS.md: what dispatch costs.
//!
//! The same op on the same inputs through four designs: (a) the concrete backend directly, (b) the backend
//! `#[derive(Dispatch)]` generates for a device enum, (c) a `Box<dyn>` trait-object design, (d) a hand-written
//! `match` over an enum (what `enum_dispatch` generates). A tiny op (a 1-element add), where the overhead shows,
//! and heavy ops (matmul 256x256 and 1024x1024, exp over 1M elements), where it must vanish; on candle and ndarray.
//!
//! Each design's result is checked against (a)'s before it is timed, so all four do the same work.

#[path = "overhead/box_dyn.rs"]
mod box_dyn;
#[path = "overhead/hand_match.rs"]
mod hand_match;

use std::hint::black_box;
use std::time::Duration;

use criterion::{BenchmarkGroup, Criterion, SamplingMode, criterion_group, criterion_main, measurement::WallTime};
use dispatch_core::backends::{Candle, CandleDevice, NdArray, NdArrayDevice};
use dispatch_core::{Backend, Result, Tensor};

use self::box_dyn::{DynTensor, boxed};
use self::hand_match::HandTensor;

#[derive(Clone, Copy, Debug)]
enum Op {
    Add,
    Matmul,
    Exp,
}

struct Workload {
    name: &'static str,
    op: Op,
    lhs: Vec<usize>,
    rhs: Vec<usize>,
}

fn workloads() -> Vec<Workload> {
    let workload = |name, op, lhs: &[usize], rhs: &[usize]| Workload { name, op, lhs: lhs.to_vec(), rhs: rhs.to_vec() };
    vec![
        workload("add_1", Op::Add, &[1], &[1]),
        workload("matmul_256", Op::Matmul, &[256, 256], &[256, 256]),
        workload("matmul_1024", Op::Matmul, &[1024, 1024], &[1024, 1024]),
        // exp is unary: the right operand is generated but unused, as it is by every design.
        workload("exp_1m", Op::Exp, &[1_000_000], &[1]),
    ]
}

/// The ops under test, as each design spells them. Every impl only forwards, so the designs differ only in how
/// they reach the backend.
trait Operand: Sized {
    fn add(&self, rhs: &Self) -> Result<Self>;
    fn matmul(&self, rhs: &Self) -> Result<Self>;
    fn exp(&self) -> Result<Self>;
    fn values(&self) -> Result<Vec<f32>>;
}

impl<B: Backend> Operand for Tensor<B> {
    #[inline]
    fn add(&self, rhs: &Self) -> Result<Self> {
        Tensor::add(self, rhs)
    }

    #[inline]
    fn matmul(&self, rhs: &Self) -> Result<Self> {
        Tensor::matmul(self, rhs)
    }

    #[inline]
    fn exp(&self) -> Result<Self> {
        Tensor::exp(self)
    }

    fn values(&self) -> Result<Vec<f32>> {
        self.to_vec()
    }
}

impl Operand for Box<dyn DynTensor> {
    #[inline]
    fn add(&self, rhs: &Self) -> Result<Self> {
        DynTensor::add(&**self, &**rhs)
    }

    #[inline]
    fn matmul(&self, rhs: &Self) -> Result<Self> {
        DynTensor::matmul(&**self, &**rhs)
    }

    #[inline]
    fn exp(&self) -> Result<Self> {
        DynTensor::exp(&**self)
    }

    fn values(&self) -> Result<Vec<f32>> {
        self.to_vec()
    }
}

impl Operand for HandTensor {
    #[inline]
    fn add(&self, rhs: &Self) -> Result<Self> {
        HandTensor::add(self, rhs)
    }

    #[inline]
    fn matmul(&self, rhs: &Self) -> Result<Self> {
        HandTensor::matmul(self, rhs)
    }

    #[inline]
    fn exp(&self) -> Result<Self> {
        HandTensor::exp(self)
    }

    fn values(&self) -> Result<Vec<f32>> {
        self.to_vec()
    }
}

/// The inputs of a workload, in host memory; every design builds its tensors from these same values.
struct Inputs {
    lhs: Vec<f32>,
    rhs: Vec<f32>,
    lhs_shape: Vec<usize>,
    rhs_shape: Vec<usize>,
}

impl Inputs {
    fn new(workload: &Workload) -> Result<Self> {
        let values =
            |shape: &[usize], seed| Tensor::<NdArray>::random_uniform(shape, -1.0, 1.0, seed, &NdArrayDevice)?.to_vec();
        Ok(Self {
            lhs: values(&workload.lhs, 1)?,
            rhs: values(&workload.rhs, 2)?,
            lhs_shape: workload.lhs.clone(),
            rhs_shape: workload.rhs.clone(),
        })
    }

    fn tensors<B: Backend>(&self, device: &B::Device) -> Result<(Tensor<B>, Tensor<B>)> {
        Ok((
            Tensor::from_vec(self.lhs.clone(), self.lhs_shape.as_slice(), device)?,
            Tensor::from_vec(self.rhs.clone(), self.rhs_shape.as_slice(), device)?,
        ))
    }
}

fn apply<T: Operand>(op: Op, lhs: &T, rhs: &T) -> Result<T> {
    match op {
        Op::Add => lhs.add(rhs),
        Op::Matmul => lhs.matmul(rhs),
        Op::Exp => lhs.exp(),
    }
}

/// Times `op` on one design's operands, after checking that it computes exactly `expected`.
fn bench_design<T: Operand>(
    group: &mut BenchmarkGroup<'_, WallTime>,
    id: &str,
    op: Op,
    operands: (T, T),
    expected: &[f32],
) {
    let (lhs, rhs) = operands;
    let result = apply(op, &lhs, &rhs).and_then(|result| result.values()).expect("the op runs");
    assert!(result == expected, "design {id} computes another result than the direct call for {op:?}");
    // One closure per op, so that no design pays for choosing the op inside the timed loop.
    match op {
        Op::Add => group.bench_function(id, |b| b.iter(|| black_box(black_box(&lhs).add(black_box(&rhs))))),
        Op::Matmul => group.bench_function(id, |b| b.iter(|| black_box(black_box(&lhs).matmul(black_box(&rhs))))),
        Op::Exp => group.bench_function(id, |b| b.iter(|| black_box(black_box(&lhs).exp()))),
    };
}

fn configure(group: &mut BenchmarkGroup<'_, WallTime>, workload: &Workload) {
    if workload.name == "matmul_1024" {
        // Tens of milliseconds per call: flat sampling keeps the run short without cutting the sample count.
        group.sampling_mode(SamplingMode::Flat).sample_size(30).measurement_time(Duration::from_secs(8));
    }
}

/// Every design of one backend `B`; `hand` puts a tensor of `B` into the hand-written enum.
fn designs<B: Backend>(c: &mut Criterion, device: &B::Device, hand: fn(Tensor<B>) -> HandTensor) {
    for workload in workloads() {
        let inputs = Inputs::new(&workload).expect("inputs");
        let mut group = c.benchmark_group(format!("dispatch/{}/{}", B::name(), workload.name));
        configure(&mut group, &workload);
        let (lhs, rhs) = inputs.tensors::<B>(device).expect("tensors");
        let expected = apply(workload.op, &lhs, &rhs).and_then(|t| t.to_vec()).expect("the direct call runs");
        let op = workload.op;
        bench_design(&mut group, "a_direct", op, (lhs.clone(), rhs.clone()), &expected);
        bench_design(&mut group, "c_box_dyn", op, (boxed(lhs.clone()), boxed(rhs.clone())), &expected);
        bench_design(&mut group, "d_hand_match", op, (hand(lhs), hand(rhs)), &expected);
        group.finish();
    }
}

fn candle(c: &mut Criterion) {
    designs::<Candle>(c, &CandleDevice::cpu(), HandTensor::Candle);
}

fn ndarray(c: &mut Criterion) {
    designs::<NdArray>(c, &NdArrayDevice, HandTensor::NdArray);
}

criterion_group!(benches, candle, ndarray);
criterion_main!(benches);
