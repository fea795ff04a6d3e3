//! Layout ops of `Tensor<B>`: the same values under another shape, order or arrangement.

use super::float::Tensor;
use crate::backend::Backend;
use crate::error::{Error, RankRule, Result};
use crate::shape::Shape;

impl<B: Backend> Tensor<B> {
    /// Swaps the last two dimensions.
    pub fn transpose(&self) -> Result<Self> {
        let rank = self.shape().rank();
        if rank < 2 {
            return Err(Error::unexpected_rank("transpose", "a tensor", RankRule::AtLeast(2), &self.shape()));
        }
        self.swap_dims(rank - 2, rank - 1)
    }

    /// Swaps two dimensions (a transpose when they are the last two).
    pub fn swap_dims(&self, dim0: usize, dim1: usize) -> Result<Self> {
        Self::wrap(B::swap_dims(&self.primitive, dim0, dim1))
    }

    /// The same elements, in row-major order, under another shape with the same element count.
    pub fn reshape(&self, shape: impl Into<Shape>) -> Result<Self> {
        Self::wrap(B::reshape(&self.primitive, shape.into()))
    }

    /// `len` entries of `axis` starting at `start`.
    pub fn narrow(&self, axis: usize, start: usize, len: usize) -> Result<Self> {
        Self::wrap(B::narrow(&self.primitive, axis, start, len))
    }

    /// The dimensions reordered: dimension `i` of the result is dimension `axes[i]` of this tensor.
    pub fn permute(&self, axes: impl Into<Vec<usize>>) -> Result<Self> {
        Self::wrap(B::permute(&self.primitive, axes.into()))
    }

    /// A dimension of size 1 inserted before dimension `axis`.
    pub fn unsqueeze(&self, axis: usize) -> Result<Self> {
        Self::wrap(B::unsqueeze(&self.primitive, axis))
    }

    /// Dimension `axis`, of size 1, removed.
    pub fn squeeze(&self, axis: usize) -> Result<Self> {
        Self::wrap(B::squeeze(&self.primitive, axis))
    }

    /// Concatenation along `axis`; every other dimension must agree, and every tensor must be on one device.
    pub fn cat(tensors: &[Self], axis: usize) -> Result<Self> {
        let primitives: Vec<_> = tensors.iter().map(|tensor| tensor.primitive.clone()).collect();
        Self::wrap(B::cat(&primitives, axis))
    }

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
