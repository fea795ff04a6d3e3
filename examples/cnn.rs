//! A LeNet-sized CNN learns to tell four generated shapes apart, on every device that records gradients.
//!
//! ```text
//! cargo run --release --example cnn                                # every autodiff device found here
//! cargo run --release --example cnn -- --device autodiff:candle
//! ```
//!
//! The same seeded weights and batches on every device, so the losses must agree; then the accuracy on images
//! training never saw, which must show that the model learnt. The example fails unless both hold.

use std::process::ExitCode;
use std::time::Instant;

use dispatch_core::{DType, IntTensor, Tensor};
use dispatch_examples::agreement::check_agreement;
use dispatch_examples::checks::{Check, report};
use dispatch_examples::devices::training_devices;
use dispatch_examples::shapes::{SHAPES, images};
use dispatch_examples::{DeviceBackend, DeviceLocal};
use dispatch_nn::ModuleExt;
use dispatch_nn::loss::cross_entropy;
use dispatch_nn::models::LeNet;
use dispatch_nn::optim::{Adam, Optimizer};

const STEPS: usize = 200;
const BATCH: usize = 32;
const LEARNING_RATE: f64 = 2e-3;
const SEED: u64 = 11;
/// The CNN trains in F64: max pooling routes each gradient to one input, so in f64 a last-bit difference between
/// backends can pick another of two nearly equal inputs and send training elsewhere (3.4e-2 apart by step 107 of 120,
/// measured). In F64 such near-ties are far rarer; a wrong op is off by far more than this from the first step.
const DTYPE: DType = DType::F64;
const LOSS_TOLERANCE: f64 = 1e-4;
/// The held-out accuracy every device must reach, in percent: 97.3% measured on both backends, and a quarter is
/// chance, so a model that does not learn is far below it.
const ACCURACY_BOUND: f64 = 90.0;

fn main() -> ExitCode {
    dispatch_examples::exit_code(run())
}

fn run() -> Result<(), String> {
    // This thread joins rayon's pool, freed pages are kept, and the pool polls for work until `run` returns.
    let _spinning = dispatch_examples::run_on_this_cpu().map_err(|error| error.to_string())?;
    let devices = devices(std::env::args().skip(1))?;
    let (test_pixels, test_labels) = images(256, SEED + 1_000_000);
    println!("LeNet on 28x28 images of {SHAPES:?}: {STEPS} steps of Adam, batch {BATCH}, in {DTYPE}");
    let (mut curves, mut accuracies) = (Vec::new(), Vec::new());
    for device in &devices {
        let start = Instant::now();
        let fail = |error: dispatch_core::Error| format!("{device}: {error}");
        let mut model =
            LeNet::<DeviceBackend>::new(SHAPES.len(), SEED, DTYPE, device).and_then(|m| m.tracked()).map_err(fail)?;
        let mut optimizer = Adam::new(LEARNING_RATE);
        let mut losses = Vec::with_capacity(STEPS);
        for step in 0..STEPS {
            let (pixels, labels) = images(BATCH, SEED + step as u64);
            let x = Tensor::<DeviceBackend>::from_vec(pixels, [BATCH, 1, 28, 28], device)
                .and_then(|x| x.cast(DTYPE))
                .map_err(fail)?;
            let y = IntTensor::from_vec(labels, [BATCH], device).map_err(fail)?;
            let loss = cross_entropy(&model.forward(&x).map_err(fail)?, &y).map_err(fail)?;
            losses.push(loss.to_scalar().map_err(fail)?);
            model = optimizer.step(model, &loss.backward_once().map_err(fail)?).map_err(fail)?;
        }
        let x = Tensor::<DeviceBackend>::from_vec(test_pixels.clone(), [test_labels.len(), 1, 28, 28], device)
            .and_then(|x| x.cast(DTYPE))
            .map_err(fail)?;
        let predicted =
            model.forward(&x).and_then(|logits| logits.argmax(1)).and_then(|ids| ids.to_vec()).map_err(fail)?;
        let correct = predicted.iter().zip(&test_labels).filter(|(a, b)| a == b).count();
        let accuracy = 100.0 * correct as f64 / test_labels.len() as f64;
        println!(
            "{:<18} loss {:.4} -> {:.4}  held-out accuracy {accuracy:>5.1}%  {:>6.1} s",
            device.to_string(),
            losses[0],
            losses[STEPS - 1],
            start.elapsed().as_secs_f64()
        );
        curves.push((device.to_string(), losses));
        accuracies.push((device.to_string(), accuracy));
    }
    let (first, reference) = &curves[0];
    let comparisons = curves.iter().flat_map(|(name, losses)| {
        losses.iter().zip(reference).enumerate().map(move |(step, (loss, first_loss))| {
            (format!("step {step} on {name} against {first}"), *first_loss, *loss)
        })
    });
    report(&[
        Check::agreement(agreement_claim(), check_agreement(comparisons, LOSS_TOLERANCE)),
        Check::all_at_least(accuracy_claim(), &accuracies, ACCURACY_BOUND, |percent| format!("{percent:.1}%")),
    ])
}

/// The claims this example checks, in the words the README quotes.
fn agreement_claim() -> String {
    format!("the losses of every device agree at every step to within {LOSS_TOLERANCE:.0e} relative")
}

fn accuracy_claim() -> String {
    format!("the held-out accuracy after {STEPS} steps is at least {ACCURACY_BOUND}% on every device")
}

/// `--device NAME` (repeatable, each an autodiff device), or every autodiff device here.
fn devices(mut args: impl Iterator<Item = String>) -> Result<Vec<DeviceLocal>, String> {
    let mut names = Vec::new();
    while let Some(arg) = args.next() {
        if arg != "--device" {
            return Err(format!("unknown argument `{arg}`; usage: cnn [--device NAME]..."));
        }
        names.push(args.next().ok_or("--device needs a name")?);
    }
    training_devices(&names)
}

#[cfg(test)]
mod tests {
    use dispatch_examples::checks::missing_from_readme;

    use super::*;

    #[test]
    fn the_readme_states_every_bound_this_example_checks() {
        assert_eq!(missing_from_readme(&[agreement_claim(), accuracy_claim()]), Ok(Vec::new()));
    }
}
