//! The main job: a small character-level GPT learns the repository's own docs and sources, on every device that
//! records gradients, from one device enum derived once.
//!
//! ```text
//! cargo run --release --example gpt                                    # every autodiff device found here
//! cargo run --release --example gpt -- --device autodiff:ndarray       # one (repeat --device for more)
//! cargo run --release --example gpt -- --steps 600 --save gpt.safetensors
//! cargo run --release --example gpt -- --sample-from gpt.safetensors --device candle
//! cargo run --release --example gpt -- --corpus /path/to/dispatch                 # another checkout's text
//! ```
//!
//! Every device starts from the same seeded weights and sees the same batches, so the loss curves must agree;
//! the example checks that they do, and fails on a loss that is not a finite number. Weights saved on one device,
//! with the vocabulary they were trained on, load on any other (an inference-only device too) and give the same
//! text, whatever the repository's text has become since.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use dispatch_core::device::BackendDevice;
use dispatch_core::{DType, IntTensor};
use dispatch_examples::agreement::check_agreement;
use dispatch_examples::devices::{local_devices, names_of, training_devices};
use dispatch_examples::text::{Corpus, Vocabulary};
use dispatch_examples::{DeviceBackend, DeviceLocal};
use dispatch_nn::ModuleExt;
use dispatch_nn::models::{Gpt, GptConfig};
use dispatch_nn::optim::{AdamW, Optimizer};
use dispatch_nn::record::{self, Metadata};
use indicatif::{ProgressBar, ProgressStyle};

const CONTEXT: usize = 64;
const WIDTH: usize = 64;
const HEADS: usize = 4;
const LAYERS: usize = 2;
const BATCH: usize = 16;
const STEPS: usize = 300;
const LEARNING_RATE: f32 = 3e-3;
const SEED: u64 = 7;
/// The losses of two devices at the same step, relative. Backends sum in different orders, and training carries
/// those f32 last-bit differences through every step, where they grow: the first losses agree to the last digit
/// printed, and by step 300 the gap measured here was 7.8e-4. A wrong op, a missing term or a cut graph is off by
/// far more than this from the first steps on.
const LOSS_TOLERANCE: f32 = 5e-3;
/// What the sample starts with, and how long it is.
const PROMPT: &str = "pub fn ";
const SAMPLE: usize = 240;
/// Where `--save` puts the vocabulary in the file's metadata.
const VOCABULARY_KEY: &str = "vocabulary";

struct Args {
    steps: usize,
    devices: Vec<String>,
    save: Option<PathBuf>,
    sample_from: Option<PathBuf>,
    corpus: Option<PathBuf>,
}

fn main() -> ExitCode {
    dispatch_examples::exit_code(run())
}

fn run() -> Result<(), String> {
    let args = parse_args(std::env::args().skip(1))?;
    if let Some(path) = &args.sample_from {
        return sample_from(path, &args.devices);
    }
    let corpus = Corpus::read(&Corpus::locate(args.corpus)?)?;
    let config = config_for(&corpus.vocabulary);
    let devices = training_devices(&args.devices)?;
    println!(
        "GPT: {LAYERS} layers, {HEADS} heads, width {WIDTH}, context {CONTEXT}; {} characters of {} files, {} distinct",
        corpus.ids.len(),
        corpus.files.len(),
        config.vocabulary
    );
    println!("{} steps of AdamW (lr {LEARNING_RATE}), batch {BATCH}x{CONTEXT}, on {}", args.steps, names_of(&devices));
    let mut runs = Vec::new();
    for device in &devices {
        runs.push(train(device, config, &corpus, args.steps)?);
    }
    print_curves(&devices, &runs);
    let first = &devices[0];
    let mut comparisons = Vec::new();
    for (run, device) in runs.iter().zip(&devices) {
        for (step, (loss, reference)) in run.losses.iter().zip(&runs[0].losses).enumerate() {
            comparisons.push((format!("step {step} on {device} against {first}"), *reference, *loss));
        }
    }
    let worst = check_agreement(comparisons, LOSS_TOLERANCE)?;
    println!("losses agree across devices at every step to {worst:.1e} relative (tolerance {LOSS_TOLERANCE:.0e})");

    let (model, device) = (&runs[0].model, &devices[0]);
    let held_out = held_out_loss(model, &corpus, device)?;
    println!("held-out loss on {device}: {held_out:.4}");
    let prompt = corpus.vocabulary.encode(PROMPT)?;
    let text = model.generate(&prompt, SAMPLE, 0.8, SEED).map_err(|error| error.to_string())?;
    println!("sample from {device}:\n{PROMPT}{}", corpus.vocabulary.decode(&text));
    if let Some(path) = &args.save {
        let metadata = Metadata::from([(VOCABULARY_KEY.to_owned(), corpus.vocabulary.to_string())]);
        record::save_with_metadata(model, &metadata, path).map_err(|error| error.to_string())?;
        println!("saved the weights of {device} and the vocabulary to {}", path.display());
    }
    Ok(())
}

