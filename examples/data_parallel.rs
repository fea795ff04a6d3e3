//! Data-parallel training of the main job's transformer: a small GPT trained on one device, and on a cluster of 2
//! ranks that each take half of every batch and all-reduce their gradients. The loss curves agree.
//!
//! ```text
//! cargo run --release --example data_parallel
//! cargo run --release --example data_parallel -- cluster:autodiff:ndarray,autodiff:candle   # mixed backends
//! ```
//!
//! With Open MPI, one process per rank (the same numbers, printed by rank 0). Each rank reads the repository's
//! text from the checkout it runs in (`--corpus DIR` names another); it must be the same text on every machine.
//!
//! ```text
//! cargo build --release -p dispatch-examples --features mpi --example data_parallel
//! mpirun -np 2 target/release/examples/data_parallel [--corpus DIR]
//! ```

use std::path::PathBuf;
use std::process::ExitCode;

use dispatch_core::distributed;
use dispatch_examples::agreement::{check_agreement, relative_gap};
use dispatch_examples::checks::{Check, report};
use dispatch_examples::text::Corpus;
use dispatch_examples::{Device, train_gpt};
use dispatch_nn::models::GptConfig;

const STEPS: usize = 12;
const BATCH: usize = 8;
/// Smaller than the main job's, so that a debug build under mpirun (as CI runs it) stays quick.
const WIDTH: usize = 32;
const CONTEXT: usize = 32;
/// How far a cluster's loss may drift from the single device's, relative to the loss. Both runs compute the same
/// math; only the order of f64 additions differs (half-batch means, then a mean across ranks), which moves a loss
/// by a few ulps per step and grows a little through training. A loss that is not a finite number on either side
/// is a failure.
const TOLERANCE: f64 = 1e-4;

/// `[CLUSTER] [--corpus DIR]`: the cluster to compare (the command line's, else MPI when started by `mpirun`, else
/// 2 in-process ranks) and where the repository's text is.
fn parse_args(mut args: impl Iterator<Item = String>) -> Result<(Device, Option<PathBuf>), String> {
    let usage = "usage: data_parallel [CLUSTER] [--corpus DIR]";
    let (mut spec, mut corpus) = (None, None);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--corpus" => corpus = Some(args.next().ok_or(format!("--corpus needs a folder; {usage}"))?.into()),
            flag if flag.starts_with("--") => return Err(format!("unknown argument `{flag}`; {usage}")),
            _ if spec.is_none() => spec = Some(arg),
            _ => return Err(format!("a second cluster `{arg}`; {usage}")),
        }
    }
    let spec = match spec {
        Some(spec) => spec,
        None if distributed::mpi::ENABLED && distributed::mpi::launched_by_mpirun() => {
            "cluster:mpi:autodiff:ndarray".to_owned()
        }
        None => "cluster:autodiff:ndarray,autodiff:ndarray".to_owned(),
    };
    Ok((spec.parse().map_err(|error| format!("{error}"))?, corpus))
}

fn run() -> Result<bool, String> {
    let (cluster, corpus) = parse_args(std::env::args().skip(1))?;
    let corpus = Corpus::read(&Corpus::locate(corpus)?)?;
    let config = GptConfig { vocabulary: corpus.vocabulary.len(), context: CONTEXT, width: WIDTH, heads: 4, layers: 2 };
    let train = |rank: distributed::Rank<Device>| train_gpt(&rank, &corpus, config, BATCH, STEPS);
    let single: Device = "autodiff:ndarray".parse().map_err(|error| format!("{error}"))?;
    let reference = distributed::run(&single, train).into_values().map_err(|error| error.to_string())?;
    let reference = reference.first().ok_or("the single-device run returned nothing")?;
    let results = distributed::run(&cluster, train);
    let Some(Ok(curve)) = results.get(0) else {
        // Under MPI only rank 0 reports; the other ranks fail loudly or stay quiet.
        return results.into_values().map(|_| true).map_err(|error| error.to_string());
    };
    println!("GPT (width {WIDTH}, context {CONTEXT}), batch {BATCH}: single device `{single}` against `{cluster}`\n");
    println!("{:>5} {:>12} {:>12} {:>10}", "step", "single", "cluster", "rel. diff");
    for (step, (single, cluster)) in reference.losses.iter().zip(&curve.losses).enumerate() {
        println!("{step:>5} {single:>12.6} {cluster:>12.6} {:>10.2e}", relative_gap(*single, *cluster));
    }
    if reference.losses.len() != curve.losses.len() {
        println!(
            "\nthe curves DIFFER: {} steps on the single device, {} on the cluster",
            reference.losses.len(),
            curve.losses.len()
        );
        return Ok(false);
    }
    let steps = reference.losses.iter().zip(&curve.losses).enumerate();
    let comparisons = steps.map(|(step, (single, cluster))| (format!("step {step}"), *single, *cluster));
    match report(&[Check::agreement(agreement_claim(), check_agreement(comparisons, TOLERANCE))]) {
        Ok(()) => Ok(true),
        Err(message) => {
            println!("\nthe curves DIFFER: {message}");
            Ok(false)
        }
    }
}

/// The claim this example checks, in the words the README quotes.
fn agreement_claim() -> String {
    format!("the cluster's loss matches the single device's at every step to within {TOLERANCE:.0e} relative")
}

fn main() -> ExitCode {
    match run() {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(error) => {
            eprintln!("data_parallel: {error}");
            ExitCode::FAILURE
        }
    }
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
