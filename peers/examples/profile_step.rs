//! The benchmark's GPT or LeNet training step, on its workload (`dispatch_peers::workload`) and one of dispatch's
//! backends, in a loop, for a profiler:
//!
//!     cargo build --release --manifest-path peers/Cargo.toml --example profile_step
//!     perf record --call-graph dwarf peers/target/release/examples/profile_step gpt ndarray 20
//!
//! (a model, `gpt` or `lenet`; a backend, `ndarray` or `candle`; a number of steps).

use dispatch_core::backends::{Autodiff, Candle, CandleDevice, NdArray, NdArrayDevice};
use dispatch_core::{AutodiffBackend, DType, IntTensor, Result, Tensor};
use dispatch_nn::ModuleExt;
use dispatch_nn::loss::cross_entropy;
use dispatch_nn::models::{Gpt, LeNet};
use dispatch_nn::optim::{AdamW, Optimizer};
use dispatch_peers::workload::{
    GPT, GPT_BATCH, LEARNING_RATE, LENET_CLASSES, LENET_IMAGES, SEED, gpt_batch, lenet_images, lenet_labels,
};

/// The seconds `steps` AdamW steps of `model` take, each on the loss `loss` computes.
fn time_steps<B: AutodiffBackend, M: ModuleExt<B>>(
    mut model: M,
    steps: usize,
    loss: impl Fn(&M) -> Result<Tensor<B>>,
) -> Result<f64> {
    let mut optimizer = AdamW::new(LEARNING_RATE);
    let start = std::time::Instant::now();
    for _ in 0..steps {
        let gradients = loss(&model)?.backward_once()?;
        model = optimizer.step(model, &gradients)?;
    }
    Ok(start.elapsed().as_secs_f64())
}

fn gpt<B: AutodiffBackend>(device: &B::Device, steps: usize) -> Result<f64> {
    let (inputs, targets) = gpt_batch();
    let ids = IntTensor::<B>::from_vec(inputs, [GPT_BATCH, GPT.context], device)?;
    let targets = IntTensor::<B>::from_vec(targets, [GPT_BATCH, GPT.context], device)?;
    let model = Gpt::<B>::new(GPT, SEED, DType::F32, device)?.tracked()?;
    time_steps(model, steps, |model| model.loss(&ids, &targets))
}

fn lenet<B: AutodiffBackend>(device: &B::Device, steps: usize) -> Result<f64> {
    let (images, labels) =
        (lenet_images::<B>(device)?, IntTensor::<B>::from_vec(lenet_labels(), [LENET_IMAGES[0]], device)?);
    let model = LeNet::<B>::new(LENET_CLASSES, SEED, DType::F32, device)?.tracked()?;
    time_steps(model, steps, |model| cross_entropy(&model.forward(&images)?, &labels))
}

fn main() -> Result<()> {
    // The profiled thread is one of rayon's, as in `step_timing`, so the profile shows the step users get.
    dispatch_core::parallel::build_pool_with_calling_thread(0)?;
    dispatch_core::memory::keep_freed_memory();
    let _spinning = dispatch_core::parallel::keep_pool_spinning();
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
