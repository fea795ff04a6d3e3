//! LeNet-5, for `[batch, 1, 28, 28]` images.

use dispatch_core::backend::{Conv2dOptions, Window2d};
use dispatch_core::{Backend, DType, DeviceOf, Result, Tensor};

use crate::Module;
use crate::layers::{Conv2d, Linear, MaxPool2d};

/// Two convolutions (6 and 16 channels of 5x5) with ReLU and 2x2 max pooling, then three linear layers (120, 84,
/// classes): LeCun et al.'s network, with ReLU and max pooling as it is usually written today.
#[derive(Clone, Debug, Module)]
pub struct LeNet<B: Backend> {
    /// `1 -> 6` channels, padded to keep 28x28.
    pub conv1: Conv2d<B>,
    /// `6 -> 16` channels, 14x14 to 10x10.
    pub conv2: Conv2d<B>,
    /// `16 * 5 * 5 -> 120`.
    pub fc1: Linear<B>,
    /// `120 -> 84`.
    pub fc2: Linear<B>,
    /// `84 -> classes`.
    pub fc3: Linear<B>,
}

impl<B: Backend> LeNet<B> {
    /// A network for `classes` classes, from `seed`.
    pub fn new(classes: usize, seed: u64, dtype: DType, device: &(impl DeviceOf<B> + ?Sized)) -> Result<Self> {
        let padded = Conv2dOptions { padding: [2, 2], ..Default::default() };
        Ok(Self {
            conv1: Conv2d::new([1, 6], [5, 5], padded, seed, dtype, device)?,
            conv2: Conv2d::new([6, 16], [5, 5], Conv2dOptions::default(), seed.wrapping_add(2), dtype, device)?,
            fc1: Linear::new(16 * 5 * 5, 120, true, seed.wrapping_add(4), dtype, device)?,
            fc2: Linear::new(120, 84, true, seed.wrapping_add(6), dtype, device)?,
            fc3: Linear::new(84, classes, true, seed.wrapping_add(8), dtype, device)?,
        })
    }

    /// The logits of `images`, `[batch, 1, 28, 28]`: `[batch, classes]`.
    pub fn forward(&self, images: &Tensor<B>) -> Result<Tensor<B>> {
        let pool = MaxPool2d { window: Window2d::new([2, 2]).stride([2, 2]) };
        let x = pool.forward(&self.conv1.forward(images)?.relu()?)?;
        let x = pool.forward(&self.conv2.forward(&x)?.relu()?)?;
        let batch = x.dims()[0];
        let x = self.fc1.forward(&x.reshape([batch, 16 * 5 * 5])?)?.relu()?;
        self.fc3.forward(&self.fc2.forward(&x)?.relu()?)
    }
}
