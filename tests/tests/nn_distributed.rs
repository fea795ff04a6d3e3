//! Data-parallel gradients of a dispatch-nn module: each of 2 ranks takes half of a batch, and the gradients
//! `all_reduce_gradients` averages are the single device's gradients of the whole batch.

use std::time::Duration;

use dispatch_core::backends::{Autodiff, NdArray, NdArrayDevice};
use dispatch_core::distributed::{ReduceOp, run_in_process};
use dispatch_core::{DType, Tensor};
use dispatch_nn::ModuleExt;
use dispatch_nn::distributed::all_reduce_gradients;
use dispatch_nn::layers::Linear;
use dispatch_tests::close_f64;

type Ad = Autodiff<NdArray>;

/// A batch of 4 rows of 3 features, and the loss of a linear layer on a shard of its rows: the mean of the squared
/// outputs, so that the mean of the two halves' gradients is the whole batch's.
fn loss_on(rows: std::ops::Range<usize>, model: &Linear<Ad>) -> Tensor<Ad> {
    let batch = Tensor::<Ad>::from_f64_vec(
        (0..12).map(|v| f64::from(v) / 6.0 - 1.0).collect(),
        [4, 3],
        DType::F64,
        &NdArrayDevice,
    )
    .unwrap();
    let x = batch.narrow(0, rows.start, rows.len()).unwrap();
    model.forward(&x).unwrap().square().unwrap().mean().unwrap()
}

fn model() -> Linear<Ad> {
    Linear::new(3, 2, true, 5, DType::F64, &NdArrayDevice).unwrap().tracked().unwrap()
}

#[test]
fn averaged_shard_gradients_are_the_whole_batchs() {
    let whole = model();
    let gradients = loss_on(0..4, &whole).backward().unwrap();
    let expected: Vec<Vec<f64>> = whole
        .params()
        .unwrap()
        .iter()
        .map(|(_, param)| param.grad(&gradients).unwrap().to_f64_vec().unwrap())
        .collect();

    let per_rank = run_in_process(2, Duration::from_secs(30), |communicator| {
        let model = model();
        let rows = if communicator.rank() == 0 { 0..2 } else { 2..4 };
        let gradients = loss_on(rows, &model).backward()?;
        let reduced = all_reduce_gradients(&model, &gradients, &communicator, ReduceOp::Mean)?;
        model
            .params()?
            .iter()
            .map(|(_, param)| param.grad(&reduced).unwrap().to_f64_vec())
            .collect::<Result<Vec<_>, _>>()
    })
    .unwrap()
    .into_values()
    .unwrap();
    for gradients in per_rank {
        for (got, want) in gradients.iter().flatten().zip(expected.iter().flatten()) {
            // The ranks' gradients go through the collective in f32.
            assert!(close_f64(*got, *want, 1e-6), "{got} vs {want}");
        }
    }
}
