//! Activations as layers, for models that list their parts; each is the `Tensor` method of the same name.

use dispatch_core::{Backend, Result, Tensor};

/// The exact GELU, `x * Φ(x)`.
#[derive(Clone, Copy, Debug, Default)]
pub struct Gelu;

impl Gelu {
    /// `x.gelu()`.
    pub fn forward<B: Backend>(&self, x: &Tensor<B>) -> Result<Tensor<B>> {
        x.gelu()
    }
}

/// SiLU (swish), `x * sigmoid(x)`.
#[derive(Clone, Copy, Debug, Default)]
pub struct Silu;

impl Silu {
    /// `x.silu()`.
    pub fn forward<B: Backend>(&self, x: &Tensor<B>) -> Result<Tensor<B>> {
        x.silu()
    }
}
