//! Losses, each a one-element tensor to call `backward` on.

use dispatch_core::{Backend, Error, IntTensor, RankRule, Result, Tensor};

/// The mean cross-entropy of `logits` (`[n, classes]`) against int class ids `targets` (`[n]`), computed through
/// `log_softmax` (stable for large logits). A target outside `0..classes` is an `Err`.
pub fn cross_entropy<B: Backend>(logits: &Tensor<B>, targets: &IntTensor<B>) -> Result<Tensor<B>> {
    let (logit_dims, target_dims) = (logits.dims(), targets.dims());
    let [rows, _] = <[usize; 2]>::try_from(logit_dims.as_slice()).map_err(|_| {
        Error::unexpected_rank("cross_entropy", "logits [n, classes]", RankRule::Exactly(2), &logits.shape())
    })?;
    if target_dims != [rows] {
        return Err(Error::shape_mismatch("cross_entropy", &logits.shape(), &targets.shape()));
    }
    let picked = logits.log_softmax(1)?.gather(1, &targets.reshape([rows, 1])?)?;
    picked.mean()?.neg()
}

/// The mean squared error between `predictions` and `targets` of one shape.
pub fn mse<B: Backend>(predictions: &Tensor<B>, targets: &Tensor<B>) -> Result<Tensor<B>> {
    if predictions.shape() != targets.shape() {
        return Err(Error::shape_mismatch("mse", &predictions.shape(), &targets.shape()));
    }
    predictions.sub(targets)?.square()?.mean()
}
