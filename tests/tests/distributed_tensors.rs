//! Collectives on tensors of the real backends, including ranks on different backends.

use std::time::Duration;

use dispatch_core::backends::{Candle, CandleDevice, NdArray, NdArrayDevice};
use dispatch_core::distributed::{Communicator, ReduceOp, run_in_process};
use dispatch_core::{Backend, DeviceOf, Result, Tensor};
use dispatch_nn::models::classifier::ClassifierGradients;

const TIMEOUT: Duration = Duration::from_secs(30);

/// Rank `rank`'s 2x3 matrix.
fn matrix<B: Backend>(rank: usize, device: &impl DeviceOf<B>) -> Result<Tensor<B>> {
    let base = rank as f32 * 10.0;
    Tensor::from_vec((0..6).map(|i| base + i as f32).collect(), [2, 3], device)
}

/// Every collective on this rank's matrix, as host values and dims.
fn all_collectives<B: Backend>(comm: &Communicator, device: &impl DeviceOf<B>) -> Result<Vec<(Vec<f32>, Vec<usize>)>> {
    let input = matrix::<B>(comm.rank(), device)?;
    let outputs = [
        comm.all_reduce(&input, ReduceOp::Sum)?,
        comm.all_reduce(&input, ReduceOp::Mean)?,
        comm.broadcast(&input, 1)?,
        comm.all_gather(&input)?,
        comm.reduce_scatter(&input, ReduceOp::Sum)?,
    ];
    outputs.iter().map(|tensor| Ok((tensor.to_vec()?, tensor.dims()))).collect()
}

fn expected(rank: usize) -> Vec<(Vec<f32>, Vec<usize>)> {
    let (a, b): (Vec<f32>, Vec<f32>) = ((0..6).map(|i| i as f32).collect(), (0..6).map(|i| 10.0 + i as f32).collect());
    let sum: Vec<f32> = a.iter().zip(&b).map(|(x, y)| x + y).collect();
    let mean: Vec<f32> = sum.iter().map(|value| value / 2.0).collect();
    let gathered: Vec<f32> = a.iter().chain(&b).copied().collect();
    let part = sum[rank * 3..rank * 3 + 3].to_vec();
    vec![(sum, vec![2, 3]), (mean, vec![2, 3]), (b.clone(), vec![2, 3]), (gathered, vec![4, 3]), (part, vec![1, 3])]
}

fn assert_every_rank_got_expected(results: Vec<Vec<(Vec<f32>, Vec<usize>)>>) {
    assert_eq!(results.len(), 2);
    for (rank, outputs) in results.into_iter().enumerate() {
        assert_eq!(outputs, expected(rank));
    }
}

#[test]
fn collectives_on_ndarray_tensors() {
    let results = run_in_process(2, TIMEOUT, |comm| all_collectives::<NdArray>(&comm, &NdArrayDevice))
        .unwrap()
        .into_values()
        .unwrap();
    assert_every_rank_got_expected(results);
}

#[test]
fn collectives_on_candle_tensors() {
    let results = run_in_process(2, TIMEOUT, |comm| all_collectives::<Candle>(&comm, &CandleDevice::cpu()))
        .unwrap()
        .into_values()
        .unwrap();
    assert_every_rank_got_expected(results);
}

#[test]
fn ranks_on_different_backends_reduce_together() {
    let results = run_in_process(2, TIMEOUT, |comm| {
        if comm.rank() == 0 {
            all_collectives::<NdArray>(&comm, &NdArrayDevice)
        } else {
            all_collectives::<Candle>(&comm, &CandleDevice::cpu())
        }
    })
    .unwrap()
    .into_values()
    .unwrap();
    assert_every_rank_got_expected(results);
}

#[test]
fn collective_outputs_stay_on_the_input_device() {
    let devices = run_in_process(2, TIMEOUT, |comm| {
        let input = matrix::<Candle>(comm.rank(), &CandleDevice::cpu())?;
        Ok(comm.all_reduce(&input, ReduceOp::Sum)?.device())
    })
    .unwrap()
    .into_values()
    .unwrap();
    assert_eq!(devices, vec![CandleDevice::cpu(); 2]);
}

/// Gradients of loss `scale`, parameter `i` filled with `scale * (i + 1)`.
fn scaled_gradients(scale: f32) -> Result<ClassifierGradients<NdArray>> {
    let filled = |index: usize, dims: &[usize]| {
        Tensor::<NdArray>::from_vec(vec![scale * (index + 1) as f32; dims.iter().product()], dims, &NdArrayDevice)
    };
    let tensors = [filled(0, &[2, 3])?, filled(1, &[3])?, filled(2, &[3, 2])?, filled(3, &[2])?];
    Ok(ClassifierGradients::from_tensors(f64::from(scale), tensors))
}

/// The loss, and every gradient's values and dims.
type HostGradients = (f64, Vec<(Vec<f32>, Vec<usize>)>);

fn host_values(gradients: &ClassifierGradients<NdArray>) -> Result<HostGradients> {
    let tensors =
        gradients.tensors().iter().map(|tensor| Ok((tensor.to_vec()?, tensor.dims()))).collect::<Result<_>>()?;
    Ok((gradients.loss, tensors))
}

#[test]
fn mlp_gradients_reduce_every_gradient_and_the_loss_over_the_ranks() {
    // Ranks scaled 1, 2 and 3: the mean is scaled 2, the sum 6.
    let results = run_in_process(3, TIMEOUT, |comm| {
        let local = scaled_gradients(comm.rank() as f32 + 1.0)?;
        let mean = host_values(&local.all_reduce(&comm, ReduceOp::Mean)?)?;
        let sum = host_values(&local.all_reduce(&comm, ReduceOp::Sum)?)?;
        Ok([mean, sum])
    })
    .unwrap()
    .into_values()
    .unwrap();
    let expected =
        [host_values(&scaled_gradients(2.0).unwrap()).unwrap(), host_values(&scaled_gradients(6.0).unwrap()).unwrap()];
    for outputs in results {
        assert_eq!(outputs, expected);
    }
}
