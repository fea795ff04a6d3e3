//! How long one training step of the main job's GPT and of the CNN example's LeNet takes on each device: the
//! number to compare between a GPU and the CPU.
//!
//! ```text
//! cargo run --release --example step_time                                   # every autodiff device found here
//! cargo run --release --example step_time -- --device autodiff:candle:cuda:0 --device autodiff:candle
//! cargo run --release --example step_time -- --steps 50 --corpus /path/to/dispatch
//! ```
//!
//! A step is what the examples' training loops do: the batch uploaded, the forward pass and the loss, the loss read
//! back to the host, the backward pass and the optimizer's update. The first steps on a device pay for its set-up
//! (a GPU loads its kernels then) and are left out of the mean.

use std::process::ExitCode;
use std::time::{Duration, Instant};

use dispatch_core::{DType, HostTransfers, IntTensor, Tensor, host_transfers};
use dispatch_examples::devices::{names_of, training_devices};
use dispatch_examples::shapes::{SHAPES, images};
use dispatch_examples::text::Corpus;
use dispatch_examples::{DeviceBackend, DeviceLocal};
use dispatch_nn::ModuleExt;
use dispatch_nn::loss::cross_entropy;
use dispatch_nn::models::{Gpt, GptConfig, LeNet};
use dispatch_nn::optim::{Adam, AdamW, Optimizer};

/// The main job's model and batch (examples/gpt.rs): 2 layers, 4 heads, width 64, context 64, batch 16, in F32.
const GPT_LAYERS: usize = 2;
const GPT_HEADS: usize = 4;
const GPT_WIDTH: usize = 64;
const GPT_CONTEXT: usize = 64;
const GPT_BATCH: usize = 16;
/// The CNN example's batch and dtype (examples/cnn.rs): 32 images of 28x28, in F64.
const LENET_BATCH: usize = 32;
const LENET_DTYPE: DType = DType::F64;
const SEED: u64 = 7;
/// Steps run before timing: the first pays for the device's set-up, the second for anything the first left cold.
const WARM_UP: usize = 2;
const DEFAULT_STEPS: usize = 20;

#[derive(Debug)]
struct Args {
    steps: usize,
    devices: Vec<String>,
    corpus: Option<std::path::PathBuf>,
}

fn main() -> ExitCode {
    dispatch_examples::exit_code(run())
}

fn run() -> Result<(), String> {
    // This thread joins rayon's pool, freed pages are kept, and the pool polls for work until `run` returns.
    let _spinning = dispatch_examples::run_on_this_cpu().map_err(|error| error.to_string())?;
    let args = parse_args(std::env::args().skip(1))?;
    let devices = training_devices(&args.devices)?;
    let corpus = Corpus::read(&Corpus::locate(args.corpus)?)?;
    println!(
        "milliseconds per training step, the mean of {} steps after {WARM_UP} warm-up steps, on {}",
        args.steps,
        names_of(&devices)
    );
    println!(
        "  GPT: {GPT_LAYERS} layers, {GPT_HEADS} heads, width {GPT_WIDTH}, batch {GPT_BATCH}x{GPT_CONTEXT}, F32, AdamW"
    );
    println!("  LeNet: batch {LENET_BATCH} of 1x28x28, {LENET_DTYPE}, Adam");
    println!("  host copies: per step, as dispatch_core::host_transfers() counts them (a step asks for 3)");
    println!("\n  {:<24} {:>12} {:>12} {:>16} {:>16}", "device", "GPT ms", "LeNet ms", "GPT copies", "LeNet copies");
    for device in &devices {
        let gpt = gpt_step_time(device, &corpus, args.steps).map_err(|error| format!("{device}: GPT: {error}"))?;
        let lenet = lenet_step_time(device, args.steps).map_err(|error| format!("{device}: LeNet: {error}"))?;
        println!(
            "  {:<24} {:>12.2} {:>12.2} {:>16} {:>16}",
            device.to_string(),
            milliseconds(gpt.time),
            milliseconds(lenet.time),
            gpt.copies_per_step(args.steps),
            lenet.copies_per_step(args.steps)
        );
    }
    Ok(())
}

fn milliseconds(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1e3
}

/// What the timed steps took: the mean time of a step, and the host copies of all of them.
struct Timed {
    time: Duration,
    copies: HostTransfers,
}

impl Timed {
    /// The mean of `elapsed` over `steps` (at least 1, by parse_args), and the copies made since `before`.
    fn since(start: Instant, before: HostTransfers, steps: usize) -> Self {
        Self { time: start.elapsed().div_f64(steps as f64), copies: host_transfers().since(before) }
    }

