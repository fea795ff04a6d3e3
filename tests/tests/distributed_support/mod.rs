//! What the distributed tests share: a derived device enum with every role, and data-parallel training on it.

use dispatch_core::DType;
use dispatch_core::backends::{Candle, CandleDevice, NdArray, NdArrayDevice};
use dispatch_core::distributed::{Rank, ReduceOp};
use dispatch_core::{AutodiffDevice, Dispatch, DistributedDevice, Result, Tensor};
use dispatch_nn::models::classifier::{Classifier, one_hot};

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

pub const SAMPLES: usize = 64;
pub const STEPS: usize = 15;

/// Data-parallel training of a small MLP: each rank trains on its shard of the batch and every rank applies the
/// mean gradient. Returns the loss (averaged over ranks) before each step.
pub fn train(rank: Rank<Device>) -> Result<Vec<f64>> {
    let device = rank.device();
    let labels: Vec<usize> = (0..SAMPLES).map(|i| i % 3).collect();
    let targets = one_hot::<DeviceBackend>(&labels, 3, device)?;
    let centres = Tensor::random_normal([3, 5], (0.0, 2.0), 1, DType::F32, device)?;
    let x = targets.matmul(&centres)?.add(&Tensor::random_normal([SAMPLES, 5], (0.0, 1.0), 2, DType::F32, device)?)?;
    let rows = rank.shard_range(SAMPLES);
    let (x, targets) = (x.narrow(0, rows.start, rows.len())?, targets.narrow(0, rows.start, rows.len())?);
    let mut model = Classifier::<DeviceBackend>::new(5, 8, 3, 3, device)?;
    let mut losses = Vec::new();
    for _ in 0..STEPS {
        let local = model.gradients_by_autodiff(&x, &targets)?;
        let gradients = local.all_reduce(rank.communicator(), ReduceOp::Mean)?;
        model = model.step(&gradients, 0.5)?;
        losses.push(gradients.loss);
    }
    Ok(losses)
}
