//! Layers: each a struct of parameters with a `forward`, created from a seed so that the same seed gives the same
//! model on every device.

mod activation;
mod attention;
mod conv;
mod dropout;
mod embedding;
mod layer_norm;
mod linear;

pub use activation::{Gelu, Silu};
pub use attention::CausalSelfAttention;
pub use conv::{AvgPool2d, Conv2d, MaxPool2d};
pub use dropout::Dropout;
pub use embedding::Embedding;
pub use layer_norm::LayerNorm;
pub use linear::Linear;

use dispatch_core::{Backend, DType, DeviceOf, Result, Shape, Tensor};

/// Uniform samples in `[-bound, bound)` of `dtype`: the initialisation of weights and biases.
pub(crate) fn uniform<B: Backend>(
    shape: impl Into<Shape>,
    bound: f64,
    seed: u64,
    dtype: DType,
    device: &(impl DeviceOf<B> + ?Sized),
) -> Result<Tensor<B>> {
    Tensor::random_uniform(shape, (-bound, bound), seed, dtype, device)
}
