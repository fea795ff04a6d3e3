//! What the examples share: the device enum, the data set, and one training function that runs on any device,
//! local or distributed.

pub mod agreement;
pub mod checks;
pub mod devices;
pub mod gradient_check;
mod random;
pub mod shapes;
mod spirals;
pub mod text;

#[cfg(feature = "candle")]
use dispatch_core::backends::{Candle, CandleDevice};
#[cfg(feature = "ndarray")]
use dispatch_core::backends::{NdArray, NdArrayDevice};
use dispatch_core::distributed::{Rank, ReduceOp};
use dispatch_core::{AutodiffDevice, DType, Dispatch, DistributedDevice, Result, Tensor};
use dispatch_nn::models::classifier::{Classifier, one_hot};
pub use spirals::Spirals;

/// The one source of truth: the dispatch backend (`DeviceBackend`), the local devices a rank computes on
/// (`DeviceLocal`), names, parsing and conversions are all generated from this enum.
#[derive(Clone, Debug, PartialEq, Dispatch)]
pub enum Device {
    #[cfg(feature = "candle")]
    #[backend(Candle)]
    Candle(CandleDevice),
    #[cfg(feature = "ndarray")]
    #[backend(NdArray)]
    NdArray(NdArrayDevice),
    #[autodiff]
    Autodiff(AutodiffDevice<Self>),
    #[distributed]
    Cluster(DistributedDevice<Self>),
}

/// How the examples' training loops run on the CPU, as the README tells users to start `main`: this thread joins
/// rayon's pool (it computes a share of each pass it splits), the allocator keeps the pages each step frees instead
/// of faulting them in anew every step, and the pool's other threads poll for the next pass instead of sleeping
/// between passes while the returned guard lives (a busy core each: hold it for the run, drop it after).
pub fn run_on_this_cpu() -> Result<dispatch_core::parallel::PoolSpinning> {
    dispatch_core::parallel::build_pool_with_calling_thread(0)?;
    dispatch_core::memory::keep_freed_memory();
    Ok(dispatch_core::parallel::keep_pool_spinning())
}

pub const POINTS_PER_CLASS: usize = 200;
pub const CLASSES: usize = 3;
pub const HIDDEN: usize = 64;
pub const LEARNING_RATE: f64 = 1.0;
pub const SEED: u64 = 42;

/// One training run as a rank saw it; every rank of a group sees the same numbers.
pub struct Run {
    /// The loss of the whole data set at every step, before that step's update.
    pub losses: Vec<f64>,
    /// The loss and accuracy of the whole data set after the last update.
    pub final_loss: f64,
    pub accuracy: f32,
}

/// SPMD full-batch training: each rank takes its shard of the data, and every rank applies the mean of all ranks'
/// gradients, so every rank holds the same model. On a local device this is a world of one and plain training.
/// Devices that record gradients use autodiff; the others use backpropagation written by hand.
pub fn train(rank: &Rank<Device>, data: &Spirals, steps: usize) -> Result<Run> {
    type B = DeviceBackend;
    let device = rank.device();
    let (features, labels) = data.rows(rank.shard_range(data.len()));
    let x = Tensor::<B>::from_vec(features, [labels.len(), 2], device)?;
    let targets = one_hot::<B>(labels, data.classes, device)?;
    let records_gradients = matches!(device, DeviceLocal::Autodiff(_));

    let mut model = Classifier::<B>::new(2, HIDDEN, data.classes, SEED, device)?;
    let mut losses = Vec::with_capacity(steps);
    for _ in 0..steps {
        let local = if records_gradients {
            model.gradients_by_autodiff(&x, &targets)?
        } else {
            model.gradients_by_hand(&x, &targets)?
        };
        let gradients = local.all_reduce(rank.communicator(), ReduceOp::Mean)?;
        losses.push(gradients.loss);
        model = model.step(&gradients, LEARNING_RATE)?;
    }
    let final_loss = mean_over_ranks(rank, model.loss(&x, &targets)?.to_scalar()?)?;
    let accuracy = mean_over_ranks(rank, f64::from(model.accuracy(&x, labels)?))? as f32;
    Ok(Run { losses, final_loss, accuracy })
}

fn mean_over_ranks(rank: &Rank<Device>, value: f64) -> Result<f64> {
    let value = Tensor::<DeviceBackend>::from_f64_vec(vec![value], [1], DType::F64, rank.device())?;
    rank.all_reduce(&value, ReduceOp::Mean)?.to_scalar()
}

/// One GPT training run as a rank saw it: the loss of the whole batch at every step (every rank sees the same).
pub struct GptRun {
    pub losses: Vec<f64>,
}

/// SPMD training of a GPT of `config` on `corpus`: each rank takes its shard of every batch's rows, and every rank
/// applies the mean of all ranks' gradients, so every rank holds the same model. On a local device this is a
/// world of one and plain training. The device must record gradients.
pub fn train_gpt(
    rank: &Rank<Device>,
    corpus: &text::Corpus,
    config: dispatch_nn::models::GptConfig,
    batch: usize,
    steps: usize,
) -> Result<GptRun> {
    use dispatch_core::{DType, IntTensor};
    use dispatch_nn::ModuleExt;
    use dispatch_nn::optim::{AdamW, Optimizer};

    type B = DeviceBackend;
    let device = rank.device();
    let rows = rank.shard_range(batch);
    let context = config.context;
    let mut model = dispatch_nn::models::Gpt::<B>::new(config, SEED, DType::F32, device)?.tracked()?;
    let mut optimizer = AdamW::new(3e-3);
    let training = 0..corpus.ids.len() * 9 / 10;
    let mut losses = Vec::with_capacity(steps);
    for step in 0..steps {
        // The whole batch is drawn alike on every rank; each keeps its rows.
        let (inputs, targets) = corpus.batch(training.clone(), batch, context, SEED + step as u64);
        let mine = |values: &[i64]| values[rows.start * context..rows.end * context].to_vec();
        let ids = IntTensor::from_vec(mine(&inputs), [rows.len(), context], device)?;
        let targets = IntTensor::from_vec(mine(&targets), [rows.len(), context], device)?;
        let loss = model.loss(&ids, &targets)?;
        let value = loss.to_scalar()?;
        let gradients = loss.backward_once()?;
        let gradients =
            dispatch_nn::distributed::all_reduce_gradients(&model, &gradients, rank.communicator(), ReduceOp::Mean)?;
        losses.push(mean_over_ranks(rank, value)?);
        model = optimizer.step(model, &gradients)?;
    }
    Ok(GptRun { losses })
}

/// How an example that returns `Err(message)` ends: the message on stderr, and a failing exit code.
pub fn exit_code(result: std::result::Result<(), String>) -> std::process::ExitCode {
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("{message}");
            std::process::ExitCode::FAILURE
        }
    }
}
