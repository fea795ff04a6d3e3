//! A lookup table of vectors by int id.

use dispatch_core::{Backend, DType, DeviceOf, IntTensor, Result, Tensor};

use crate::Module;

/// `weight[id]` for every id: `[.., width]` for ids of any shape.
#[derive(Clone, Debug, Module)]
pub struct Embedding<B: Backend> {
    /// `[vocabulary, width]`.
    pub weight: Tensor<B>,
}

impl<B: Backend> Embedding<B> {
    /// Normal vectors of standard deviation `std` (0.02 in GPT-2), from `seed`.
    pub fn new(
        vocabulary: usize,
        width: usize,
        std: f64,
        seed: u64,
        dtype: DType,
        device: &(impl DeviceOf<B> + ?Sized),
    ) -> Result<Self> {
        Ok(Self { weight: Tensor::random_normal([vocabulary, width], (0.0, std), seed, dtype, device)? })
    }

    /// The rows of `ids`; an id outside the vocabulary is an `Err`.
    pub fn forward(&self, ids: &IntTensor<B>) -> Result<Tensor<B>> {
        self.weight.embedding(ids)
    }
}
