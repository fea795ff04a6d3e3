//! Losses, each a one-element tensor to call `backward` on.

use dispatch_core::{Backend, Error, IntTensor, Result, Tensor};

/// The mean cross-entropy of `logits` (`[n, classes]`) against int class ids `targets` (`[n]`): the op table's
/// fused `cross_entropy`, stable for large logits, whose backward rule is `softmax - one_hot` in one node. A target
/// outside `0..classes` is an `Err`.
pub fn cross_entropy<B: Backend>(logits: &Tensor<B>, targets: &IntTensor<B>) -> Result<Tensor<B>> {
    logits.cross_entropy(targets)
}

/// The mean squared error between `predictions` and `targets` of one shape.
pub fn mse<B: Backend>(predictions: &Tensor<B>, targets: &Tensor<B>) -> Result<Tensor<B>> {
    if predictions.shape() != targets.shape() {
        return Err(Error::shape_mismatch("mse", &predictions.shape(), &targets.shape()));
    }
    predictions.sub(targets)?.square()?.mean()
}
