//! `y = x W + b`.

use dispatch_core::{Backend, DType, DeviceOf, Result, Tensor};

use super::init::uniform;
use crate::Module;

/// A fully connected layer: `x @ weight + bias` over the last dimension of `x`.
#[derive(Clone, Debug, Module)]
pub struct Linear<B: Backend> {
    /// `[inputs, outputs]`.
    pub weight: Tensor<B>,
    /// `[outputs]`, if the layer has one.
    pub bias: Option<Tensor<B>>,
}

impl<B: Backend> Linear<B> {
    /// Weights and bias uniform in `±1/sqrt(inputs)` (PyTorch's default), from `seed`.
    pub fn new(
        inputs: usize,
        outputs: usize,
        bias: bool,
        seed: u64,
        dtype: DType,
        device: &(impl DeviceOf<B> + ?Sized),
    ) -> Result<Self> {
        let bound = 1.0 / (inputs.max(1) as f64).sqrt();
        let weight = uniform([inputs, outputs], bound, seed, dtype, device)?;
        let bias = if bias { Some(uniform([outputs], bound, seed.wrapping_add(1), dtype, device)?) } else { None };
        Ok(Self { weight, bias })
    }

    /// `x @ weight + bias`; `x` is `[.., inputs]`, the batch dimensions in front broadcast.
    pub fn forward(&self, x: &Tensor<B>) -> Result<Tensor<B>> {
        let y = x.matmul(&self.weight)?;
        match &self.bias {
            // `y` is this function's own: the bias can be added in its memory.
            Some(bias) => y.add_into(bias),
            None => Ok(y),
        }
    }

    /// The outputs `start..start + len` of [`Linear::forward`] alone, from those columns of the weight and entries of
    /// the bias. For a layer whose outputs are used in parts (attention's queries, keys and values), the backward
    /// pass then places each part's gradient into a `[inputs, len]` block of the weight's, where narrowing the whole
    /// output placed it into a zero tensor of the output's size, one per part, and added them.
    pub fn forward_outputs(&self, x: &Tensor<B>, start: usize, len: usize) -> Result<Tensor<B>> {
        let y = x.matmul(&self.weight.narrow(1, start, len)?)?;
        match &self.bias {
            Some(bias) => y.add_into(&bias.narrow(0, start, len)?),
            None => Ok(y),
        }
    }
}
