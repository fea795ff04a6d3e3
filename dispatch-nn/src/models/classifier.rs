//! A small multi-layer perceptron classifier and what training it needs, written once against `Tensor<B>`: the
//! smallest model, which the `train` example and the tests run on every backend, autodiff or not.
//!
//! Gradients come either from reverse-mode autodiff (backends that record gradients) or from backpropagation
//! written by hand, so backends without autodiff train too, and the two can be checked against each other.

use dispatch_core::backend::HostTensor;
use dispatch_core::distributed::{Collective, Communicator, ReduceOp};
use dispatch_core::{AutodiffBackend, Backend, DType, DeviceOf, Error, RankRule, Result, Shape, Tensor};

/// `inputs -> hidden (ReLU) -> outputs` logits.
#[derive(Clone, Debug)]
pub struct Classifier<B: Backend> {
    /// The weights from the inputs to the hidden layer, `[inputs, hidden]`.
    pub w1: Tensor<B>,
    /// The bias of the hidden layer, `[hidden]`.
    pub b1: Tensor<B>,
    /// The weights from the hidden layer to the outputs, `[hidden, outputs]`.
    pub w2: Tensor<B>,
    /// The bias of the outputs, `[outputs]`.
    pub b2: Tensor<B>,
}

/// One gradient per parameter of an [`Classifier`], with the loss they were computed at.
#[derive(Clone, Debug)]
pub struct ClassifierGradients<B: Backend> {
    /// The mean cross-entropy of the batch, at the parameters the gradients were taken at.
    pub loss: f64,
    /// The gradient of [`Classifier::w1`], of the same shape.
    pub w1: Tensor<B>,
    /// The gradient of [`Classifier::b1`], of the same shape.
    pub b1: Tensor<B>,
    /// The gradient of [`Classifier::w2`], of the same shape.
    pub w2: Tensor<B>,
    /// The gradient of [`Classifier::b2`], of the same shape.
    pub b2: Tensor<B>,
}

impl<B: Backend> ClassifierGradients<B> {
    /// The gradients as tensors, in parameter order (`w1, b1, w2, b2`).
    pub fn tensors(&self) -> [&Tensor<B>; 4] {
        [&self.w1, &self.b1, &self.w2, &self.b2]
    }

    /// Rebuilds gradients from tensors in parameter order, e.g. after an all-reduce.
    pub fn from_tensors(loss: f64, [w1, b1, w2, b2]: [Tensor<B>; 4]) -> Self {
        Self { loss, w1, b1, w2, b2 }
    }

    /// The gradients and the loss reduced over every rank of `communicator`, which every rank calls alike.
    /// Data-parallel training applies `ReduceOp::Mean`: with equal shards, that is the full batch's gradients
    /// and loss, so every rank takes the same step.
    pub fn all_reduce(&self, communicator: &Communicator, op: ReduceOp) -> Result<Self> {
        let [w1, b1, w2, b2] = self.tensors().map(|gradient| communicator.all_reduce(gradient, op));
        // The loss is an `f64`, reduced as one: no rank's loss is rounded to `f32` on the way.
        let loss = HostTensor::new(vec![self.loss], [1]);
        let loss = communicator.execute(Collective::AllReduce(op), loss)?.values.get(0);
        // One value went in, so one comes back: a collective that returned none is the engine's bug, reported.
        let loss =
            loss.ok_or_else(|| Error::ElementCountMismatch { op: "all_reduce", count: 0, shape: Shape::new([1]) })?;
        Ok(Self { loss, w1: w1?, b1: b1?, w2: w2?, b2: b2? })
    }
}

impl<B: Backend> Classifier<B> {
    /// He-initialised weights and zero biases; the same seed gives the same model on every backend.
    pub fn new(
        inputs: usize,
        hidden: usize,
        outputs: usize,
        seed: u64,
        device: &(impl DeviceOf<B> + ?Sized),
    ) -> Result<Self> {
        let he = |fan_in: usize| (2.0 / fan_in as f64).sqrt();
        Ok(Self {
            w1: Tensor::random_normal([inputs, hidden], (0.0, he(inputs)), seed, DType::F32, device)?,
            b1: Tensor::zeros([hidden], DType::F32, device)?,
            w2: Tensor::random_normal([hidden, outputs], (0.0, he(hidden)), seed.wrapping_add(1), DType::F32, device)?,
            b2: Tensor::zeros([outputs], DType::F32, device)?,
        })
    }

    /// The parameters in order (`w1, b1, w2, b2`), the order of [`ClassifierGradients::tensors`].
    pub fn parameters(&self) -> [&Tensor<B>; 4] {
        [&self.w1, &self.b1, &self.w2, &self.b2]
    }

    /// Logits for a batch `x` of shape `[batch, inputs]`.
    pub fn forward(&self, x: &Tensor<B>) -> Result<Tensor<B>> {
        self.forward_with_hidden(x).map(|(_, _, logits)| logits)
    }

    /// Pre-activation, activation and logits: what backpropagation by hand reuses.
    fn forward_with_hidden(&self, x: &Tensor<B>) -> Result<(Tensor<B>, Tensor<B>, Tensor<B>)> {
        let pre = x.matmul(&self.w1)?.add_into(&self.b1)?;
        let hidden = pre.relu()?;
        let logits = hidden.matmul(&self.w2)?.add_into(&self.b2)?;
        Ok((pre, hidden, logits))
    }

    /// Mean softmax cross-entropy against one-hot `targets`.
    pub fn loss(&self, x: &Tensor<B>, targets: &Tensor<B>) -> Result<Tensor<B>> {
        cross_entropy(&self.forward(x)?, targets)
    }

