//! Convolution and pooling on `Tensor<B>`, over `[batch, channels, height, width]`.
//!
//! Each op accepts what PyTorch accepts, with the output shape PyTorch gives, at any size: arguments PyTorch refuses
//! are an error naming what is wrong (an [`Error::InvalidValue`](crate::error::Error::InvalidValue) for an option, an
//! [`Error::WindowTooLarge`](crate::error::Error::WindowTooLarge), an [`Error::UnexpectedRank`](crate::error::Error::UnexpectedRank)
//! or [`Error::UnexpectedShape`](crate::error::Error::UnexpectedShape) for an operand), a size past `usize` (a padding near
//! `usize::MAX`) an [`Error::SizeOverflow`](crate::error::Error::SizeOverflow), never a panic or a wrapped size. Where
//! dispatch answers otherwise, the op says so.

use super::float::Tensor;
use super::int_bool::IntTensor;
use crate::backend::{Backend, Conv1dOptions, Conv2dOptions, Window2d};
use crate::error::Result;

impl<B: Backend> Tensor<B> {
    /// The 2-D convolution of this `[n, c, h, w]` tensor by `weight` (`[out, c / groups, kh, kw]`), without a bias.
    ///
    /// The weight needs output channels. The input may have an empty batch or no channels, and only then an
    /// empty plane (padded to fit the kernel). No input channels give zeros of `[n, out, oh, ow]`, the sum over
    /// none (PyTorch returns `[n, 0, oh, ow]` there).
    pub fn conv2d(&self, weight: &Self, options: Conv2dOptions) -> Result<Self> {
        Self::wrap(B::conv2d(self.primitive(), weight.primitive(), options))
    }

    /// The 1-D convolution of this `[n, c, length]` tensor by `weight` (`[out, c / groups, kernel]`), without a bias.
    /// The rules of [`Tensor::conv2d`], along the length.
    pub fn conv1d(&self, weight: &Self, options: Conv1dOptions) -> Result<Self> {
        Self::wrap(B::conv1d(self.primitive(), weight.primitive(), options))
    }

    /// The transposed 2-D convolution of this `[n, c, h, w]` tensor by `weight` (`[c, out / groups, kh, kw]`).
    ///
    /// The weight may have no empty dimension. An empty batch may have an empty plane, and an empty output. The
    /// output padding must be below the stride (PyTorch also accepts one below the dilation).
    pub fn conv_transpose2d(&self, weight: &Self, options: Conv2dOptions) -> Result<Self> {
        Self::wrap(B::conv_transpose2d(self.primitive(), weight.primitive(), options))
    }

    /// The gradient of [`Tensor::conv2d`]'s weight, for this `[n, c, h, w]` input and the `gradient` of the output
    /// (`[n, out, oh, ow]`): `[out, c / groups, kh, kw]` for a `kernel` of `[kh, kw]`. The rules of
    /// [`Tensor::conv2d`] hold, and its output must have the gradient's shape.
    pub fn conv2d_weight_gradient(&self, gradient: &Self, kernel: [usize; 2], options: Conv2dOptions) -> Result<Self> {
        Self::wrap(B::conv2d_weight_gradient(self.primitive(), gradient.primitive(), kernel, options))
    }

    /// The largest value of each window. Under autodiff its gradient goes to each window's first maximum.
    ///
    /// The batch may be empty, the channels and the plane may not, and the padding is at most half the kernel.
    /// With dilation a window may cover only padding: its maximum is `-inf`, and the gradient, which has no input
    /// to go to there, is an `Err`.
    pub fn max_pool2d(&self, window: Window2d) -> Result<Self> {
        Self::wrap(B::max_pool2d(self.primitive(), window))
    }

    /// [`Tensor::max_pool2d`] and where each maximum is: its flat index `row * width + column` in the input's plane
    /// (the first on ties), as an int tensor of the output's shape. A window of padding alone has no index: an
    /// `Err` (PyTorch answers an index outside the plane).
    pub fn max_pool2d_with_indices(&self, window: Window2d) -> Result<(Self, IntTensor<B>)> {
        let pooled = self.max_pool2d(window)?;
        Ok((pooled, IntTensor::wrap(B::max_pool2d_indices(self.primitive(), window))?))
    }

    /// The mean of each window, padding counted. The rules of [`Tensor::max_pool2d`].
    pub fn avg_pool2d(&self, window: Window2d) -> Result<Self> {
        Self::wrap(B::avg_pool2d(self.primitive(), window))
    }

    /// Means over a grid of `output` (`[height, width]`) nearly equal windows. The batch and the channels may be
    /// empty, the plane may not; any output size, 0 included.
    pub fn adaptive_avg_pool2d(&self, output: [usize; 2]) -> Result<Self> {
        Self::wrap(B::adaptive_avg_pool2d(self.primitive(), output))
    }

    /// im2col: one row per channel and tap of `window`, one column per output position. The batch may be empty,
    /// the channels and the plane may not.
    pub fn unfold2d(&self, window: Window2d, pad_value: f64) -> Result<Self> {
        Self::wrap(B::unfold2d(self.primitive(), window, pad_value))
    }

    /// col2im, the adjoint of [`Tensor::unfold2d`], to an image of `height` by `width`. The batch may be empty,
    /// the rows, the positions and the image may not.
    pub fn fold2d(&self, height: usize, width: usize, window: Window2d) -> Result<Self> {
        Self::wrap(B::fold2d(self.primitive(), height, width, window))
    }
}
