//! Group 1 of BENCHMARKS.md: what dispatch costs.
//!
//! The same op on the same inputs through four designs: (a) the concrete backend directly, (b) the backend
//! `#[derive(Dispatch)]` generates for a device enum, (c) a `Box<dyn>` trait-object design, (d) a hand-written
//! `match` over an enum (what `enum_dispatch` generates). A tiny op (a 1-element add), where the overhead shows,
//! and heavy ops (matmul 256x256 and 1024x1024, exp over 1M elements), where it must vanish; on candle and ndarray.
//!
//! Each design's result is checked against (a)'s before it is timed, so all four do the same work. Criterion times
//! each design; with `DISPATCH_PAIRED=1` in the environment, the ratios of (b) against the others are also measured
//! in alternating rounds (see `overhead/paired.rs`), which resolves them far more finely on a noisy machine.

#[path = "overhead/box_dyn.rs"]
mod box_dyn;
#[path = "overhead/derived.rs"]
mod derived;
#[path = "overhead/hand_match.rs"]
mod hand_match;
#[path = "overhead/operand.rs"]
mod operand;
#[path = "overhead/paired.rs"]
mod paired;

use std::hint::black_box;
use std::time::Duration;

use criterion::{BenchmarkGroup, Criterion, SamplingMode, measurement::WallTime};
use dispatch_core::DType;
use dispatch_core::backends::{Candle, CandleDevice, NdArray, NdArrayDevice};
use dispatch_core::{Backend, Result, Tensor};

use self::box_dyn::{DynTensor, boxed};
use self::derived::{DeviceBackend, DeviceTensor};
use self::hand_match::HandTensor;
use self::operand::{Add, Exp, Matmul, Op, Operand};

#[derive(Clone, Copy)]
enum OpKind {
    Add,
    Matmul,
    Exp,
}

struct Workload {
    name: &'static str,
    op: OpKind,
    lhs: Vec<usize>,
    rhs: Vec<usize>,
    /// Tens of milliseconds per call: sampled flat, so the run stays short without cutting the sample count.
    slow: bool,
}

fn workloads() -> Vec<Workload> {
    let workload = |name, op, lhs: &[usize], rhs: &[usize], slow| Workload {
        name,
        op,
        lhs: lhs.to_vec(),
        rhs: rhs.to_vec(),
        slow,
    };
    vec![
        workload("add_1", OpKind::Add, &[1], &[1], false),
        workload("matmul_256", OpKind::Matmul, &[256, 256], &[256, 256], false),
        workload("matmul_1024", OpKind::Matmul, &[1024, 1024], &[1024, 1024], true),
        // exp is unary: the right operand is built but unused, by every design alike.
        workload("exp_1m", OpKind::Exp, &[1_000_000], &[1], false),
    ]
}

/// The operands of one workload in every design: the same two tensors, wrapped four ways.
struct Designs<B: Backend> {
    direct: (Tensor<B>, Tensor<B>),
    derived: (Tensor<DeviceBackend>, Tensor<DeviceBackend>),
    boxed: (Box<dyn DynTensor>, Box<dyn DynTensor>),
    hand: (HandTensor, HandTensor),
}

/// How a tensor of backend `B` becomes an operand of designs (b) and (d).
struct Wrap<B: Backend> {
    derived: fn(Tensor<B>) -> Tensor<DeviceBackend>,
    hand: fn(Tensor<B>) -> HandTensor,
}

impl<B: Backend> Designs<B> {
    /// One pair of tensors, shared by every design: each wraps the same storage, so no design gets luckier memory.
    fn new(workload: &Workload, device: &B::Device, wrap: &Wrap<B>) -> Result<Self> {
        let values = |shape: &[usize], seed| -> Result<Tensor<B>> {
            let values =
                Tensor::<NdArray>::random_uniform(shape, (-1.0, 1.0), seed, DType::F32, &NdArrayDevice)?.to_vec()?;
            Tensor::from_vec(values, shape, device)
        };
        let (lhs, rhs) = (values(&workload.lhs, 1)?, values(&workload.rhs, 2)?);
        Ok(Self {
            derived: ((wrap.derived)(lhs.clone()), (wrap.derived)(rhs.clone())),
            boxed: (boxed(lhs.clone()), boxed(rhs.clone())),
            hand: ((wrap.hand)(lhs.clone()), (wrap.hand)(rhs.clone())),
            direct: (lhs, rhs),
        })
    }
}

