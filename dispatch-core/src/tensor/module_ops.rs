//! Convolution and pooling on `Tensor<B>`, over `[batch, channels, height, width]`.

use super::{IntTensor, Tensor};
use crate::backend::{Backend, Conv2dOptions, Window2d};
use crate::error::Result;

impl<B: Backend> Tensor<B> {
    /// The 2-D convolution of this `[n, c, h, w]` tensor by `weight` (`[out, c / groups, kh, kw]`), without a bias.
    pub fn conv2d(&self, weight: &Self, options: Conv2dOptions) -> Result<Self> {
        Self::wrap(B::conv2d(self.primitive(), weight.primitive(), options))
    }

    /// The 1-D convolution of this `[n, c, length]` tensor by `weight` (`[out, c / groups, kernel]`); the second
    /// entries of `options` apply.
    pub fn conv1d(&self, weight: &Self, options: Conv2dOptions) -> Result<Self> {
        Self::wrap(B::conv1d(self.primitive(), weight.primitive(), options))
    }

    /// The transposed 2-D convolution of this `[n, c, h, w]` tensor by `weight` (`[c, out / groups, kh, kw]`).
    pub fn conv_transpose2d(&self, weight: &Self, options: Conv2dOptions) -> Result<Self> {
        Self::wrap(B::conv_transpose2d(self.primitive(), weight.primitive(), options))
    }

    /// The largest value of each window. Under autodiff its gradient goes to each window's first maximum.
    pub fn max_pool2d(&self, window: Window2d) -> Result<Self> {
        Self::wrap(B::max_pool2d(self.primitive(), window))
    }

    /// [`Tensor::max_pool2d`] and where each maximum is: its flat index `row * width + column` in the input's plane
    /// (the first on ties), as an int tensor of the output's shape.
    pub fn max_pool2d_with_indices(&self, window: Window2d) -> Result<(Self, IntTensor<B>)> {
        let pooled = self.max_pool2d(window)?;
        Ok((pooled, IntTensor::wrap(B::max_pool2d_indices(self.primitive(), window))?))
    }

    /// The mean of each window, padding counted.
    pub fn avg_pool2d(&self, window: Window2d) -> Result<Self> {
        Self::wrap(B::avg_pool2d(self.primitive(), window))
    }

    /// Means over a grid of `output` (`[height, width]`) nearly equal windows.
    pub fn adaptive_avg_pool2d(&self, output: [usize; 2]) -> Result<Self> {
        Self::wrap(B::adaptive_avg_pool2d(self.primitive(), output))
    }

    /// im2col: one row per channel and tap of `window`, one column per output position.
    pub fn unfold2d(&self, window: Window2d, pad_value: f64) -> Result<Self> {
        Self::wrap(B::unfold2d(self.primitive(), window, pad_value))
    }

    /// col2im, the adjoint of [`Tensor::unfold2d`], to an image of `height` by `width`.
    pub fn fold2d(&self, height: usize, width: usize, window: Window2d) -> Result<Self> {
        Self::wrap(B::fold2d(self.primitive(), height, width, window))
    }
}
