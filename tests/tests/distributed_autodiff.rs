//! Gradients through collectives under `Autodiff`: each backward rule against its closed form, and data-parallel
//! gradients against the single-device gradient of the whole batch.
//!
//! Each rank `r` computes `loss_r = sum(collective(x_r) * c_r)`, where `c_r` is a rank-specific weight, and calls
//! `backward()`. The objective is the sum of every rank's loss, so `dL/dx_r` has a closed form per collective.

use std::time::Duration;

use dispatch_core::DType;
use dispatch_core::backends::{Autodiff, Candle, CandleDevice, NdArray, NdArrayDevice};
use dispatch_core::distributed::{Communicator, ReduceOp, run_in_process};
use dispatch_core::{BaseBackend, DeviceOf, Result, Tensor};
use dispatch_nn::models::classifier::{Classifier, ClassifierGradients, one_hot};
use dispatch_tests::assert_close;

type Ad = Autodiff<NdArray>;

const TIMEOUT: Duration = Duration::from_secs(30);

/// `c_r`: the weight rank `r` puts on each output element.
fn weights(rank: usize, len: usize) -> Vec<f32> {
    (0..len).map(|i| (rank * 10 + i + 1) as f32).collect()
}

/// Runs `collective` on rank `r`'s input `[1 + r, ...]` of shape `dims`, back-propagates `loss_r`, and returns
/// `dL/dx_r` for every rank.
fn gradients(
    world_size: usize,
    dims: &'static [usize],
    collective: impl Fn(&Communicator, &Tensor<Ad>) -> Result<Tensor<Ad>> + Sync,
) -> Vec<Vec<f32>> {
    run_in_process(world_size, TIMEOUT, |comm| {
        let len = dims.iter().product();
        let x = Tensor::<Ad>::from_vec(vec![1.0 + comm.rank() as f32; len], dims, &NdArrayDevice)?.require_grad()?;
        let y = collective(&comm, &x)?;
        let c = Tensor::<Ad>::from_vec(weights(comm.rank(), y.shape().num_elements()), y.shape(), &NdArrayDevice)?;
        let gradients = y.mul(&c)?.sum()?.backward()?;
        x.grad(&gradients).expect("x is a tracked leaf the loss depends on").to_vec()
    })
    .unwrap()
    .into_values()
    .unwrap()
}

fn sum_of_weights(world_size: usize, len: usize, scale: f32) -> Vec<f32> {
    (0..len).map(|i| (0..world_size).map(|rank| weights(rank, len)[i]).sum::<f32>() * scale).collect()
}

#[test]
fn all_reduce_sum_backward_all_reduces_the_gradient() {
    let grads = gradients(3, &[2, 2], |comm, x| comm.all_reduce(x, ReduceOp::Sum));
    for grad in grads {
        assert_eq!(grad, sum_of_weights(3, 4, 1.0));
    }
}

#[test]
fn all_reduce_mean_backward_averages_the_gradient() {
    let grads = gradients(2, &[3], |comm, x| comm.all_reduce(x, ReduceOp::Mean));
    for grad in grads {
        assert_eq!(grad, sum_of_weights(2, 3, 0.5));
    }
}

#[test]
fn broadcast_backward_sums_onto_the_root_and_zeroes_the_others() {
    let grads = gradients(3, &[2], |comm, x| comm.broadcast(x, 1));
    assert_eq!(grads[0], vec![0.0, 0.0]);
    assert_eq!(grads[1], sum_of_weights(3, 2, 1.0));
    assert_eq!(grads[2], vec![0.0, 0.0]);
}

#[test]
fn all_gather_backward_reduce_scatters_the_gradient() {
    // y = [x_0; x_1] of shape [2, 2], so dL/dx_r = sum over ranks s of row r of c_s.
    let grads = gradients(2, &[1, 2], |comm, x| comm.all_gather(x));
    let total = sum_of_weights(2, 4, 1.0);
    assert_eq!(grads[0], total[0..2].to_vec());
    assert_eq!(grads[1], total[2..4].to_vec());
}

#[test]
fn reduce_scatter_backward_all_gathers_the_gradient() {
    // y_r = row r of (x_0 + x_1), so every x_s gets [c_0; c_1].
    let grads = gradients(2, &[2, 2], |comm, x| comm.reduce_scatter(x, ReduceOp::Sum));
    let gathered: Vec<f32> = weights(0, 2).into_iter().chain(weights(1, 2)).collect();
    assert_eq!(grads[0], gathered);
    assert_eq!(grads[1], gathered);
}

