//! A 3x3 convolution of a batch of 32 images with 64 channels (16x16, padding 1) to 64 channels: candle's own
//! kernel (what `Candle`'s `conv2d` calls) against the ndarray backend, which composes it from `unfold2d` and one
//! batched matmul, and the same through a derived enum's two variants. The results are checked to agree first.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use dispatch_core::DType;
use dispatch_core::backend::Conv2dOptions;
use dispatch_core::backends::{Candle, CandleDevice, NdArray, NdArrayDevice};
use dispatch_core::{Backend, Dispatch, Result, Tensor};

const INPUT: [usize; 4] = [32, 64, 16, 16];
const WEIGHT: [usize; 4] = [64, 64, 3, 3];

#[derive(Clone, Debug, PartialEq, Dispatch)]
enum Device {
    #[backend(Candle)]
    Candle(CandleDevice),
    #[backend(NdArray)]
    NdArray(NdArrayDevice),
}

fn options() -> Conv2dOptions {
    Conv2dOptions { padding: [1, 1], ..Default::default() }
}

/// The input and weight on `device`, the same seeded values on every backend.
fn operands<B: Backend>(device: &B::Device) -> Result<(Tensor<B>, Tensor<B>)> {
    Ok((
        Tensor::random_uniform(INPUT, (-1.0, 1.0), 1, DType::F32, device)?,
        Tensor::random_normal(WEIGHT, (0.0, 0.05), 2, DType::F32, device)?,
    ))
}

fn conv2d(c: &mut Criterion) {
    let (cpu, nd) = (CandleDevice::cpu(), NdArrayDevice);
    let (candle_x, candle_w) = operands::<Candle>(&cpu).unwrap();
    let (nd_x, nd_w) = operands::<NdArray>(&nd).unwrap();
    let (candle, ndarray) = (
        candle_x.conv2d(&candle_w, options()).unwrap().to_vec().unwrap(),
        nd_x.conv2d(&nd_w, options()).unwrap().to_vec().unwrap(),
    );
    assert_eq!(candle.len(), ndarray.len(), "candle and ndarray give outputs of different sizes");
    // Element by element, so that a NaN on either side fails: its difference compares false, where folding the
    // differences with `f32::max` would drop it.
    let agrees = |a: f32, b: f32| (a - b).abs() < 1e-4;
    let disagreement = candle.iter().zip(&ndarray).enumerate().find(|&(_, (&a, &b))| !agrees(a, b));
    assert!(disagreement.is_none(), "candle and ndarray disagree at (index, (candle, ndarray)) {disagreement:?}");

    let mut group = c.benchmark_group("conv2d/3x3_b32_c64_16x16");
    group.sample_size(10);
    group.bench_function("candle", |b| b.iter(|| black_box(candle_x.conv2d(&candle_w, options()).unwrap())));
    group.bench_function("ndarray", |b| b.iter(|| black_box(nd_x.conv2d(&nd_w, options()).unwrap())));
    for (name, device) in [("derived_candle", Device::Candle(cpu.clone())), ("derived_ndarray", Device::NdArray(nd))] {
        let (x, w) = operands::<DeviceBackend>(&device).unwrap();
        group.bench_function(name, |b| b.iter(|| black_box(x.conv2d(&w, options()).unwrap())));
    }
    group.finish();
}

criterion_group!(benches, conv2d);
criterion_main!(benches);
