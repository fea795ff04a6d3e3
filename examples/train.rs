//! The main job: one device enum, derived once, trains the same MLP on every device compiled in.
//!
//! ```text
//! cargo run --release --example train                      # every device
//! cargo run --release --example train -- --device ndarray  # one (repeat --device for more)
//! ```
//!
//! Devices are picked by name through `FromStr`; an unknown name lists the compiled-in choices. Plain `candle` and
//! `ndarray` train with gradients written by hand, `autodiff:*` with reverse-mode autodiff, and `cluster` splits
//! every batch over two in-process ranks whose gradients are all-reduced. They all start from the same seeded
//! weights and see the same data, so their losses must agree; the example checks that they do.

use std::process::ExitCode;
use std::time::{Duration, Instant};

use dispatch_core::{Dispatch, Result, distributed};
use dispatch_examples::agreement::check_agreement;
use dispatch_examples::checks::{Check, report};
use dispatch_examples::{CLASSES, Device, HIDDEN, POINTS_PER_CLASS, Spirals};

const STEPS: usize = 600;
/// Backends sum in different orders (and a cluster sums shards before averaging them), so final losses differ by
/// float rounding carried through every step; a gap above this would be a real disagreement. A loss that is not a
/// finite number (training diverged, or a backend computed NaN) is a failure whatever the others say.
const LOSS_TOLERANCE: f64 = 1e-4;

struct Outcome {
    first_loss: f64,
    loss: f64,
    accuracy: f64,
    elapsed: Duration,
}

fn main() -> ExitCode {
    let devices = match parse_devices(std::env::args().skip(1)) {
        Ok(devices) => devices,
        Err(message) => {
            eprintln!("{message}");
            return ExitCode::from(2);
        }
    };
    let data = Spirals::generate(POINTS_PER_CLASS, CLASSES);
    println!("MLP 2 -> {HIDDEN} -> {CLASSES}, {} points, {STEPS} steps of full-batch gradient descent", data.len());
    let mut losses = Vec::new();
    for device in &devices {
        match train(device, &data) {
            Ok(outcome) => {
                println!(
                    "{:<34} loss {:.4} -> {:.6}  accuracy {:>5.1}%  {:>8.1} ms",
                    device.to_string(),
                    outcome.first_loss,
                    outcome.loss,
                    outcome.accuracy * 100.0,
                    outcome.elapsed.as_secs_f64() * 1e3
                );
                losses.push((device.to_string(), outcome.loss));
            }
            Err(error) => {
                eprintln!("{device}: training failed: {error}");
                return ExitCode::FAILURE;
            }
        }
    }
    report_agreement(&losses)
}

/// `--device NAME` (repeatable); no flag means every compiled-in device.
fn parse_devices(mut args: impl Iterator<Item = String>) -> Result<Vec<Device>, String> {
    let mut names = Vec::new();
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--device" => names.push(args.next().ok_or("--device needs a name")?),
            other => match other.strip_prefix("--device=") {
                Some(name) => names.push(name.to_owned()),
                None => return Err(format!("unknown argument `{other}`; usage: train [--device NAME]...")),
            },
        }
    }
    if names.is_empty() {
        names = Device::names().iter().map(|name| name.to_string()).collect();
    }
    names.iter().map(|name| name.parse::<Device>().map_err(|error| error.to_string())).collect()
}

/// Trains on any device: a local device is a world of one rank, a cluster runs one rank per member.
fn train(device: &Device, data: &Spirals) -> Result<Outcome> {
    let start = Instant::now();
    let runs = distributed::run(device, |rank| dispatch_examples::train(&rank, data, STEPS)).into_values()?;
    // Every rank ends with the same model, so the first speaks for the group.
    let run = runs.into_iter().next().ok_or_else(|| dispatch_core::Error::invalid("train", "no rank ran"))?;
    let first_loss = run.losses.first().copied().unwrap_or(f64::NAN);
    Ok(Outcome { first_loss, loss: run.final_loss, accuracy: f64::from(run.accuracy), elapsed: start.elapsed() })
}

/// Every device's final loss against the first device's (the first against itself too, so a lone device that
/// ended on NaN fails).
fn report_agreement(losses: &[(String, f64)]) -> ExitCode {
    let Some((first_name, first_loss)) = losses.first() else {
        return ExitCode::SUCCESS;
    };
    let comparisons =
        losses.iter().map(|(name, loss)| (format!("final loss on {name} against {first_name}"), *first_loss, *loss));
    dispatch_examples::exit_code(report(&[Check::agreement(
        agreement_claim(),
        check_agreement(comparisons, LOSS_TOLERANCE),
    )]))
}

/// The claim this example checks, in the words the README quotes.
fn agreement_claim() -> String {
    format!("the final losses of every device agree to within {LOSS_TOLERANCE:.0e} relative")
}

#[cfg(test)]
mod tests {
    use dispatch_examples::checks::missing_from_readme;

    use super::*;

    #[test]
    fn the_readme_states_every_bound_this_example_checks() {
        assert_eq!(missing_from_readme(&[agreement_claim()]), Ok(Vec::new()));
    }
}
