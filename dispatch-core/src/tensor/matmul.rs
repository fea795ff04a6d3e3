//! The matrix product.

use super::float::Tensor;
use crate::backend::Backend;
use crate::error::Result;

impl<B: Backend> Tensor<B> {
    /// The matrix product over the last two dimensions; the dimensions in front (batches) broadcast, numpy style.
    pub fn matmul(&self, other: &Self) -> Result<Self> {
        Self::wrap(B::matmul(&self.primitive, &other.primitive))
    }
}
