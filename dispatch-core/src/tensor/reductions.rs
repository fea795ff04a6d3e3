//! Reductions of `Tensor<B>` beyond sums and means: products, extremes and variance.

use super::Tensor;
use crate::backend::Backend;
use crate::error::Result;

impl<B: Backend> Tensor<B> {
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
