//! dispatch's side of the comparison with PyTorch (BENCHMARKS.md, group 7): the training step of a workload file's
//! model on a device named like a user names it, through the derived enum. It first retrains the file's first steps
//! and stops unless every loss is finite and within 1e-4 (relative) of the file's, then times each of `steps` steps
//! after `warmup` more, and prints one JSON line (`ms_per_step` is the median step, which a burst of another
//! process's load moves less than the mean; `mean_ms` is the mean):
//!
//!     RAYON_NUM_THREADS=2 peers/target/release/examples/step_timing gpt.safetensors autodiff:candle 3 20
//!
//! The thread count is the environment's: rayon's pool, which both backends split their passes and matrix products
//! over, takes `RAYON_NUM_THREADS`; the run refuses to time unless it is set, and reports it. The timing thread is
//! one of the pool's (`parallel::build_pool_with_calling_thread`), and the pool's other threads poll for work while
//! it times (`parallel::keep_pool_spinning`), as in the examples' training loops.

use std::path::Path;
use std::time::Instant;

use dispatch_core::{Error, Result, parallel};
use dispatch_peers::devices::{DeviceBackend, training_device};
use dispatch_peers::exchange;
use dispatch_peers::run::WorkloadRun;

const USAGE: &str = "usage: step_timing <workload file> <autodiff device> <warmup steps> <timed steps>";

/// Relative tolerance between a retrained loss and the file's (f32, another device's order of operations).
const LOSS_TOLERANCE: f64 = 1e-4;

/// The middle of `sorted` (the mean of the two middle values for an even count); 0 for none.
fn median_of_sorted(sorted: &[f64]) -> f64 {
    match sorted.len() {
        0 => 0.0,
        len if len % 2 == 1 => sorted[len / 2],
        len => (sorted[len / 2 - 1] + sorted[len / 2]) / 2.0,
    }
}

fn count(text: &str, what: &str) -> Result<usize> {
    text.parse().map_err(|_| Error::invalid("step_timing", format!("{what} `{text}` is not a count: {USAGE}")))
}

/// The thread count rayon's pool was given through the environment.
fn threads() -> Result<usize> {
    match std::env::var("RAYON_NUM_THREADS").ok().and_then(|value| value.parse::<usize>().ok()) {
        Some(threads) if threads > 0 => Ok(threads),
        other => Err(Error::invalid(
            "step_timing",
            format!(
                "set RAYON_NUM_THREADS to a thread count (now {other:?}), so that both backends use the threads the \
                 comparison states"
            ),
        )),
    }
}

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [path, device_name, warmup, steps] = args.as_slice() else {
        return Err(Error::invalid("step_timing", USAGE));
    };
    let (warmup, steps) = (count(warmup, "warmup")?, count(steps, "timed steps")?.max(1));
    let threads = threads()?;
    // As the examples' training loops run: this thread is one of rayon's, computing a share of each pass it splits.
    parallel::build_pool_with_calling_thread(threads)?;
    // As they also do, the allocator keeps freed pages (PyTorch's process gets the same setting from `paired.py`),
    // and the pool's other threads poll for work between passes (as PyTorch's OpenMP threads spin).
    dispatch_core::memory::keep_freed_memory();
    let _spinning = parallel::keep_pool_spinning();
    let device = training_device(device_name)?;
    let exported = exchange::read::<DeviceBackend>(Path::new(path), &device)?;
    let mut run = WorkloadRun::<DeviceBackend>::new(exported.workload, &device)?;
    for (step, &expected) in exported.losses.iter().enumerate() {
        let got = f64::from(run.step()?);
        // Written so that a NaN on either side fails: every comparison with NaN is false.
        let agrees = (got - expected).abs() <= LOSS_TOLERANCE * expected.abs().max(1e-12);
        if !(got.is_finite() && expected.is_finite() && agrees) {
            return Err(Error::invalid(
                "step_timing",
                format!(
                    "loss {got} before step {} on {device_name}, the file's {expected} (relative tolerance \
                     {LOSS_TOLERANCE}): not the workload the file describes",
                    step + 1
                ),
            ));
        }
    }
    for _ in 0..warmup {
        run.step()?;
    }
    let mut step_ms = Vec::with_capacity(steps);
    for _ in 0..steps {
        let start = Instant::now();
        run.step()?;
        step_ms.push(start.elapsed().as_secs_f64() * 1e3);
    }
    let mean_ms = step_ms.iter().sum::<f64>() / steps as f64;
    step_ms.sort_by(f64::total_cmp);
    let median_ms = median_of_sorted(&step_ms);
    println!(
        "{{\"side\": \"dispatch\", \"workload\": \"{}\", \"device\": \"{device_name}\", \"threads\": {threads}, \
         \"agreed_steps\": {}, \"warmup\": {warmup}, \"steps\": {steps}, \"ms_per_step\": {median_ms:.4}, \
         \"mean_ms\": {mean_ms:.4}}}",
        exported.workload,
        exported.losses.len()
    );
    Ok(())
}
