//! The benchmark's GPT and LeNet in burn 0.22, as burn's users write them: `#[derive(Module)]` structs of
//! `burn::nn` layers, burn's tensor ops and losses, `AdamWConfig` and `GradientsParams`, on an autodiff device over
//! one of burn's CPU backends. The parameters start from dispatch's initial weights, given by their dotted names, so
//! that every design of the benchmark computes the same steps. burn 0.22 has no candle backend (the release dropped
//! it), so burn runs on its CPU backends: ndarray, and flex, which 0.22 recommends instead.

use std::collections::HashMap;

use burn::module::{Module, Param};
use burn::nn::conv::{Conv2d, Conv2dConfig};
use burn::nn::loss::CrossEntropyLossConfig;
use burn::nn::pool::{MaxPool2d, MaxPool2dConfig};
use burn::nn::{Embedding, EmbeddingConfig, LayerNorm, LayerNormConfig, Linear, LinearConfig, PaddingConfig2d};
use burn::optim::{AdamWConfig, GradientsParams, ModuleOptimizer};
use burn::tensor::activation::{gelu, relu, softmax};
use burn::tensor::{Bool, Device, Int, Tensor, TensorData};
use dispatch_nn::models::GptConfig;

/// Which of burn's CPU backends runs the steps, under burn's autodiff.
#[derive(Clone, Copy, Debug)]
pub enum BurnCpu {
    /// `burn-ndarray`, deprecated in 0.22 but still shipped.
    NdArray,
    /// `burn-flex`, 0.22's pure-Rust CPU backend.
    Flex,
}

impl BurnCpu {
    fn autodiff_device(self) -> Device {
        match self {
            // The backend the issue names; 0.22 deprecates it in favour of flex, measured beside it.
            #[allow(deprecated)]
            Self::NdArray => Device::ndarray().autodiff(),
            Self::Flex => Device::flex().autodiff(),
        }
    }
}

/// dispatch's parameters by dotted name: dims and f32 values.
pub type Weights = HashMap<String, (Vec<usize>, Vec<f32>)>;

/// The AdamW of every design: dispatch's defaults (betas 0.9/0.999, eps 1e-8, decoupled decay 0.01), which differ
/// from burn's (eps 1e-5, decay 1e-4).
fn adamw() -> ModuleOptimizer {
    AdamWConfig::new().with_beta_1(0.9).with_beta_2(0.999).with_epsilon(1e-8).with_weight_decay(0.01).init()
}

fn tensor<const D: usize>(weights: &Weights, name: &str, device: &Device) -> Tensor<D> {
    let (dims, values) = weights.get(name).unwrap_or_else(|| panic!("dispatch has no parameter {name}"));
    Tensor::from_data(TensorData::new(values.clone(), dims.clone()), device)
}

/// The trainable parameter `{path}.{name}` of dispatch's weights.
fn param<const D: usize>(weights: &Weights, path: &str, name: &str, device: &Device) -> Param<Tensor<D>> {
    Param::from_tensor(tensor(weights, &format!("{path}.{name}"), device))
}

/// The dims of `{path}.weight`, which size the layer at `path`.
fn weight_dims<const N: usize>(weights: &Weights, path: &str) -> [usize; N] {
    let name = format!("{path}.weight");
    let dims = weights.get(&name).map(|(dims, _)| dims.as_slice()).unwrap_or_default();
    <[usize; N]>::try_from(dims).unwrap_or_else(|_| panic!("{name} has dims {dims:?}, not {N} of them"))
}

fn linear(weights: &Weights, path: &str, device: &Device) -> Linear {
    let [inputs, outputs] = weight_dims(weights, path);
    let bias = weights.contains_key(&format!("{path}.bias"));
    let mut layer = LinearConfig::new(inputs, outputs).with_bias(bias).init(device);
    // dispatch keeps a linear weight as [inputs, outputs], burn's row layout.
    layer.weight = param(weights, path, "weight", device);
    layer.bias = bias.then(|| param(weights, path, "bias", device));
    layer
}

