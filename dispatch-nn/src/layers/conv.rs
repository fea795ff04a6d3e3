//! Convolution and pooling over `[batch, channels, height, width]`.

use dispatch_core::backend::{Conv2dOptions, Window2d};
use dispatch_core::{Backend, DType, DeviceOf, Result, Tensor};

use super::init::uniform;
use crate::Module;

/// A 2-D convolution with a bias per output channel.
#[derive(Clone, Debug, Module)]
pub struct Conv2d<B: Backend> {
    /// `[out, in / groups, kh, kw]`.
    pub weight: Tensor<B>,
    /// `[out]`, if the layer has one.
    pub bias: Option<Tensor<B>>,
    /// Stride, padding, dilation and groups.
    #[module(skip)]
    pub options: Conv2dOptions,
}

impl<B: Backend> Conv2d<B> {
    /// Weights and bias uniform in `±1/sqrt(in / groups * kh * kw)` (PyTorch's default), from `seed`.
    pub fn new(
        [inputs, outputs]: [usize; 2],
        kernel: [usize; 2],
        options: Conv2dOptions,
        seed: u64,
        dtype: DType,
        device: &(impl DeviceOf<B> + ?Sized),
    ) -> Result<Self> {
        let per_group = inputs / options.groups.max(1);
        let bound = 1.0 / ((per_group * kernel[0] * kernel[1]).max(1) as f64).sqrt();
        let weight = uniform([outputs, per_group, kernel[0], kernel[1]], bound, seed, dtype, device)?;
        let bias = Some(uniform([outputs], bound, seed.wrapping_add(1), dtype, device)?);
        Ok(Self { weight, bias, options })
    }

    /// The convolution of `x` (`[n, in, h, w]`), plus the bias of each output channel.
    pub fn forward(&self, x: &Tensor<B>) -> Result<Tensor<B>> {
        let y = x.conv2d(&self.weight, self.options)?;
        match &self.bias {
            Some(bias) => y.add_into(&bias.reshape([1, bias.shape().num_elements(), 1, 1])?),
            None => Ok(y),
        }
    }
}

/// The largest value of each window.
#[derive(Clone, Copy, Debug)]
pub struct MaxPool2d {
    /// Kernel, stride, padding and dilation.
    pub window: Window2d,
}

impl MaxPool2d {
    /// Pools `x` (`[n, c, h, w]`).
    pub fn forward<B: Backend>(&self, x: &Tensor<B>) -> Result<Tensor<B>> {
        x.max_pool2d(self.window)
    }
}

/// The mean of each window, padding counted.
#[derive(Clone, Copy, Debug)]
pub struct AvgPool2d {
    /// Kernel, stride, padding and dilation.
    pub window: Window2d,
}

impl AvgPool2d {
    /// Pools `x` (`[n, c, h, w]`).
    pub fn forward<B: Backend>(&self, x: &Tensor<B>) -> Result<Tensor<B>> {
        x.avg_pool2d(self.window)
    }
}
