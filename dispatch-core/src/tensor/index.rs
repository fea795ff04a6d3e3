//! Picking from float tensors by int tensors: `index_select` and `gather`, their backwards `select_add` and
//! `scatter_add`, `embedding`, `one_hot`.

use super::float::Tensor;
use super::int_bool::IntTensor;
use crate::backend::Backend;
use crate::dtype::DType;
use crate::error::Result;

impl<B: Backend> Tensor<B> {
    /// The entries of `axis` at `indices` (1-D), in that order; an index out of range is an `Err`.
    pub fn index_select(&self, axis: usize, indices: &IntTensor<B>) -> Result<Self> {
        Self::wrap(B::index_select(self.primitive(), axis, indices.primitive()))
    }

    /// This tensor with the slices of `source` along `axis` added at `indices` (1-D; repeated indices add up).
    pub fn select_add(&self, axis: usize, indices: &IntTensor<B>, source: &Self) -> Result<Self> {
        Self::wrap(B::select_add(self.primitive(), axis, indices.primitive(), source.primitive()))
    }

    /// Along `axis`, the entry `indices` names for each position; the output has `indices`' shape.
    pub fn gather(&self, axis: usize, indices: &IntTensor<B>) -> Result<Self> {
        Self::wrap(B::gather(self.primitive(), axis, indices.primitive()))
    }

    /// This tensor with each element of `source` added along `axis` where `indices` says.
    pub fn scatter_add(&self, axis: usize, indices: &IntTensor<B>, source: &Self) -> Result<Self> {
        Self::wrap(B::scatter_add(self.primitive(), axis, indices.primitive(), source.primitive()))
    }

    /// The rows of this `[vocabulary, width]` tensor picked by `ids`: shape `ids.shape + [width]`.
    pub fn embedding(&self, ids: &IntTensor<B>) -> Result<Self> {
        Self::wrap(B::embedding(self.primitive(), ids.primitive()))
    }
}

impl<B: Backend> IntTensor<B> {
    /// `[.., classes]` rows of 0.0 with 1.0 at each index, of `dtype`; an index outside `0..classes` is an `Err`.
    pub fn one_hot(&self, classes: usize, dtype: DType) -> Result<Tensor<B>> {
        Tensor::wrap(B::one_hot(self.primitive(), classes, dtype))
    }
}