fn layer_norm(weights: &Weights, path: &str, width: usize, device: &Device) -> LayerNorm {
    let mut layer = LayerNormConfig::new(width).with_epsilon(1e-5).init(device);
    layer.gamma = param(weights, path, "gamma", device);
    layer.beta = Some(param(weights, path, "beta", device));
    layer
}

fn embedding(weights: &Weights, path: &str, device: &Device) -> Embedding {
    let [count, width] = weight_dims(weights, path);
    let mut layer = EmbeddingConfig::new(count, width).init(device);
    layer.weight = param(weights, path, "weight", device);
    layer
}

/// One AdamW step of `model` on `loss`: the loss's value and the updated model.
fn adamw_step<M: Module>(optimizer: &mut ModuleOptimizer, learning_rate: f64, model: M, loss: Tensor<1>) -> (f32, M) {
    let value = loss.clone().into_scalar::<f32>();
    let grads = GradientsParams::from_grads(loss.backward(), &model);
    (value, optimizer.step(learning_rate, model, grads))
}

#[derive(Module, Debug)]
struct Block {
    norm1: LayerNorm,
    qkv: Linear,
    proj: Linear,
    norm2: LayerNorm,
    up: Linear,
    down: Linear,
}

#[derive(Module, Debug)]
struct Gpt {
    tokens: Embedding,
    positions: Embedding,
    blocks: Vec<Block>,
    norm: LayerNorm,
    head: Linear,
}

impl Gpt {
    fn attention(&self, block: &Block, x: Tensor<3>, heads: usize) -> Tensor<3> {
        let [batch, time, width] = x.dims();
        let head_width = width / heads;
        let qkv = block.qkv.forward(x);
        let part = |index: usize| {
            qkv.clone().narrow(2, index * width, width).reshape([batch, time, heads, head_width]).swap_dims(1, 2)
        };
        let (queries, keys, values) = (part(0), part(1), part(2));
        let scores = queries.matmul(keys.swap_dims(2, 3)).mul_scalar(1.0 / (head_width as f32).sqrt());
        // `tril_mask` is true above the diagonal: the future positions.
        let future = Tensor::<2, Bool>::tril_mask([time, time], 0, &scores.device())
            .unsqueeze::<4>()
            .expand([batch, heads, time, time]);
        let weights = softmax(scores.mask_fill(future, f32::NEG_INFINITY), 3);
        block.proj.forward(weights.matmul(values).swap_dims(1, 2).reshape([batch, time, width]))
    }

    fn logits(&self, ids: Tensor<2, Int>, heads: usize) -> Tensor<3> {
        let [_, time] = ids.dims();
        let positions = Tensor::<1, Int>::arange(0..time as i64, &ids.device()).unsqueeze::<2>();
        let mut x = self.tokens.forward(ids) + self.positions.forward(positions);
        for block in &self.blocks {
            x = x.clone() + self.attention(block, block.norm1.forward(x), heads);
            x = x.clone() + block.down.forward(gelu(block.up.forward(block.norm2.forward(x))));
        }
        self.head.forward(self.norm.forward(x))
    }
}

/// One GPT training step after another in burn.
pub struct BurnGpt {
    model: Option<Gpt>,
    optimizer: ModuleOptimizer,
    config: GptConfig,
    learning_rate: f64,
    ids: Tensor<2, Int>,
    targets: Tensor<1, Int>,
}

impl BurnGpt {
    /// The GPT on `cpu` from dispatch's `weights`, training on `ids` and `targets` (`[batch, context]`, row-major).
    pub fn new(
        cpu: BurnCpu,
        config: GptConfig,
        weights: &Weights,
        (ids, targets): (Vec<i64>, Vec<i64>),
        learning_rate: f64,
    ) -> Self {
        let device = cpu.autodiff_device();
        let blocks = (0..config.layers)
            .map(|layer| {
                let path = |name: &str| format!("blocks.{layer}.{name}");
                Block {
                    norm1: layer_norm(weights, &path("norm1"), config.width, &device),
                    qkv: linear(weights, &path("attention.qkv"), &device),
                    proj: linear(weights, &path("attention.proj"), &device),
                    norm2: layer_norm(weights, &path("norm2"), config.width, &device),
                    up: linear(weights, &path("mlp.up"), &device),
                    down: linear(weights, &path("mlp.down"), &device),
                }
            })
            .collect();
        let model = Gpt {
            tokens: embedding(weights, "tokens", &device),
            positions: embedding(weights, "positions", &device),
            blocks,
            norm: layer_norm(weights, "norm", config.width, &device),
            head: linear(weights, "head", &device),
        };
        let rows = ids.len() / config.context;
        Self {
            model: Some(model),
            optimizer: adamw(),
            config,
            learning_rate,
            ids: Tensor::from_data(TensorData::new(ids, [rows, config.context]), &device),
            targets: Tensor::from_data(TensorData::new(targets, [rows * config.context]), &device),
        }
    }

