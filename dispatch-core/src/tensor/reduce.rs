//! Reductions of `Tensor<B>`: over every element, or along one axis keeping it with size 1.

use super::float::Tensor;
use super::int_bool::IntTensor;
use crate::backend::Backend;
use crate::error::Result;

impl<B: Backend> Tensor<B> {
    /// Sum of every element, shape `[1]`.
    pub fn sum(&self) -> Result<Self> {
        Self::wrap(B::sum(&self.primitive))
    }

    /// Mean of every element, shape `[1]`.
    pub fn mean(&self) -> Result<Self> {
        Self::wrap(B::mean(&self.primitive))
    }

    /// Sum along `axis`, keeping it with size 1.
    pub fn sum_dim(&self, axis: usize) -> Result<Self> {
        Self::wrap(B::sum_dim(&self.primitive, axis))
    }

    /// Mean along `axis`, keeping it with size 1.
    pub fn mean_dim(&self, axis: usize) -> Result<Self> {
        Self::wrap(B::mean_dim(&self.primitive, axis))
    }

    /// `self - log(sum(exp(self)))` along `axis`, computed stably.
    pub fn log_softmax(&self, axis: usize) -> Result<Self> {
        Self::wrap(B::log_softmax(&self.primitive, axis))
    }

    /// Layer normalisation over the last axis, `(self - mean) / sqrt(var + eps) * gamma + beta` with the population
    /// variance, as PyTorch's `layer_norm`; `gamma` and `beta` are `[width]`, the last axis's size.
    pub fn layer_norm(&self, gamma: &Self, beta: &Self, eps: f64) -> Result<Self> {
        Self::wrap(B::layer_norm(&self.primitive, &gamma.primitive, &beta.primitive, eps))
    }

    /// `exp(self) / sum(exp(self))` along `axis`, computed stably.
    pub fn softmax(&self, axis: usize) -> Result<Self> {
        Self::wrap(B::softmax(&self.primitive, axis))
    }

    /// `self (gradient - Σ gradient self)` along `axis`: the gradient of [`Tensor::softmax`] at its output `self`,
    /// given the gradient of that output, in one op where the backend fuses it (as `softmax`'s backward rule uses it).
    pub fn softmax_backward(&self, gradient: &Self, axis: usize) -> Result<Self> {
        Self::wrap(B::softmax_backward(&self.primitive, &gradient.primitive, axis))
    }

    /// Attention weights of the queries `self` (`[..., queries, width]`) over `key` (`[..., keys, width]`, the same
    /// leading dims): softmax over the last axis of `scale self keyᵀ`, as `[..., queries, keys]`. With `causal`,
    /// query `i` attends to keys `0..=i` only, the others' weights exactly 0. Scaled-dot-product attention is these
    /// weights times the values: `q.attention_weights(&k, 1.0 / (width as f64).sqrt(), true)?.matmul(&v)`.
    pub fn attention_weights(&self, key: &Self, scale: f64, causal: bool) -> Result<Self> {
        Self::wrap(B::attention_weights(&self.primitive, &key.primitive, scale, causal))
    }

    /// The gradient of [`Tensor::layer_norm`] by its input `self`, given `gamma` and the gradient of the output, in
    /// one op where the backend fuses it (as `layer_norm`'s backward rule uses it).
    pub fn layer_norm_backward(&self, gamma: &Self, gradient: &Self, eps: f64) -> Result<Self> {
        Self::wrap(B::layer_norm_backward(&self.primitive, &gamma.primitive, &gradient.primitive, eps))
    }

    /// The gradients of [`Tensor::layer_norm`] by `gamma` and `beta` at the input `self`, given the gradient of the
    /// output, as the rows of one `[2, width]` tensor, in one op where the backend fuses it (as `layer_norm`'s
    /// backward rule uses it).
    pub fn layer_norm_parameter_gradients(&self, gradient: &Self, eps: f64) -> Result<Self> {
        Self::wrap(B::layer_norm_parameter_gradients(&self.primitive, &gradient.primitive, eps))
    }

    /// The mean cross-entropy of these logits (`[rows, classes]`) against int class ids `targets` (`[rows]`):
    /// `-mean(log_softmax(self)[row, target])`, shape `[1]`. A target outside `0..classes` is an `Err`.
    pub fn cross_entropy(&self, targets: &IntTensor<B>) -> Result<Self> {
        Self::wrap(B::cross_entropy(&self.primitive, targets.primitive()))
    }

    /// The index of the largest entry along `axis` (the first on ties), keeping the axis with size 1.
    pub fn argmax(&self, axis: usize) -> Result<IntTensor<B>> {
        IntTensor::wrap(B::argmax(&self.primitive, axis))
    }

    /// The largest entry along `axis`, keeping it with size 1.
    pub fn max_dim(&self, axis: usize) -> Result<Self> {
        Self::wrap(B::max_dim(self.primitive(), axis))
    }

    /// The smallest entry along `axis`, keeping it with size 1.
    pub fn min_dim(&self, axis: usize) -> Result<Self> {
        Self::wrap(B::min_dim(self.primitive(), axis))
    }

    /// The product along `axis`, keeping it with size 1.
    pub fn prod_dim(&self, axis: usize) -> Result<Self> {
        Self::wrap(B::prod_dim(self.primitive(), axis))
    }

    /// The product of every element, shape `[1]`.
    pub fn prod(&self) -> Result<Self> {
        Self::wrap(B::prod(self.primitive()))
    }

    /// The largest entry, shape `[1]`.
    pub fn max(&self) -> Result<Self> {
        Self::wrap(B::max(self.primitive()))
    }

    /// The smallest entry, shape `[1]`.
    pub fn min(&self) -> Result<Self> {
        Self::wrap(B::min(self.primitive()))
    }

    /// The variance along `axis`, keeping it with size 1, divided by `len - correction` (0: population variance,
    /// 1: unbiased estimate).
    pub fn var_dim(&self, axis: usize, correction: usize) -> Result<Self> {
        Self::wrap(B::var_dim(self.primitive(), axis, correction))
    }
}
