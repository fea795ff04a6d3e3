//! Data-parallel training: the main example's MLP, data and training function, run on one device and on a
//! cluster of 2 ranks that each take half of every batch and all-reduce their gradients. The loss curves agree.
//!
//! ```text
//! cargo run --release --example data_parallel
//! cargo run --release --example data_parallel -- cluster:autodiff:ndarray,autodiff:candle   # mixed backends
//! ```
//!
//! With Open MPI, one process per rank (the same numbers, printed by rank 0):
//!
//! ```text
//! cargo build --release -p dispatch-examples --features mpi --example data_parallel
//! mpirun -np 2 target/release/examples/data_parallel
//! ```

use std::process::ExitCode;

use dispatch_core::distributed;
use dispatch_examples::agreement::{check_agreement, relative_gap};
use dispatch_examples::{CLASSES, Device, POINTS_PER_CLASS, Spirals};

const STEPS: usize = 60;
/// How far a cluster's loss may drift from the single device's, relative to the loss. Both runs compute the same
/// math; only the order of f32 additions differs (half-batch sums, then a mean across ranks), which moves a loss
/// by a few ulps per step. A loss that is not a finite number on either side is a failure.
const TOLERANCE: f32 = 1e-5;

/// The cluster to compare: the command line's, else MPI when started by `mpirun`, else 2 in-process ranks.
fn cluster() -> Result<Device, String> {
    let spec = match std::env::args().nth(1) {
        Some(spec) => spec,
        None if distributed::mpi::ENABLED && distributed::mpi::launched_by_mpirun() => {
            "cluster:mpi:autodiff:ndarray".to_owned()
        }
        None => "cluster:autodiff:ndarray,autodiff:ndarray".to_owned(),
    };
    spec.parse().map_err(|error| format!("{error}"))
}

fn run() -> Result<bool, String> {
    let data = Spirals::generate(POINTS_PER_CLASS, CLASSES);
    let train = |rank: distributed::Rank<Device>| dispatch_examples::train(&rank, &data, STEPS);
    let single: Device = "autodiff:ndarray".parse().map_err(|error| format!("{error}"))?;
    let cluster = cluster()?;
    let reference = distributed::run(&single, train).into_values().map_err(|error| error.to_string())?;
    let reference = reference.first().ok_or("the single-device run returned nothing")?;
    let results = distributed::run(&cluster, train);
    let Some(Ok(curve)) = results.get(0) else {
        // Under MPI only rank 0 reports; the other ranks fail loudly or stay quiet.
        return results.into_values().map(|_| true).map_err(|error| error.to_string());
    };
    println!("single device `{single}` against `{cluster}`, {} points, {STEPS} full-batch steps\n", data.len());
    println!("{:>5} {:>12} {:>12} {:>10}", "step", "single", "cluster", "rel. diff");
    for (step, (single, cluster)) in reference.losses.iter().zip(&curve.losses).enumerate() {
        if step % 5 == 0 || step + 1 == STEPS {
            println!("{step:>5} {single:>12.6} {cluster:>12.6} {:>10.2e}", relative_gap(*single, *cluster));
        }
    }
    println!(
        "\nafter training: loss {:.6} / {:.6}, accuracy {:.1}% / {:.1}% (single / cluster)",
        reference.final_loss,
        curve.final_loss,
        reference.accuracy * 100.0,
        curve.accuracy * 100.0
    );
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
    let finals = [("the loss after training", reference.final_loss, curve.final_loss)];
    let comparisons = comparisons.chain(finals.map(|(what, single, cluster)| (what.to_owned(), single, cluster)));
    match check_agreement(comparisons, TOLERANCE) {
        Ok(worst) => {
            println!("\nlargest relative difference {worst:.2e} (tolerance {TOLERANCE:.0e}): the curves match");
            Ok(true)
        }
        Err(message) => {
            println!("\nthe curves DIFFER: {message}");
            Ok(false)
        }
    }
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