    /// Copies per step, as `calls (values)`.
    fn copies_per_step(&self, steps: usize) -> String {
        let steps = steps.max(1) as u64;
        format!("{} ({})", self.copies.calls / steps, self.copies.values / steps)
    }
}

/// One step of examples/gpt.rs's training loop on `device`, timed after the warm-up.
fn gpt_step_time(device: &DeviceLocal, corpus: &Corpus, steps: usize) -> dispatch_core::Result<Timed> {
    let config = GptConfig {
        vocabulary: corpus.vocabulary.len(),
        context: GPT_CONTEXT,
        width: GPT_WIDTH,
        heads: GPT_HEADS,
        layers: GPT_LAYERS,
    };
    let mut model = Gpt::<DeviceBackend>::new(config, SEED, DType::F32, device)?.tracked()?;
    let mut optimizer = AdamW::new(3e-3);
    let training = 0..corpus.ids.len() * 9 / 10;
    let (mut start, mut before) = (Instant::now(), host_transfers());
    for step in 0..WARM_UP + steps {
        if step == WARM_UP {
            (start, before) = (Instant::now(), host_transfers());
        }
        let (inputs, targets) = corpus.batch(training.clone(), GPT_BATCH, GPT_CONTEXT, SEED + step as u64);
        let ids = IntTensor::from_vec(inputs, [GPT_BATCH, GPT_CONTEXT], device)?;
        let targets = IntTensor::from_vec(targets, [GPT_BATCH, GPT_CONTEXT], device)?;
        let loss = model.loss(&ids, &targets)?;
        loss.to_scalar()?;
        model = optimizer.step(model, &loss.backward_once()?)?;
    }
    Ok(Timed::since(start, before, steps))
}

/// One step of examples/cnn.rs's training loop on `device`, timed after the warm-up.
fn lenet_step_time(device: &DeviceLocal, steps: usize) -> dispatch_core::Result<Timed> {
    let mut model = LeNet::<DeviceBackend>::new(SHAPES.len(), SEED, LENET_DTYPE, device)?.tracked()?;
    let mut optimizer = Adam::new(2e-3);
    let (mut start, mut before) = (Instant::now(), host_transfers());
    for step in 0..WARM_UP + steps {
        if step == WARM_UP {
            (start, before) = (Instant::now(), host_transfers());
        }
        let (pixels, labels) = images(LENET_BATCH, SEED + step as u64);
        let x = Tensor::<DeviceBackend>::from_vec(pixels, [LENET_BATCH, 1, 28, 28], device)?.cast(LENET_DTYPE)?;
        let y = IntTensor::from_vec(labels, [LENET_BATCH], device)?;
        let loss = cross_entropy(&model.forward(&x)?, &y)?;
        loss.to_scalar()?;
        model = optimizer.step(model, &loss.backward_once()?)?;
    }
    Ok(Timed::since(start, before, steps))
}

/// `--steps N`, `--device NAME` (repeatable, each an autodiff device), `--corpus DIR`.
fn parse_args(mut args: impl Iterator<Item = String>) -> Result<Args, String> {
    let usage = "usage: step_time [--steps N] [--device NAME]... [--corpus DIR]";
    let mut parsed = Args { steps: DEFAULT_STEPS, devices: Vec::new(), corpus: None };
    while let Some(arg) = args.next() {
        let mut value = |flag: &str| args.next().ok_or(format!("{flag} needs a value; {usage}"));
        match arg.as_str() {
            "--steps" => parsed.steps = value("--steps")?.parse().map_err(|error| format!("--steps: {error}"))?,
            "--device" => parsed.devices.push(value("--device")?),
            "--corpus" => parsed.corpus = Some(value("--corpus")?.into()),
            other => return Err(format!("unknown argument `{other}`; {usage}")),
        }
    }
    if parsed.steps == 0 {
        return Err("--steps must be at least 1".to_owned());
    }
    Ok(parsed)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Args, String> {
        parse_args(args.iter().map(|arg| (*arg).to_owned()))
    }

    #[test]
    fn arguments_name_the_steps_devices_and_corpus() {
        let args = parse(&["--steps", "5", "--device", "autodiff:ndarray", "--device", "autodiff:candle"]).unwrap();
        assert_eq!(
            (args.steps, args.devices, args.corpus),
            (5, vec!["autodiff:ndarray".into(), "autodiff:candle".into()], None)
        );
        assert_eq!(parse(&[]).unwrap().steps, DEFAULT_STEPS);
    }

    #[test]
    fn bad_arguments_are_errors_saying_what_is_wrong() {
        assert!(parse(&["--steps", "0"]).unwrap_err().contains("at least 1"));
        assert!(parse(&["--steps"]).unwrap_err().contains("--steps needs a value"));
        assert!(parse(&["--fast"]).unwrap_err().contains("unknown argument `--fast`"));
    }
}
