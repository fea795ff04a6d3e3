//! Adam and AdamW, as PyTorch's (bias-corrected moments; AdamW's weight decay decoupled from the gradient).

use std::collections::BTreeMap;

use dispatch_core::backend::AdamStep;
use dispatch_core::{AutodiffBackend, Error, Gradients, Result, Tensor};

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
    /// Each parameter's first and second moments, as the rows of one `[2, ...]` tensor: what `Tensor::adam_step`
    /// takes, and a view of the rows it returned, so a step copies nothing.
    moments: BTreeMap<String, Tensor<B>>,
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
            moments: BTreeMap::new(),
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
    /// Each parameter in one `Tensor::adam_step` (one pass where the backend fuses it, fourteen ops where it does
    /// not), its moments starting at zero as PyTorch's do.
    fn step<M: Module<B>>(&mut self, module: M, gradients: &Gradients<B>) -> Result<M> {
        self.steps += 1;
        let options = AdamStep {
            lr: self.lr,
            betas: self.betas,
            eps: self.eps,
            weight_decay: self.weight_decay,
            decoupled: self.decoupled,
            step: self.steps,
        };
        let moments = &mut self.moments;
        update_each(module, gradients, |name, param, gradient| {
            let previous = match moments.get(name) {
                Some(previous) => previous.clone(),
                None => Tensor::zeros([&[2usize][..], &param.dims()].concat(), param.dtype(), &param.device())?,
            };
            let rows = param.adam_step(&gradient, &previous, options)?;
            moments.insert(name.to_owned(), rows.narrow(0, 1, 2)?);
            rows.narrow(0, 0, 1)?.reshape(param.shape())
        })
    }

    /// The moments under PyTorch's names, `<param>.exp_avg` and `<param>.exp_avg_sq`, and the step count.
    fn state(&self) -> Result<Vec<(String, Tensor<B>)>> {
        let mut state = Vec::new();
        for (row, moment) in [FIRST, SECOND].into_iter().enumerate() {
            for (param, moments) in &self.moments {
                let row = moments.narrow(0, row, 1)?.reshape(moments.dims().get(1..).unwrap_or_default())?;
                state.push((format!("{param}.{moment}"), row));
            }
        }
        // A state with moments has a device to put the step count on; one without has taken no step.
        if let Some(device) = state.first().map(|(_, tensor)| tensor.device()) {
            state.push(step_entry::<B>(self.steps, &device)?);
        }
        Ok(state)
    }

    fn load_state(&mut self, mut state: Vec<(String, Tensor<B>)>) -> Result<()> {
        let steps = take_steps(&mut state)?;
        let (mut first, mut second) = (Moments::new(FIRST), Moments::new(SECOND));
        first.load(&mut state);
        second.load(&mut state);
        no_leftovers(&state)?;
        let (first, mut second) = (first.into_by_param(), second.into_by_param());
        let mut moments = BTreeMap::new();
        let mut missing = Vec::new();
        for (param, first) in first {
            match second.remove(&param) {
                Some(second) => {
                    moments.insert(param, Tensor::stack(&[first, second], 0)?);
                }
                None => missing.push(format!("{param}.{SECOND}")),
            }
        }
        missing.extend(second.into_keys().map(|param| format!("{param}.{FIRST}")));
        if !missing.is_empty() {
            return Err(Error::RecordMismatch { op: "load_state", missing, unexpected: Vec::new() });
        }
        (self.steps, self.moments) = (steps, moments);
        Ok(())
    }
}

/// The names PyTorch saves the moments under.
const FIRST: &str = "exp_avg";
const SECOND: &str = "exp_avg_sq";

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