fn config_for(vocabulary: &Vocabulary) -> GptConfig {
    GptConfig { vocabulary: vocabulary.len(), context: CONTEXT, width: WIDTH, heads: HEADS, layers: LAYERS }
}

struct TrainingRun {
    losses: Vec<f32>,
    model: Gpt<DeviceBackend>,
}

fn train(device: &DeviceLocal, config: GptConfig, corpus: &Corpus, steps: usize) -> Result<TrainingRun, String> {
    let fail = |error: dispatch_core::Error| format!("{device}: training failed: {error}");
    let mut model =
        Gpt::<DeviceBackend>::new(config, SEED, DType::F32, device).and_then(|model| model.tracked()).map_err(fail)?;
    let mut optimizer = AdamW::new(LEARNING_RATE);
    let training = 0..corpus.ids.len() * 9 / 10;
    let progress = progress_bar(device, steps);
    let (start, mut losses) = (Instant::now(), Vec::with_capacity(steps));
    for step in 0..steps {
        let (inputs, targets) = corpus.batch(training.clone(), BATCH, CONTEXT, SEED + step as u64);
        let ids = IntTensor::from_vec(inputs, [BATCH, CONTEXT], device).map_err(fail)?;
        let targets = IntTensor::from_vec(targets, [BATCH, CONTEXT], device).map_err(fail)?;
        let loss = model.loss(&ids, &targets).map_err(fail)?;
        let value = loss.to_scalar().map_err(fail)?;
        losses.push(value);
        model = optimizer.step(model, &loss.backward().map_err(fail)?).map_err(fail)?;
        match &progress {
            Some(bar) => {
                bar.set_message(format!("loss {value:.4}"));
                bar.inc(1);
            }
            None if (step + 1) % 50 == 0 || step + 1 == steps => {
                println!(
                    "{device}: step {:>4}/{steps}  loss {value:.4}  {:.1} s",
                    step + 1,
                    start.elapsed().as_secs_f64()
                );
            }
            None => {}
        }
    }
    if let Some(bar) = progress {
        bar.finish_with_message(format!(
            "loss {:.4} in {:.1} s",
            losses.last().copied().unwrap_or(f32::NAN),
            start.elapsed().as_secs_f64()
        ));
    }
    Ok(TrainingRun { losses, model })
}

/// A progress bar when stdout is a terminal; plain lines otherwise (a log, CI).
fn progress_bar(device: &DeviceLocal, steps: usize) -> Option<ProgressBar> {
    if !std::io::stdout().is_terminal() {
        return None;
    }
    let bar = ProgressBar::new(steps as u64);
    let style = ProgressStyle::with_template("{prefix:>18} [{bar:30}] {pos}/{len} {msg} ({elapsed})")
        .map(|style| style.progress_chars("=> "))
        .unwrap_or_else(|_| ProgressStyle::default_bar());
    bar.set_style(style);
    bar.set_prefix(device.to_string());
    Some(bar)
}

