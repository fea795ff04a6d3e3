//! Library code written once over `D: Dispatch` compiles and runs on every derived enum: with or without
//! `#[distributed]` and `#[autodiff]` variants, through a routed device, a `Rank<D>`, a `distributed::run` body,
//! and the autodiff backend where the enum has one.

use dispatch_core::backends::{Candle, CandleDevice, NdArray, NdArrayDevice};
use dispatch_core::device::BackendDevice;
use dispatch_core::distributed::{self, Rank, ReduceOp};
use dispatch_core::{AutodiffBackend, AutodiffDevice, Dispatch, DistributedDevice, Result, Route, Tensor};
use dispatch_core::DType;

#[derive(Clone, Debug, PartialEq, Dispatch)]
pub enum Local {
    #[backend(Candle)]
    Cpu(CandleDevice),
    #[backend(NdArray)]
    NdArray(NdArrayDevice),
}

#[derive(Clone, Debug, PartialEq, Dispatch)]
pub enum Everything {
    #[backend(Candle)]
    Cpu(CandleDevice),
    #[backend(NdArray)]
    NdArray(NdArrayDevice),
    #[autodiff]
    Autodiff(AutodiffDevice<Self>),
    #[distributed]
    Cluster(DistributedDevice<Self>),
}

/// The example: a single-backend op on a rank's device.
fn zeros<D: Dispatch>(rank: &Rank<D>) -> Result<Tensor<D::Backend>> {
    Tensor::zeros([2], DType::F32, rank.device())
}

/// A routed device of any enum takes single-backend ops, and moves a tensor.
fn ones_on<D: Dispatch>(device: &D) -> Result<Vec<f32>> {
    match device.route() {
        Route::Local(local) => {
            let ones = Tensor::<D::Backend>::ones([2], DType::F32, &local)?;
            ones.to_device(&local)?.add(&ones)?.to_vec()
        }
        Route::Distributed(_) => Ok(Vec::new()),
    }
}

/// A `distributed::run` body generic over the enum: one rank on a local device, every rank on a cluster.
fn mean_of_zeros<D: Dispatch>(device: &D) -> Result<Vec<Vec<f32>>> {
    distributed::run(device, |rank| rank.all_reduce(&zeros(&rank)?.add_scalar(1.0)?, ReduceOp::Mean)?.to_vec())
        .into_values()
}

/// Gradients through the autodiff backend, generic over any enum with an `#[autodiff]` variant.
fn gradient<D: Dispatch>(rank: &Rank<D>) -> Result<Vec<f32>>
where
    D::Backend: AutodiffBackend,
{
    let x = Tensor::<D::Backend>::from_vec(vec![1.0, 2.0], [2], rank.device())?.require_grad()?;
    let loss = rank.all_reduce(&x.mul(&x)?.sum()?, ReduceOp::Mean)?;
    let gradients = loss.backward()?;
    match x.grad(&gradients) {
        Some(grad) => grad.to_vec(),
        None => Ok(Vec::new()),
    }
}

/// The first device available of any enum.
fn best<D: Dispatch>() -> Option<String> {
    D::best_available().map(|device| device.to_string())
}

fn main() {
    assert_eq!(ones_on(&Local::NdArray(NdArrayDevice)).unwrap(), vec![2.0, 2.0]);
    assert_eq!(ones_on(&"autodiff:cpu".parse::<Everything>().unwrap()).unwrap(), vec![2.0, 2.0]);
    assert_eq!(mean_of_zeros(&Local::Cpu(CandleDevice::cpu())).unwrap(), vec![vec![1.0, 1.0]]);
    let cluster: Everything = "cluster:cpu,ndarray".parse().unwrap();
    assert_eq!(mean_of_zeros(&cluster).unwrap(), vec![vec![1.0, 1.0], vec![1.0, 1.0]]);
    let trained: Everything = "cluster:autodiff:cpu,autodiff:ndarray".parse().unwrap();
    let gradients = distributed::run(&trained, |rank| gradient(&rank)).into_values().unwrap();
    assert_eq!(gradients, vec![vec![2.0, 4.0], vec![2.0, 4.0]]);
    assert_eq!(best::<Local>().as_deref(), Some("cpu"));
    assert_eq!(best::<Everything>(), <Local as BackendDevice>::best_available().map(|device| device.to_string()));
}
