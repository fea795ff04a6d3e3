//! Layer normalisation over the last dimension.

use dispatch_core::{Backend, DType, DeviceOf, Result, Tensor};

use crate::Module;

/// `(x - mean) / sqrt(var + eps) * gamma + beta`, the statistics taken over the last dimension (the population
/// variance, as PyTorch's `LayerNorm`).
#[derive(Clone, Debug, Module)]
pub struct LayerNorm<B: Backend> {
    /// `[width]`, ones at first.
    pub gamma: Tensor<B>,
    /// `[width]`, zeros at first.
    pub beta: Tensor<B>,
    /// Added to the variance, 1e-5 by default.
    #[module(skip)]
    pub eps: f64,
}

impl<B: Backend> LayerNorm<B> {
    /// A layer that starts as the plain normalisation: `gamma` ones, `beta` zeros, `eps` 1e-5.
    pub fn new(width: usize, dtype: DType, device: &(impl DeviceOf<B> + ?Sized)) -> Result<Self> {
        Ok(Self {
            gamma: Tensor::ones([width], dtype, device)?,
            beta: Tensor::zeros([width], dtype, device)?,
            eps: 1e-5,
        })
    }

    /// Normalises `x` (`[.., width]`) over its last dimension: the fused op, one kernel where the backend has
    /// one and one node with a closed-form backward under `Autodiff`.
    pub fn forward(&self, x: &Tensor<B>) -> Result<Tensor<B>> {
        x.layer_norm(&self.gamma, &self.beta, self.eps)
    }
}