/// The loss curve of every device, every 25 steps, side by side.
fn print_curves(devices: &[DeviceLocal], runs: &[TrainingRun]) {
    let header: Vec<String> = devices.iter().map(|device| format!("{:>18}", device.to_string())).collect();
    println!("\n  step {}", header.join(""));
    let steps = runs.first().map_or(0, |run| run.losses.len());
    for step in (0..steps).filter(|step| step % 25 == 0 || step + 1 == steps) {
        let row: Vec<String> = runs.iter().map(|run| format!("{:>18.4}", run.losses[step])).collect();
        println!("  {:>4} {}", step, row.join(""));
    }
}

/// The mean loss of 8 batches of the last tenth of the text, which training never sees.
fn held_out_loss(model: &Gpt<DeviceBackend>, corpus: &Corpus, device: &DeviceLocal) -> Result<f32, String> {
    let held_out = corpus.ids.len() * 9 / 10..corpus.ids.len();
    let mut total = 0.0;
    for batch in 0..8 {
        let (inputs, targets) = corpus.batch(held_out.clone(), BATCH, CONTEXT, 1_000_000 + batch);
        let loss = IntTensor::from_vec(inputs, [BATCH, CONTEXT], device)
            .and_then(|ids| Ok((ids, IntTensor::from_vec(targets, [BATCH, CONTEXT], device)?)))
            .and_then(|(ids, targets)| model.loss(&ids, &targets))
            .and_then(|loss| loss.to_scalar())
            .map_err(|error| error.to_string())?;
        total += loss;
    }
    Ok(total / 8.0)
}

/// Loads saved weights and the vocabulary they were trained on, on each named device (or the best one here), and
/// prints the sample each generates. The repository's text is not read: it may have changed since.
fn sample_from(path: &Path, names: &[String]) -> Result<(), String> {
    let in_file = |error: dispatch_core::Error| format!("{}: {error}", path.display());
    let bytes = std::fs::read(path).map_err(|error| format!("{}: {error}", path.display()))?;
    let metadata = record::metadata_from_bytes(&bytes).map_err(in_file)?;
    let stored = metadata.get(VOCABULARY_KEY).ok_or_else(|| {
        format!(
            "{} holds no vocabulary (metadata key `{VOCABULARY_KEY}`), so its token ids cannot be read as text: \
             save it with this example's --save",
            path.display()
        )
    })?;
    let vocabulary = Vocabulary::parse(stored).map_err(|error| format!("{}: {error}", path.display()))?;
    let devices =
        if names.is_empty() { DeviceLocal::best_available().into_iter().collect() } else { local_devices(names)? };
    let prompt = vocabulary.encode(PROMPT)?;
    for device in devices {
        let template = Gpt::<DeviceBackend>::new(config_for(&vocabulary), 0, DType::F32, &device).map_err(in_file)?;
        let model = record::load_bytes(template, &bytes).map_err(in_file)?;
        let text = model.generate(&prompt, SAMPLE, 0.8, SEED).map_err(|error| error.to_string())?;
        println!("sample from {} on {device}:\n{PROMPT}{}\n", path.display(), vocabulary.decode(&text));
    }
    Ok(())
}

/// `--steps N`, `--device NAME` (repeatable), `--save PATH`, `--sample-from PATH`, `--corpus DIR`.
fn parse_args(mut args: impl Iterator<Item = String>) -> Result<Args, String> {
    let usage = "usage: gpt [--steps N] [--device NAME]... [--save PATH] [--sample-from PATH] [--corpus DIR]";
    let mut parsed = Args { steps: STEPS, devices: Vec::new(), save: None, sample_from: None, corpus: None };
    while let Some(arg) = args.next() {
        let mut value = |flag: &str| args.next().ok_or(format!("{flag} needs a value; {usage}"));
        match arg.as_str() {
            "--steps" => parsed.steps = value("--steps")?.parse().map_err(|error| format!("--steps: {error}"))?,
            "--device" => parsed.devices.push(value("--device")?),
            "--save" => parsed.save = Some(value("--save")?.into()),
            "--sample-from" => parsed.sample_from = Some(value("--sample-from")?.into()),
            "--corpus" => parsed.corpus = Some(value("--corpus")?.into()),
            other => return Err(format!("unknown argument `{other}`; {usage}")),
        }
    }
    if parsed.steps == 0 {
        return Err("--steps must be at least 1".to_owned());
    }
    Ok(parsed)
}
