//! The training steps that the comparison with PyTorch times on dispatch's side: a workload (the main job's GPT,
//! the larger GPT, or LeNet) built from the shared seed on one of dispatch's devices, stepped with AdamW.

use std::fmt;
use std::str::FromStr;

use dispatch_core::{AutodiffBackend, DType, DeviceOf, Error, IntTensor, Result, Tensor};
use dispatch_nn::ModuleExt;
use dispatch_nn::loss::cross_entropy;
use dispatch_nn::models::{Gpt, GptConfig, LeNet};
use dispatch_nn::optim::{Adam, AdamW, Optimizer};

use crate::workload::{
    GPT, GPT_BATCH, GPT_LARGE, GPT_LARGE_BATCH, LEARNING_RATE, LENET_CLASSES, LENET_IMAGES, SEED, gpt_batch_of,
    lenet_images, lenet_labels,
};

/// AdamW's decoupled weight decay in every design (PyTorch's default, and dispatch's `AdamW::new`).
pub const WEIGHT_DECAY: f64 = 0.01;

/// One of the models that the comparison trains.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Workload {
    /// The main job's GPT, batch 16x64.
    Gpt,
    /// The larger GPT (width 256, 4 layers, context 128), batch 8x128.
    GptLarge,
    /// LeNet, 32 images of 28x28.
    LeNet,
}

impl Workload {
    /// Every workload, by its name.
    pub const ALL: [(&'static str, Workload); 3] =
        [("gpt", Workload::Gpt), ("gpt-large", Workload::GptLarge), ("lenet", Workload::LeNet)];

    /// The GPT's sizes and sequences per batch; `None` for LeNet.
    pub fn gpt(self) -> Option<(GptConfig, usize)> {
        match self {
            Workload::Gpt => Some((GPT, GPT_BATCH)),
            Workload::GptLarge => Some((GPT_LARGE, GPT_LARGE_BATCH)),
            Workload::LeNet => None,
        }
    }
}

impl fmt::Display for Workload {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = Self::ALL.iter().find(|(_, workload)| workload == self).map_or("?", |(name, _)| name);
        formatter.write_str(name)
    }
}

impl FromStr for Workload {
    type Err = Error;

    fn from_str(name: &str) -> Result<Self> {
        Self::ALL.iter().find(|(known, _)| *known == name).map(|(_, workload)| *workload).ok_or_else(|| {
            let known: Vec<&str> = Self::ALL.iter().map(|(known, _)| *known).collect();
            Error::invalid("Workload::from_str", format!("no workload `{name}`; one of {}", known.join(", ")))
        })
    }
}

/// A model of a workload, its batch, and its AdamW, on backend `B`.
pub struct WorkloadRun<B: AutodiffBackend> {
    state: State<B>,
    optimizer: AdamW<B>,
}

/// A model with the batch it trains on. The model is `None` only after a step failed and dropped it.
enum State<B: AutodiffBackend> {
    Gpt { model: Option<Gpt<B>>, inputs: IntTensor<B>, targets: IntTensor<B> },
    LeNet { model: Option<LeNet<B>>, images: Tensor<B>, labels: IntTensor<B> },
}

/// A workload's initial model as the other side needs it: its parameters by dotted name (the same on every backend
/// and device) and, for a GPT, its layer norms' epsilon.
pub struct Initial<B: AutodiffBackend> {
    pub params: Vec<(String, Tensor<B>)>,
    pub layer_norm_eps: Option<f64>,
}

impl<B: AutodiffBackend> Initial<B> {
    /// `workload`'s initial model from the shared seed on `device`.
    pub fn new(workload: Workload, device: &(impl DeviceOf<B> + ?Sized)) -> Result<Self> {
        Ok(match workload.gpt() {
            Some((config, _)) => {
                let gpt = Gpt::<B>::new(config, SEED, DType::F32, device)?;
                Self { params: gpt.params()?, layer_norm_eps: Some(gpt.norm.eps) }
            }
            None => Self {
                params: LeNet::<B>::new(LENET_CLASSES, SEED, DType::F32, device)?.params()?,
                layer_norm_eps: None,
            },
        })
    }
}

impl<B: AutodiffBackend> WorkloadRun<B> {
    /// `workload`'s model from the shared seed on `device`, with AdamW at the shared learning rate.
    pub fn new(workload: Workload, device: &(impl DeviceOf<B> + ?Sized)) -> Result<Self> {
        let state = match workload.gpt() {
            Some((config, sequences)) => {
                let (inputs, targets) = gpt_batch_of(config, sequences);
                let dims = [sequences, config.context];
                State::Gpt {
                    model: Some(Gpt::new(config, SEED, DType::F32, device)?.tracked()?),
                    inputs: IntTensor::from_vec(inputs, dims, device)?,
                    targets: IntTensor::from_vec(targets, dims, device)?,
                }
            }
            None => State::LeNet {
                model: Some(LeNet::new(LENET_CLASSES, SEED, DType::F32, device)?.tracked()?),
                images: lenet_images(device)?,
                labels: IntTensor::from_vec(lenet_labels(), [LENET_IMAGES[0]], device)?,
            },
        };
        Ok(Self { state, optimizer: AdamW::new(LEARNING_RATE).weight_decay(WEIGHT_DECAY) })
    }

    /// One step: the loss, its gradients, an AdamW update. Returns the loss before the update.
    pub fn step(&mut self) -> Result<f32> {
        let lost = || Error::invalid("WorkloadRun::step", "an earlier step failed and took the model with it");
        let loss = match &mut self.state {
            State::Gpt { model, inputs, targets } => {
                let gpt = model.take().ok_or_else(lost)?;
                let loss = gpt.loss(inputs, targets)?;
                let value = loss.to_scalar()?;
                *model = Some(self.optimizer.step(gpt, &loss.backward_once()?)?);
                value
            }
            State::LeNet { model, images, labels } => {
                let lenet = model.take().ok_or_else(lost)?;
                let loss = cross_entropy(&lenet.forward(images)?, labels)?;
                let value = loss.to_scalar()?;
                *model = Some(self.optimizer.step(lenet, &loss.backward_once()?)?);
                value
            }
        };
        Ok(loss as f32) // an F32 loss: exact
    }
}

/// AdamW's hyper-parameters as dispatch's `AdamW` applies them: learning rate, betas, eps, weight decay.
pub fn adamw_hyperparameters<B: AutodiffBackend>() -> [(&'static str, f64); 5] {
    let adam = Adam::<B>::new(LEARNING_RATE);
    [
        ("learning_rate", adam.lr),
        ("beta1", adam.betas.0),
        ("beta2", adam.betas.1),
        ("eps", adam.eps),
        ("weight_decay", WEIGHT_DECAY),
    ]
}