/// Times `K` on one design's operands, after checking that it computes exactly `expected`.
fn bench<K: Op, T: Operand>(group: &mut BenchmarkGroup<'_, WallTime>, id: &str, operands: &(T, T), expected: &[f32]) {
    let result = K::call(&operands.0, &operands.1).and_then(|result| result.values()).expect("the op runs");
    assert!(result == expected, "design {id} computes another {} than the direct call", K::NAME);
    group.bench_function(id, |b| b.iter(|| black_box(K::call(black_box(&operands.0), black_box(&operands.1)))));
}

/// `candidate / reference` for `K`, measured in alternating rounds.
fn paired_ratio<K: Op, R: Operand, C: Operand>(reference: &(R, R), candidate: &(C, C)) -> paired::Summary {
    paired::ratio(
        Duration::from_secs(4),
        || drop(black_box(K::call(black_box(&reference.0), black_box(&reference.1)))),
        || drop(black_box(K::call(black_box(&candidate.0), black_box(&candidate.1)))),
    )
}

fn bench_workload<K: Op, B: Backend>(c: &mut Criterion, workload: &Workload, designs: &Designs<B>) {
    let name = format!("dispatch/{}/{}", B::name(), workload.name);
    let expected = K::call(&designs.direct.0, &designs.direct.1).and_then(|t| t.to_vec()).expect("direct call");
    let mut group = c.benchmark_group(&name);
    if workload.slow {
        group.sampling_mode(SamplingMode::Flat).sample_size(30).measurement_time(Duration::from_secs(8));
    }
    bench::<K, _>(&mut group, "a_direct", &designs.direct, &expected);
    bench::<K, _>(&mut group, "b_derived", &designs.derived, &expected);
    bench::<K, _>(&mut group, "c_box_dyn", &designs.boxed, &expected);
    bench::<K, _>(&mut group, "d_hand_match", &designs.hand, &expected);
    group.finish();
    if paired_requested(&name) {
        let over_direct = paired_ratio::<K, _, _>(&designs.direct, &designs.derived);
        let over_hand = paired_ratio::<K, _, _>(&designs.hand, &designs.derived);
        let over_boxed = paired_ratio::<K, _, _>(&designs.boxed, &designs.derived);
        println!(
            "paired {name}: (b)/(a) {over_direct}  (b)/(d) {over_hand}  (b)/(c) {over_boxed}  ({} rounds each)",
            over_direct.rounds
        );
    }
}

/// Whether `DISPATCH_PAIRED` asks for paired ratios of the group `name`: `1` for every group, else a part of the
/// names of the groups wanted (`candle/add`).
fn paired_requested(name: &str) -> bool {
    match std::env::var("DISPATCH_PAIRED") {
        Ok(wanted) => wanted == "1" || name.contains(&wanted),
        Err(_) => false,
    }
}

/// Every workload on backend `B`.
fn backend<B: Backend>(c: &mut Criterion, device: &B::Device, wrap: Wrap<B>) {
    for workload in workloads() {
        let designs = Designs::<B>::new(&workload, device, &wrap).expect("operands");
        match workload.op {
            OpKind::Add => bench_workload::<Add, B>(c, &workload, &designs),
            OpKind::Matmul => bench_workload::<Matmul, B>(c, &workload, &designs),
            OpKind::Exp => bench_workload::<Exp, B>(c, &workload, &designs),
        }
    }
}

fn main() {
    let mut c = Criterion::default().configure_from_args();
    let candle = Wrap {
        derived: |tensor| Tensor::from_primitive(DeviceTensor::Candle(tensor.into_primitive())),
        hand: HandTensor::Candle,
    };
    let ndarray = Wrap {
        derived: |tensor| Tensor::from_primitive(DeviceTensor::NdArray(tensor.into_primitive())),
        hand: HandTensor::NdArray,
    };
    backend::<Candle>(&mut c, &CandleDevice::cpu(), candle);
    backend::<NdArray>(&mut c, &NdArrayDevice, ndarray);
    c.final_summary();
}
