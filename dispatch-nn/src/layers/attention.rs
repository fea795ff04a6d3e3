//! Multi-head causal self-attention, as in GPT.

use dispatch_core::{Backend, DType, DeviceOf, Error, RankRule, Result, Tensor};

use super::linear::Linear;
use crate::Module;

/// Multi-head self-attention in which each position attends to itself and the positions before it.
#[derive(Clone, Debug, Module)]
pub struct CausalSelfAttention<B: Backend> {
    /// `[width, 3 * width]`: the queries, keys and values of every head, side by side.
    pub qkv: Linear<B>,
    /// `[width, width]`: the heads' outputs mixed back to the width.
    pub proj: Linear<B>,
    /// The number of heads; it divides the width.
    #[module(skip)]
    pub heads: usize,
}

impl<B: Backend> CausalSelfAttention<B> {
    /// `heads` heads over a model of `width`; `heads` must divide `width`.
    pub fn new(
        width: usize,
        heads: usize,
        seed: u64,
        dtype: DType,
        device: &(impl DeviceOf<B> + ?Sized),
    ) -> Result<Self> {
        if heads == 0 || !width.is_multiple_of(heads) {
            return Err(Error::invalid_value("CausalSelfAttention::new", "heads", heads, "a divisor of `width`"));
        }
        Ok(Self {
            qkv: Linear::new(width, 3 * width, true, seed, dtype, device)?,
            proj: Linear::new(width, width, true, seed.wrapping_add(2), dtype, device)?,
            heads,
        })
    }

    /// Attention over `x`, `[batch, time, width]`, to the same shape.
    pub fn forward(&self, x: &Tensor<B>) -> Result<Tensor<B>> {
        let [batch, time, width] = <[usize; 3]>::try_from(x.dims().as_slice()).map_err(|_| {
            let what = "an input [batch, time, width]";
            Error::unexpected_rank("CausalSelfAttention::forward", what, RankRule::Exactly(3), &x.shape())
        })?;
        let (heads, head_width) = (self.heads, width / self.heads.max(1));
        // [batch, heads, time, head_width] of the queries (0), keys (1) or values (2), each projected alone.
        let part = |index: usize| {
            let projected = self.qkv.forward_outputs(x, index * width, width)?;
            projected.reshape([batch, time, heads, head_width])?.permute([0, 2, 1, 3])
        };
        let (queries, keys, values) = (part(0)?, part(1)?, part(2)?);
        // The scaled scores, the causal mask and the softmax in one op (and one node of the graph).
        let weights = queries.attention_weights(&keys, 1.0 / (head_width as f64).sqrt(), true)?;
        let mixed = weights.matmul(&values)?.permute([0, 2, 1, 3])?.reshape([batch, time, width])?;
        self.proj.forward(&mixed)
    }
}
