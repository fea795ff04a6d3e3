//! Data-parallel training: the same MLP, the same data and the same training function, run on one device and on
//! a cluster of 2 ranks that each take half of every batch and all-reduce their gradients. The loss curves agree.
//!
//!     cargo run --release --example data_parallel
//!     cargo run --release --example data_parallel -- cluster:autodiff:ndarray,autodiff:cpu   # mixed backends
//!
//! With Open MPI, one process per rank (the same numbers, printed by rank 0):
//!     cargo build --release --features mpi --example data_parallel
//!     mpirun -np 2 target/release/examples/data_parallel

use std::process::ExitCode;

use dispatch_core::backends::{Candle, CandleDevice, NdArray, NdArrayDevice};
use dispatch_core::distributed::{self, Rank, ReduceOp};
use dispatch_core::nn::{Mlp, MlpGradients, one_hot};
use dispatch_core::{AutodiffDevice, Dispatch, DistributedDevice, Result, Tensor};

/// Every device this program can run on; `#[derive(Dispatch)]` generates `DeviceBackend` (the backend that
/// dispatches to the variant chosen at run time) and `DeviceLocal` (the devices a rank can compute on).
#[derive(Clone, Debug, PartialEq, Dispatch)]
pub enum Device {
    #[backend(Candle)]
    Cpu(CandleDevice),
    #[backend(NdArray)]
    NdArray(NdArrayDevice),
    #[autodiff]
    Autodiff(AutodiffDevice<Self>),
    #[distributed]
    Cluster(DistributedDevice<Self>),
}

const SAMPLES: usize = 256;
const FEATURES: usize = 8;
const HIDDEN: usize = 32;
const CLASSES: usize = 4;
const STEPS: usize = 60;
const LEARNING_RATE: f32 = 0.2;
const SEED: u64 = 42;
/// How far a cluster's loss may drift from the single device's, relative to the loss. Both runs compute the same
/// math; only the order of f32 additions differs (half-batch sums, then a mean across ranks), which moves a loss
/// by a few ulps: about 2e-7 here over 60 steps, on one backend or on a mix.
const TOLERANCE: f32 = 1e-5;

/// Points around one centre per class, the same on every rank and every backend (seeded, generated on the host).
fn dataset(device: &DeviceLocal) -> Result<(Tensor<DeviceBackend>, Tensor<DeviceBackend>)> {
    let labels: Vec<usize> = (0..SAMPLES).map(|i| i % CLASSES).collect();
    let targets = one_hot(&labels, CLASSES, device)?;
    let centres = Tensor::random_normal([CLASSES, FEATURES], 0.0, 0.7, SEED + 1, device)?;
    let noise = Tensor::random_normal([SAMPLES, FEATURES], 0.0, 1.0, SEED + 2, device)?;
    Ok((targets.matmul(&centres)?.add(&noise)?, targets))
}

/// SPMD training: each rank trains on its shard of the batch and all ranks apply the mean gradient, so every rank
/// holds the same model. On a local device this is a world of one, and the same code is plain training.
fn train(rank: Rank<Device>) -> Result<Vec<f32>> {
    let device = rank.device();
    let (x, targets) = dataset(device)?;
    let rows = rank.shard_range(SAMPLES);
    let (x, targets) = (x.narrow(0, rows.start, rows.len())?, targets.narrow(0, rows.start, rows.len())?);
    let mut model = Mlp::<DeviceBackend>::new(FEATURES, HIDDEN, CLASSES, SEED, device)?;
    let mut losses = Vec::with_capacity(STEPS);
    for _ in 0..STEPS {
        let local = model.gradients_by_autodiff(&x, &targets)?;
        // Equal shards, so the mean of the shards' mean gradients is the whole batch's mean gradient.
        let [w1, b1, w2, b2] = local.tensors().map(|gradient| rank.all_reduce(gradient, ReduceOp::Mean));
        let loss = rank
            .all_reduce(&Tensor::<DeviceBackend>::from_vec(vec![local.loss], [1], device)?, ReduceOp::Mean)?
            .to_scalar()?;
        model = model.step(&MlpGradients::from_tensors(loss, [w1?, b1?, w2?, b2?]), LEARNING_RATE)?;
        losses.push(loss);
    }
    Ok(losses)
}

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
    let single: Device = "autodiff:ndarray".parse().map_err(|error| format!("{error}"))?;
    let cluster = cluster()?;
    let reference = distributed::run(&single, train).into_values().map_err(|error| error.to_string())?;
    let reference = reference.first().ok_or("the single-device run returned nothing")?;
    let results = distributed::run(&cluster, train);
    let Some(Ok(curve)) = results.get(0) else {
        // Under MPI only rank 0 reports; the other ranks fail loudly or stay quiet.
        return results.into_values().map(|_| true).map_err(|error| error.to_string());
    };
    println!("single device `{single}` against `{cluster}`, {SAMPLES} samples, {STEPS} full-batch steps\n");
    println!("{:>5} {:>12} {:>12} {:>10}", "step", "single", "cluster", "rel. diff");
    let mut worst = 0.0_f32;
    for (step, (single, cluster)) in reference.iter().zip(curve).enumerate() {
        let difference = (single - cluster).abs() / single.abs().max(1e-12);
        worst = worst.max(difference);
        if step % 5 == 0 || step + 1 == STEPS {
            println!("{step:>5} {single:>12.6} {cluster:>12.6} {difference:>10.2e}");
        }
    }
    let agree = worst <= TOLERANCE && reference.len() == curve.len();
    println!(
        "\nlargest relative difference {worst:.2e} (tolerance {TOLERANCE:.0e}): the curves {}",
        if agree { "match" } else { "DIFFER" }
    );
    Ok(agree)
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