    /// One AdamW step; returns the loss before it.
    pub fn step(&mut self) -> f32 {
        let model = self.model.take().expect("the model is put back after every step");
        let logits = model.logits(self.ids.clone(), self.config.heads);
        let [batch, time, vocabulary] = logits.dims();
        let loss = CrossEntropyLossConfig::new()
            .init(&logits.device())
            .forward(logits.reshape([batch * time, vocabulary]), self.targets.clone());
        let (value, model) = adamw_step(&mut self.optimizer, self.learning_rate, model, loss);
        self.model = Some(model);
        value
    }
}

#[derive(Module, Debug)]
struct LeNet {
    conv1: Conv2d,
    conv2: Conv2d,
    pool: MaxPool2d,
    fc1: Linear,
    fc2: Linear,
    fc3: Linear,
}

fn conv2d(weights: &Weights, path: &str, padding: usize, device: &Device) -> Conv2d {
    let [outputs, inputs, kernel, _] = weight_dims(weights, path);
    let mut layer = Conv2dConfig::new([inputs, outputs], [kernel, kernel])
        .with_padding(PaddingConfig2d::Explicit(padding, padding, padding, padding))
        .init(device);
    layer.weight = param(weights, path, "weight", device);
    layer.bias = Some(param(weights, path, "bias", device));
    layer
}

/// One LeNet training step after another in burn.
pub struct BurnLeNet {
    model: Option<LeNet>,
    optimizer: ModuleOptimizer,
    learning_rate: f64,
    images: Tensor<4>,
    labels: Tensor<1, Int>,
}

impl BurnLeNet {
    /// LeNet on `cpu` from dispatch's `weights`, training on `images` (`[batch, 1, 28, 28]`) and their `labels`.
    pub fn new(cpu: BurnCpu, weights: &Weights, images: Vec<f32>, labels: Vec<i64>, learning_rate: f64) -> Self {
        let device = cpu.autodiff_device();
        let batch = labels.len();
        let model = LeNet {
            conv1: conv2d(weights, "conv1", 2, &device),
            conv2: conv2d(weights, "conv2", 0, &device),
            pool: MaxPool2dConfig::new([2, 2]).with_strides([2, 2]).init(),
            fc1: linear(weights, "fc1", &device),
            fc2: linear(weights, "fc2", &device),
            fc3: linear(weights, "fc3", &device),
        };
        Self {
            model: Some(model),
            optimizer: adamw(),
            learning_rate,
            images: Tensor::from_data(TensorData::new(images, [batch, 1, 28, 28]), &device),
            labels: Tensor::from_data(TensorData::new(labels, [batch]), &device),
        }
    }

    /// One AdamW step; returns the loss before it.
    pub fn step(&mut self) -> f32 {
        let model = self.model.take().expect("the model is put back after every step");
        let x = model.pool.forward(relu(model.conv1.forward(self.images.clone())));
        let x = model.pool.forward(relu(model.conv2.forward(x)));
        let x = relu(model.fc1.forward(x.flatten::<2>(1, 3)));
        let logits = model.fc3.forward(relu(model.fc2.forward(x)));
        let loss = CrossEntropyLossConfig::new().init(&logits.device()).forward(logits, self.labels.clone());
        let (value, model) = adamw_step(&mut self.optimizer, self.learning_rate, model, loss);
        self.model = Some(model);
        value
    }
}