#[test]
fn reduce_scatter_mean_backward_divides_by_the_world_size() {
    let grads = gradients(2, &[2], |comm, x| comm.reduce_scatter(x, ReduceOp::Mean));
    let gathered: Vec<f32> = weights(0, 1).into_iter().chain(weights(1, 1)).map(|w| w / 2.0).collect();
    assert_eq!(grads, vec![gathered.clone(), gathered]);
}

#[test]
fn a_loss_averaged_across_ranks_back_propagates_into_each_ranks_own_inputs() {
    let grads = gradients(2, &[3], |comm, x| {
        let local = x.mul(x)?.sum()?;
        comm.all_reduce(&local, ReduceOp::Mean)
    });
    // y = (l_0 + l_1) / 2 on both ranks and L = c_0 y + c_1 y, so dL/dx_r = 2 x_r (c_0 + c_1) / 2.
    let factor = (weights(0, 1)[0] + weights(1, 1)[0]) / 2.0;
    assert_eq!(grads[0], vec![2.0 * 1.0 * factor; 3]);
    assert_eq!(grads[1], vec![2.0 * 2.0 * factor; 3]);
}

/// Inputs and one-hot targets.
type Batch<B> = (Tensor<Autodiff<B>>, Tensor<Autodiff<B>>);

/// A batch of 8 rows of 4 features and their one-hot labels over 3 classes, the same on every backend.
fn batch<B: BaseBackend>(device: &impl DeviceOf<Autodiff<B>>) -> Result<Batch<B>> {
    let x = Tensor::random_uniform([8, 4], (-1.0, 1.0), 7, DType::F32, device)?;
    let labels = [0, 2, 1, 1, 0, 2, 2, 1];
    Ok((x, one_hot(&labels, 3, device)?))
}

/// Gradients of a 4-5-3 MLP on the whole batch, and the mean over 2 ranks of each rank's gradients on its half.
fn whole_and_data_parallel<B: BaseBackend>(
    device: impl DeviceOf<Autodiff<B>> + Clone + Send + Sync,
) -> (ClassifierGradients<Autodiff<B>>, ClassifierGradients<Autodiff<B>>) {
    let model = Classifier::<Autodiff<B>>::new(4, 5, 3, 11, &device).unwrap();
    let (x, targets) = batch::<B>(&device).unwrap();
    let whole = model.gradients_by_autodiff(&x, &targets).unwrap();
    let shards = run_in_process(2, TIMEOUT, |comm| {
        let rows = comm.shard_range(8);
        let (x, targets) = (x.narrow(0, rows.start, rows.len())?, targets.narrow(0, rows.start, rows.len())?);
        let local = model.gradients_by_autodiff(&x, &targets)?;
        let reduced = local.tensors().map(|gradient| comm.all_reduce(gradient, ReduceOp::Mean));
        let [w1, b1, w2, b2] = reduced;
        let loss = comm.all_reduce(&Tensor::from_vec(vec![local.loss as f32], [1], &device)?, ReduceOp::Mean)?;
        Ok(ClassifierGradients::from_tensors(loss.to_scalar()?, [w1?, b1?, w2?, b2?]))
    })
    .unwrap()
    .into_values()
    .unwrap();
    (whole, shards.into_iter().next().unwrap())
}

fn assert_same_gradients<B: BaseBackend>(
    whole: &ClassifierGradients<Autodiff<B>>,
    parallel: &ClassifierGradients<Autodiff<B>>,
) {
    assert!(
        (whole.loss - parallel.loss).abs() <= 1e-6 * whole.loss.abs().max(1.0),
        "{} vs {}",
        whole.loss,
        parallel.loss
    );
    for (expected, actual) in whole.tensors().iter().zip(parallel.tensors()) {
        assert_close(&actual.to_vec().unwrap(), &expected.to_vec().unwrap(), 1e-5);
    }
}

#[test]
fn data_parallel_gradients_equal_the_whole_batch_gradients_on_ndarray() {
    let (whole, parallel) = whole_and_data_parallel::<NdArray>(NdArrayDevice);
    assert_same_gradients(&whole, &parallel);
}

#[test]
fn data_parallel_gradients_equal_the_whole_batch_gradients_on_candle() {
    let (whole, parallel) = whole_and_data_parallel::<Candle>(CandleDevice::cpu());
    assert_same_gradients(&whole, &parallel);
}
