//! How layers draw their initial weights.

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
