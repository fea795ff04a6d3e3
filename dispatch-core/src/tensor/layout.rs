//! Layout ops of `Tensor<B>` beyond reshapes and transposes: broadcasting, flipping, stacking.

use super::Tensor;
use crate::backend::Backend;
use crate::error::Result;
use crate::shape::Shape;

impl<B: Backend> Tensor<B> {
    /// This tensor broadcast to `shape` (size-1 dimensions stretch, missing ones are added in front).
    pub fn expand(&self, shape: impl Into<Shape>) -> Result<Self> {
        Self::wrap(B::expand(self.primitive(), shape.into()))
    }

    /// The entries of each of `axes` in reverse order.
    pub fn flip(&self, axes: impl Into<Vec<usize>>) -> Result<Self> {
        Self::wrap(B::flip(self.primitive(), axes.into()))
    }

    /// This tensor with entries `start..` of `axis` replaced by `source`.
    pub fn slice_assign(&self, axis: usize, start: usize, source: &Self) -> Result<Self> {
        Self::wrap(B::slice_assign(self.primitive(), axis, start, source.primitive()))
    }

    /// This tensor tiled `times[d]` times along each dimension `d`.
    pub fn repeat(&self, times: impl Into<Vec<usize>>) -> Result<Self> {
        Self::wrap(B::repeat(self.primitive(), times.into()))
    }

    /// `tensors`, of one shape, stacked along a new dimension `axis`.
    pub fn stack(tensors: &[Self], axis: usize) -> Result<Self> {
        let primitives: Vec<B::FloatTensor> = tensors.iter().map(|tensor| tensor.primitive().clone()).collect();
        Self::wrap(B::stack(&primitives, axis))
    }
}
