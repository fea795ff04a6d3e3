//! Residency, counted: one training step of the main job's GPT and of LeNet makes exactly the host copies its
//! caller asks for (uploading the batch, reading the loss), on `Autodiff<Candle>`, `Autodiff<NdArray>` and the
//! autodiff variant of a derived enum, in F32 and BF16. Every other op of the step (forward, loss, backward, AdamW,
//! the attention's mask) runs on the device: on a GPU, any other copy would be a round trip per op.

use dispatch_core::backends::{Autodiff, Candle, CandleDevice, NdArray, NdArrayDevice};
use dispatch_core::{AutodiffBackend, DType, HostTransfers, IntTensor, Tensor, host_transfers};
use dispatch_nn::Module;
use dispatch_nn::loss::cross_entropy;
use dispatch_nn::models::{Gpt, GptConfig, LeNet};
use dispatch_nn::optim::{AdamW, Optimizer};
use dispatch_tests::every_variant::{Device, DeviceBackend};

const GPT: GptConfig = GptConfig { vocabulary: 12, context: 8, width: 16, heads: 2, layers: 1 };
const ROWS: usize = 2;
const IMAGES: usize = 2;

/// The copies of one GPT step after the model and optimizer exist: ids and targets up, the loss down.
fn gpt_step<B: AutodiffBackend>(dtype: DType, device: &B::Device) -> HostTransfers {
    let model = Gpt::<B>::new(GPT, 7, dtype, device).unwrap();
    let mut optimizer = AdamW::<B>::new(3e-3);
    let tokens = ROWS * GPT.context;
    let ids: Vec<i64> = (0..tokens as i64).map(|i| (i * 5 + 1) % GPT.vocabulary as i64).collect();
    let targets: Vec<i64> = ids.iter().map(|id| (id + 1) % GPT.vocabulary as i64).collect();
    let before = host_transfers();
    let ids = IntTensor::<B>::from_vec(ids, [ROWS, GPT.context], device).unwrap();
    let targets = IntTensor::<B>::from_vec(targets, [ROWS, GPT.context], device).unwrap();
    let tracked = model.map_params("", &mut |_: &str, param: Tensor<B>| param.require_grad()).unwrap();
    let loss = tracked.loss(&ids, &targets).unwrap();
    let gradients = loss.backward().unwrap();
    let _stepped = optimizer.step(tracked, &gradients).unwrap();
    let _loss = loss.to_scalar().unwrap();
    host_transfers().since(before)
}

/// The copies of one LeNet step: images and labels up, the loss down.
fn lenet_step<B: AutodiffBackend>(dtype: DType, device: &B::Device) -> HostTransfers {
    let model = LeNet::<B>::new(4, 11, dtype, device).unwrap();
    let mut optimizer = AdamW::<B>::new(2e-3);
    let pixels: Vec<f64> = (0..IMAGES * 28 * 28).map(|i| ((i * 37) % 101) as f64 / 101.0).collect();
    let labels: Vec<i64> = (0..IMAGES as i64).map(|i| i % 4).collect();
    let before = host_transfers();
    let images = Tensor::<B>::from_f64_vec(pixels, [IMAGES, 1, 28, 28], dtype, device).unwrap();
    let labels = IntTensor::<B>::from_vec(labels, [IMAGES], device).unwrap();
    let tracked = model.map_params("", &mut |_: &str, param: Tensor<B>| param.require_grad()).unwrap();
    let loss = cross_entropy(&tracked.forward(&images).unwrap(), &labels).unwrap();
    let gradients = loss.backward().unwrap();
    let _stepped = optimizer.step(tracked, &gradients).unwrap();
    let _loss = loss.to_scalar().unwrap();
    host_transfers().since(before)
}

/// The copies a step asks for itself: two uploads of `uploaded` values in all, one download of the loss.
fn asked_for(uploaded: usize) -> HostTransfers {
    HostTransfers { calls: 3, values: uploaded as u64 + 1 }
}

fn every_step_on<B: AutodiffBackend>(name: &str, device: &B::Device) {
    for dtype in [DType::F32, DType::BF16] {
        let gpt = gpt_step::<B>(dtype, device);
        assert_eq!(gpt, asked_for(2 * ROWS * GPT.context), "GPT step on {name} in {dtype}");
        let lenet = lenet_step::<B>(dtype, device);
        assert_eq!(lenet, asked_for(IMAGES * 28 * 28 + IMAGES), "LeNet step on {name} in {dtype}");
    }
}

#[test]
fn a_gpt_and_a_lenet_step_on_autodiff_candle_copy_only_the_batch_and_the_loss() {
    every_step_on::<Autodiff<Candle>>("autodiff<candle>", &CandleDevice::cpu());
}

#[test]
fn a_gpt_and_a_lenet_step_on_autodiff_ndarray_copy_only_the_batch_and_the_loss() {
    every_step_on::<Autodiff<NdArray>>("autodiff<ndarray>", &NdArrayDevice);
}

#[test]
fn a_gpt_and_a_lenet_step_through_a_derived_enum_copy_only_the_batch_and_the_loss() {
    for name in ["autodiff:candle", "autodiff:ndarray"] {
        let device: Device = name.parse().unwrap();
        every_step_on::<DeviceBackend>(name, &device);
    }
}

#[test]
fn the_count_sees_a_host_default() {
    // A host default, called as the backend of your own that keeps it would: the operand down, the result up.
    let x = Tensor::<NdArray>::from_vec(vec![1.0, 2.0, 3.0], [3], &NdArrayDevice).unwrap();
    let before = host_transfers();
    let _ = dispatch_core::backend::defaults::flip::<NdArray>(x.primitive(), vec![0]).unwrap();
    let copies = host_transfers().since(before);
    assert_eq!(copies, HostTransfers { calls: 2, values: 6 }, "the default reads the values and writes them back");
}