    /// Gradients of the mean cross-entropy by backpropagation written out by hand: works on every backend.
    pub fn gradients_by_hand(&self, x: &Tensor<B>, targets: &Tensor<B>) -> Result<ClassifierGradients<B>> {
        let (pre, hidden, logits) = self.forward_with_hidden(x)?;
        let log_probs = logits.log_softmax(1)?;
        let loss = nll(&log_probs, targets)?.to_scalar()?;
        let batch = batch_size(x)? as f64;
        // d(mean cross-entropy)/d(logits) = (softmax - onehot) / batch
        let d_logits = log_probs.exp()?.sub(targets)?.div_scalar(batch)?;
        let d_hidden = d_logits.matmul(&self.w2.transpose()?)?;
        let d_pre = d_hidden.mask_fill(&pre.le_scalar(0.0)?, 0.0)?;
        Ok(ClassifierGradients {
            loss,
            w1: x.transpose()?.matmul(&d_pre)?,
            b1: d_pre.sum_dim(0)?.reshape(self.b1.shape())?,
            w2: hidden.transpose()?.matmul(&d_logits)?,
            b2: d_logits.sum_dim(0)?.reshape(self.b2.shape())?,
        })
    }

    /// One step of plain gradient descent.
    pub fn step(&self, gradients: &ClassifierGradients<B>, learning_rate: f64) -> Result<Self> {
        let update = |param: &Tensor<B>, grad: &Tensor<B>| param.sub(&grad.mul_scalar(learning_rate)?);
        Ok(Self {
            w1: update(&self.w1, &gradients.w1)?,
            b1: update(&self.b1, &gradients.b1)?,
            w2: update(&self.w2, &gradients.w2)?,
            b2: update(&self.b2, &gradients.b2)?,
        })
    }

    /// The fraction of rows of `x` whose largest logit is at the label.
    pub fn accuracy(&self, x: &Tensor<B>, labels: &[usize]) -> Result<f32> {
        let predicted = self.forward(x)?.argmax(1)?.to_vec()?;
        if predicted.len() != labels.len() {
            return Err(Error::ElementCountMismatch {
                op: "accuracy",
                count: labels.len(),
                shape: Shape::new([predicted.len()]),
            });
        }
        let hits = predicted.iter().zip(labels).filter(|&(&p, &label)| p as usize == label).count();
        Ok(hits as f32 / labels.len().max(1) as f32)
    }
}

impl<B: AutodiffBackend> Classifier<B> {
    /// Gradients of the mean cross-entropy by reverse-mode autodiff.
    pub fn gradients_by_autodiff(&self, x: &Tensor<B>, targets: &Tensor<B>) -> Result<ClassifierGradients<B>> {
        let tracked = Self {
            w1: self.w1.require_grad()?,
            b1: self.b1.require_grad()?,
            w2: self.w2.require_grad()?,
            b2: self.b2.require_grad()?,
        };
        let loss = tracked.loss(x, targets)?;
        let value = loss.to_scalar()?;
        let gradients = loss.backward_once()?;
        let grad = |param: &Tensor<B>| {
            // Unreachable: every parameter reaches the loss, so each has a gradient; no variant describes a graph
            // that lost one, so this one stays an `InvalidArgument`.
            param.grad(&gradients).ok_or_else(|| Error::invalid("gradients_by_autodiff", "a parameter got no gradient"))
        };
        Ok(ClassifierGradients {
            loss: value,
            w1: grad(&tracked.w1)?,
            b1: grad(&tracked.b1)?,
            w2: grad(&tracked.w2)?,
            b2: grad(&tracked.b2)?,
        })
    }
}

/// Mean softmax cross-entropy of `logits` against one-hot `targets`, both `[batch, classes]`.
pub fn cross_entropy<B: Backend>(logits: &Tensor<B>, targets: &Tensor<B>) -> Result<Tensor<B>> {
    nll(&logits.log_softmax(1)?, targets)
}

fn nll<B: Backend>(log_probs: &Tensor<B>, targets: &Tensor<B>) -> Result<Tensor<B>> {
    let batch = batch_size(log_probs)? as f64;
    log_probs.mul(targets)?.sum()?.mul_scalar(-1.0 / batch)
}

fn batch_size<B: Backend>(x: &Tensor<B>) -> Result<usize> {
    match x.dims().as_slice() {
        [0, ..] => {
            Err(Error::UnexpectedShape { op: "classifier", expected: "a batch of one row or more", shape: x.shape() })
        }
        [batch, _] => Ok(*batch),
        _ => Err(Error::UnexpectedRank {
            op: "classifier",
            what: "a batch [batch, features]",
            expected: RankRule::Exactly(2),
            shape: x.shape(),
        }),
    }
}

/// `[labels.len(), classes]` with a 1.0 at each label.
pub fn one_hot<B: Backend>(
    labels: &[usize],
    classes: usize,
    device: &(impl DeviceOf<B> + ?Sized),
) -> Result<Tensor<B>> {
    if let Some(label) = labels.iter().find(|&&label| label >= classes) {
        return Err(Error::IndexOutOfRange {
            op: "one_hot",
            index: i64::try_from(*label).unwrap_or(i64::MAX),
            len: classes,
        });
    }
    let shape = Shape::new([labels.len(), classes]);
    shape.check_tensor_shape("one_hot")?;
    let mut data = dispatch_core::memory::try_filled("one_hot", shape.num_elements(), 0.0)?;
    for (row, &label) in labels.iter().enumerate() {
        data[row * classes + label] = 1.0;
    }
    Tensor::from_vec(data, shape, device)
}
