//! The comparator of group 2: the same MLP step written directly in candle, with candle's own autodiff (`Var` and
//! `Tensor::backward`).
//!
//! It calls the candle ops our candle backend calls, in the same order, so that the forward work is the same and
//! what differs is the autodiff machinery. Log-softmax is composed from primitives (max, subtract, exp, sum, log),
//! the way candle-nn composes it, so candle differentiates through each of them.

use candle_core::{D, Device, Result, Tensor, Var};
use dispatch_core::backends::NdArray;
use dispatch_nn::models::classifier::Classifier;

/// The loss and the gradients in parameter order (`w1, b1, w2, b2`).
pub struct CandleGradients {
    pub loss: f32,
    pub gradients: [Tensor; 4],
}

impl CandleGradients {
    /// The loss and the gradients as host values.
    pub fn to_host(&self) -> Result<(f32, [Vec<f32>; 4])> {
        let host = |tensor: &Tensor| tensor.flatten_all()?.to_vec1::<f32>();
        let [w1, b1, w2, b2] = &self.gradients;
        Ok((self.loss, [host(w1)?, host(b1)?, host(w2)?, host(b2)?]))
    }
}

pub struct CandleVarMlp {
    parameters: [Var; 4],
    x: Tensor,
    targets: Tensor,
    batch: usize,
}

impl CandleVarMlp {
    /// The parameters of `weights` as candle variables, and the batch as candle tensors.
    pub fn new(weights: &Classifier<NdArray>, x: &[f32], labels: &[usize], classes: usize) -> Result<Self> {
        let device = Device::Cpu;
        let variable = |tensor: &dispatch_core::Tensor<NdArray>| {
            let values = tensor.to_vec().map_err(candle_core::Error::wrap)?;
            Var::from_vec(values, tensor.dims(), &device)
        };
        let [w1, b1, w2, b2] = weights.parameters();
        let batch = labels.len();
        let mut one_hot = vec![0f32; batch * classes];
        for (row, &label) in labels.iter().enumerate() {
            one_hot[row * classes + label] = 1.0;
        }
        Ok(Self {
            parameters: [variable(w1)?, variable(b1)?, variable(w2)?, variable(b2)?],
            x: Tensor::from_slice(x, (batch, x.len() / batch), &device)?,
            targets: Tensor::from_vec(one_hot, (batch, classes), &device)?,
            batch,
        })
    }

    /// The mean softmax cross-entropy, recording candle's graph.
    fn loss(&self) -> Result<Tensor> {
        let [w1, b1, w2, b2] = self.parameters.each_ref().map(Var::as_tensor);
        let hidden = self.x.matmul(w1)?.broadcast_add(b1)?.relu()?;
        let logits = hidden.matmul(w2)?.broadcast_add(b2)?;
        let shifted = logits.broadcast_sub(&logits.max_keepdim(D::Minus1)?)?;
        let log_probs = shifted.broadcast_sub(&shifted.exp()?.sum_keepdim(D::Minus1)?.log()?)?;
        let total = log_probs.broadcast_mul(&self.targets)?.sum_all()?.reshape(1)?;
        total.affine(-1.0 / self.batch as f64, 0.0)
    }

    pub fn forward(&self) -> Result<f32> {
        self.loss()?.flatten_all()?.to_vec1::<f32>().map(|values| values[0])
    }

    /// Forward and backward; the gradients are read out of candle's store as `gradients_by_autodiff` reads ours.
    pub fn step(&self) -> Result<CandleGradients> {
        let loss = self.loss()?;
        let store = loss.backward()?;
        let gradient = |var: &Var| {
            store.get(var.as_tensor()).cloned().ok_or_else(|| candle_core::Error::Msg("no gradient".to_owned()))
        };
        let [w1, b1, w2, b2] = &self.parameters;
        let loss = loss.flatten_all()?.to_vec1::<f32>()?[0];
        Ok(CandleGradients { loss, gradients: [gradient(w1)?, gradient(b1)?, gradient(w2)?, gradient(b2)?] })
    }
}
