//! Stochastic gradient descent with momentum and weight decay, as PyTorch's `SGD`.

use dispatch_core::{AutodiffBackend, Gradients, Result, Tensor};

use super::optimizer::{Moments, Optimizer, no_leftovers, update_each};
use crate::Module;

/// `d = g + weight_decay * p`; with momentum `buf = momentum * buf + d` (`buf = d` on the first step) and
/// `d = buf`; then `p -= lr * d`.
#[derive(Clone, Debug)]
pub struct Sgd<B: AutodiffBackend> {
    /// The learning rate.
    pub lr: f64,
    /// 0 for plain SGD.
    pub momentum: f64,
    /// L2 penalty added to the gradient.
    pub weight_decay: f64,
    buffers: Moments<B>,
}

impl<B: AutodiffBackend> Sgd<B> {
    /// Plain SGD at `lr`: no momentum, no weight decay.
    pub fn new(lr: f64) -> Self {
        Self { lr, momentum: 0.0, weight_decay: 0.0, buffers: Moments::new("momentum") }
    }

    /// With `momentum`.
    pub fn momentum(self, momentum: f64) -> Self {
        Self { momentum, ..self }
    }

    /// With an L2 penalty of `weight_decay`.
    pub fn weight_decay(self, weight_decay: f64) -> Self {
        Self { weight_decay, ..self }
    }
}

impl<B: AutodiffBackend> Optimizer<B> for Sgd<B> {
    fn step<M: Module<B>>(&mut self, module: M, gradients: &Gradients<B>) -> Result<M> {
        let (lr, momentum, weight_decay) = (self.lr, self.momentum, self.weight_decay);
        let buffers = &mut self.buffers;
        update_each(module, gradients, |name, param, gradient| {
            let mut direction =
                if weight_decay == 0.0 { gradient } else { gradient.add(&param.mul_scalar(weight_decay)?)? };
            if momentum != 0.0 {
                let buffer = match buffers.get(name) {
                    Some(buffer) => buffer.mul_scalar(momentum)?.add(&direction)?,
                    None => direction.clone(),
                };
                buffers.set(name, buffer.clone());
                direction = buffer;
            }
            param.sub(&direction.mul_scalar(lr)?)
        })
    }

    fn state(&self) -> Result<Vec<(String, Tensor<B>)>> {
        Ok(self.buffers.named().collect())
    }

    fn load_state(&mut self, mut state: Vec<(String, Tensor<B>)>) -> Result<()> {
        self.buffers.load(&mut state);
        no_leftovers(&state)
    }
}
