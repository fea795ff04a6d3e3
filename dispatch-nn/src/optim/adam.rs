//! Adam and AdamW, as PyTorch's (bias-corrected moments; AdamW's weight decay decoupled from the gradient).

use dispatch_core::{AutodiffBackend, Gradients, Result, Tensor};

use super::optimizer::{Moments, Optimizer, no_leftovers, step_entry, take_steps, update_each};
use crate::Module;

/// Adam: `m = b1 m + (1 - b1) g`, `v = b2 v + (1 - b2) g²`, `p -= lr * m̂ / (sqrt(v̂) + eps)` with the bias-corrected
/// `m̂ = m / (1 - b1^t)`, `v̂ = v / (1 - b2^t)`; `weight_decay` adds `weight_decay * p` to `g` (an L2 penalty).
#[derive(Clone, Debug)]
pub struct Adam<B: AutodiffBackend> {
    /// The learning rate.
    pub lr: f64,
    /// The decay rates of the first and second moments (0.9, 0.999).
    pub betas: (f64, f64),
    /// Added to the denominator (1e-8).
    pub eps: f64,
    /// L2 penalty added to the gradient (0).
    pub weight_decay: f64,
    steps: u64,
    first: Moments<B>,
    second: Moments<B>,
    decoupled: bool,
}

/// AdamW: Adam whose weight decay shrinks the parameter directly, `p -= lr * weight_decay * p`, before the Adam
/// step, instead of entering the moments (Loshchilov and Hutter).
#[derive(Clone, Debug)]
pub struct AdamW<B: AutodiffBackend>(Adam<B>);

impl<B: AutodiffBackend> Adam<B> {
    /// Adam at `lr` with PyTorch's defaults.
    pub fn new(lr: f64) -> Self {
        Self {
            lr,
            betas: (0.9, 0.999),
            eps: 1e-8,
            weight_decay: 0.0,
            steps: 0,
            first: Moments::new("exp_avg"),
            second: Moments::new("exp_avg_sq"),
            decoupled: false,
        }
    }

    /// With an L2 penalty of `weight_decay` (for decoupled decay, [`AdamW`]).
    pub fn weight_decay(self, weight_decay: f64) -> Self {
        Self { weight_decay, ..self }
    }

    /// The number of steps taken.
    pub fn steps(&self) -> u64 {
        self.steps
    }
}

impl<B: AutodiffBackend> AdamW<B> {
    /// AdamW at `lr`, with PyTorch's defaults (weight decay 0.01).
    pub fn new(lr: f64) -> Self {
        Self(Adam { weight_decay: 0.01, decoupled: true, ..Adam::new(lr) })
    }

    /// With a decoupled weight decay of `weight_decay`.
    pub fn weight_decay(self, weight_decay: f64) -> Self {
        Self(Adam { weight_decay, ..self.0 })
    }

    /// The number of steps taken.
    pub fn steps(&self) -> u64 {
        self.0.steps
    }
}

impl<B: AutodiffBackend> Optimizer<B> for Adam<B> {
    fn step<M: Module<B>>(&mut self, module: M, gradients: &Gradients<B>) -> Result<M> {
        self.steps += 1;
        let (lr, (beta1, beta2), eps, weight_decay, decoupled) =
            (self.lr, self.betas, self.eps, self.weight_decay, self.decoupled);
        let t = self.steps.min(i32::MAX as u64) as i32;
        let (correction1, correction2) = (1.0 - beta1.powi(t), 1.0 - beta2.powi(t));
        let (first, second) = (&mut self.first, &mut self.second);
        update_each(module, gradients, |name, param, gradient| {
            let (param, gradient) = if weight_decay == 0.0 {
                (param, gradient)
            } else if decoupled {
                (param.mul_scalar(1.0 - lr * weight_decay)?, gradient)
            } else {
                let decayed = gradient.add(&param.mul_scalar(weight_decay)?)?;
                (param, decayed)
            };
            let blend = |previous: Option<&Tensor<B>>, beta: f64, value: Tensor<B>| match previous {
                Some(previous) => previous.mul_scalar(beta)?.add(&value.mul_scalar(1.0 - beta)?),
                None => value.mul_scalar(1.0 - beta),
            };
            let m = blend(first.get(name), beta1, gradient.clone())?;
            let v = blend(second.get(name), beta2, gradient.square()?)?;
            let denominator = v.mul_scalar(1.0 / correction2)?.sqrt()?.add_scalar(eps)?;
            let step = m.mul_scalar(lr / correction1)?.div(&denominator)?;
            first.set(name, m);
            second.set(name, v);
            param.sub(&step)
        })
    }

    fn state(&self) -> Result<Vec<(String, Tensor<B>)>> {
        let mut state: Vec<_> = self.first.named().chain(self.second.named()).collect();
        // A state with moments has a device to put the step count on; one without has taken no step.
        if let Some(device) = state.first().map(|(_, tensor)| tensor.device()) {
            state.push(step_entry::<B>(self.steps, &device)?);
        }
        Ok(state)
    }

    fn load_state(&mut self, mut state: Vec<(String, Tensor<B>)>) -> Result<()> {
        self.steps = take_steps(&mut state)?;
        self.first.load(&mut state);
        self.second.load(&mut state);
        no_leftovers(&state)
    }
}

impl<B: AutodiffBackend> Optimizer<B> for AdamW<B> {
    fn step<M: Module<B>>(&mut self, module: M, gradients: &Gradients<B>) -> Result<M> {
        self.0.step(module, gradients)
    }

    fn state(&self) -> Result<Vec<(String, Tensor<B>)>> {
        self.0.state()
    }

    fn load_state(&mut self, state: Vec<(String, Tensor<B>)>) -> Result<()> {
        self.0.load_state(state)
    }
}
