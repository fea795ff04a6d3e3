//! The benchmark's GPT training step on one dispatch backend, in a loop, for a profiler:
//!
//!     cargo build --release --manifest-path peers/Cargo.toml --example gpt_step
//!     perf record -g peers/target/release/examples/gpt_step ndarray 50

use dispatch_core::backends::{Autodiff, Candle, CandleDevice, NdArray, NdArrayDevice};
use dispatch_core::{AutodiffBackend, DType, IntTensor};
use dispatch_nn::ModuleExt;
use dispatch_nn::models::{Gpt, GptConfig};
use dispatch_nn::optim::{AdamW, Optimizer};

const CONFIG: GptConfig = GptConfig { vocabulary: 96, context: 64, width: 64, heads: 4, layers: 2 };
const BATCH: usize = 16;

fn train<B: AutodiffBackend>(device: &B::Device, steps: usize) -> dispatch_core::Result<()> {
    let ids: Vec<i64> = (0..BATCH * CONFIG.context).map(|i| ((i * 7919 + 13) % CONFIG.vocabulary) as i64).collect();
    let ids = IntTensor::<B>::from_vec(ids, [BATCH, CONFIG.context], device)?;
    let targets = ids.clone();
    let mut model = Gpt::<B>::new(CONFIG, 7, DType::F32, device)?.tracked()?;
    let mut optimizer = AdamW::new(3e-3);
    let start = std::time::Instant::now();
    for _ in 0..steps {
        let loss = model.loss(&ids, &targets)?;
        model = optimizer.step(model, &loss.backward()?)?;
    }
    println!("{:.1} ms a step", start.elapsed().as_secs_f64() * 1e3 / steps as f64);
    Ok(())
}

fn main() -> dispatch_core::Result<()> {
    let mut args = std::env::args().skip(1);
    let backend = args.next().unwrap_or_else(|| "ndarray".into());
    let steps = args.next().and_then(|steps| steps.parse().ok()).unwrap_or(20);
    match backend.as_str() {
        "candle" => train::<Autodiff<Candle>>(&CandleDevice::cpu(), steps),
        _ => train::<Autodiff<NdArray>>(&NdArrayDevice, steps),
    }
}
