//! The benchmark's GPT or LeNet training step on one of dispatch's backends, in a loop, for a profiler:
//!
//!     cargo build --release --manifest-path peers/Cargo.toml --example profile_step
//!     perf record --call-graph dwarf peers/target/release/examples/profile_step gpt ndarray 20
//!
//! (a model, `gpt` or `lenet`; a backend, `ndarray` or `candle`; a number of steps).

use dispatch_core::backends::{Autodiff, Candle, CandleDevice, NdArray, NdArrayDevice};
use dispatch_core::{AutodiffBackend, DType, IntTensor, Result, Tensor};
use dispatch_nn::ModuleExt;
use dispatch_nn::loss::cross_entropy;
use dispatch_nn::models::{Gpt, GptConfig, LeNet};
use dispatch_nn::optim::{AdamW, Optimizer};

const CONFIG: GptConfig = GptConfig { vocabulary: 96, context: 64, width: 64, heads: 4, layers: 2 };
const BATCH: usize = 16;

fn gpt<B: AutodiffBackend>(device: &B::Device, steps: usize) -> Result<f64> {
    let ids: Vec<i64> = (0..BATCH * CONFIG.context).map(|i| ((i * 7919 + 13) % CONFIG.vocabulary) as i64).collect();
    let ids = IntTensor::<B>::from_vec(ids, [BATCH, CONFIG.context], device)?;
    let mut model = Gpt::<B>::new(CONFIG, 7, DType::F32, device)?.tracked()?;
    let mut optimizer = AdamW::new(3e-3);
    let start = std::time::Instant::now();
    for _ in 0..steps {
        let loss = model.loss(&ids, &ids)?;
        model = optimizer.step(model, &loss.backward()?)?;
    }
    Ok(start.elapsed().as_secs_f64())
}

fn lenet<B: AutodiffBackend>(device: &B::Device, steps: usize) -> Result<f64> {
    let images = Tensor::<B>::random_uniform([32, 1, 28, 28], 0.0, 1.0, 3, device)?;
    let labels = IntTensor::<B>::from_vec((0..32).map(|i| i % 10).collect(), [32], device)?;
    let mut model = LeNet::<B>::new(10, 7, DType::F32, device)?.tracked()?;
    let mut optimizer = AdamW::new(3e-3);
    let start = std::time::Instant::now();
    for _ in 0..steps {
        let loss = cross_entropy(&model.forward(&images)?, &labels)?;
        model = optimizer.step(model, &loss.backward()?)?;
    }
    Ok(start.elapsed().as_secs_f64())
}

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let arg = |index: usize, default: &str| args.get(index).cloned().unwrap_or_else(|| default.to_owned());
    let (model, backend) = (arg(0, "gpt"), arg(1, "ndarray"));
    let steps = arg(2, "20").parse().unwrap_or(20);
    let seconds = match (model.as_str(), backend.as_str()) {
        ("gpt", "candle") => gpt::<Autodiff<Candle>>(&CandleDevice::cpu(), steps)?,
        ("gpt", _) => gpt::<Autodiff<NdArray>>(&NdArrayDevice, steps)?,
        (_, "candle") => lenet::<Autodiff<Candle>>(&CandleDevice::cpu(), steps)?,
        (_, _) => lenet::<Autodiff<NdArray>>(&NdArrayDevice, steps)?,
    };
    println!("{model} on {backend}: {:.1} ms a step", seconds * 1e3 / steps as f64);
    Ok(())
}
