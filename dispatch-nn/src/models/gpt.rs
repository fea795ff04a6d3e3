//! A small GPT: token and position embeddings, pre-norm transformer blocks of causal self-attention and a GELU
//! MLP, a final norm and a linear head over the vocabulary.

use dispatch_core::{Backend, DType, DeviceOf, Error, IntTensor, RankRule, Result, Tensor};

use crate::Module;
use crate::layers::{CausalSelfAttention, Embedding, LayerNorm, Linear};
use crate::loss::cross_entropy;

/// The sizes of a [`Gpt`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GptConfig {
    /// The number of distinct tokens.
    pub vocabulary: usize,
    /// The longest sequence the model reads (its position embeddings).
    pub context: usize,
    /// The width of every token's vector.
    pub width: usize,
    /// Attention heads per block; they divide the width.
    pub heads: usize,
    /// Transformer blocks.
    pub layers: usize,
}

/// The feed-forward part of a block: `width -> 4 width (GELU) -> width`.
#[derive(Clone, Debug, Module)]
pub struct Mlp<B: Backend> {
    /// `width -> 4 width`.
    pub up: Linear<B>,
    /// `4 width -> width`.
    pub down: Linear<B>,
}

/// One pre-norm transformer block: `x + attention(norm(x))`, then `x + mlp(norm(x))`.
#[derive(Clone, Debug, Module)]
pub struct Block<B: Backend> {
    /// The norm before the attention.
    pub norm1: LayerNorm<B>,
    /// Causal multi-head self-attention.
    pub attention: CausalSelfAttention<B>,
    /// The norm before the MLP.
    pub norm2: LayerNorm<B>,
    /// The feed-forward part.
    pub mlp: Mlp<B>,
}

/// A decoder-only transformer over token ids.
#[derive(Clone, Debug, Module)]
pub struct Gpt<B: Backend> {
    /// Its sizes.
    #[module(skip)]
    pub config: GptConfig,
    /// `[vocabulary, width]`.
    pub tokens: Embedding<B>,
    /// `[context, width]`.
    pub positions: Embedding<B>,
    /// The transformer blocks, in order.
    pub blocks: Vec<Block<B>>,
    /// The norm after the last block.
    pub norm: LayerNorm<B>,
    /// `width -> vocabulary` logits.
    pub head: Linear<B>,
}

impl<B: Backend> Gpt<B> {
    /// A model of `config` from `seed`: the same seed gives the same model on every device.
    pub fn new(config: GptConfig, seed: u64, dtype: DType, device: &(impl DeviceOf<B> + ?Sized)) -> Result<Self> {
        let GptConfig { vocabulary, context, width, heads, layers } = config;
        let sizes = [("vocabulary", vocabulary), ("context", context), ("width", width), ("layers", layers)];
        if let Some((parameter, size)) = sizes.into_iter().find(|&(_, size)| size == 0) {
            return Err(Error::invalid_value("Gpt::new", parameter, size, "at least 1"));
        }
        let mut blocks = Vec::with_capacity(layers);
        for layer in 0..layers as u64 {
            let seed = seed.wrapping_add(100 * (layer + 1));
            blocks.push(Block {
                norm1: LayerNorm::new(width, dtype, device)?,
                attention: CausalSelfAttention::new(width, heads, seed, dtype, device)?,
                norm2: LayerNorm::new(width, dtype, device)?,
                mlp: Mlp {
                    up: Linear::new(width, 4 * width, true, seed.wrapping_add(10), dtype, device)?,
                    down: Linear::new(4 * width, width, true, seed.wrapping_add(20), dtype, device)?,
                },
            });
        }
        Ok(Self {
            config,
            tokens: Embedding::new(vocabulary, width, 0.02, seed, dtype, device)?,
            positions: Embedding::new(context, width, 0.02, seed.wrapping_add(1), dtype, device)?,
            blocks,
            norm: LayerNorm::new(width, dtype, device)?,
            head: Linear::new(width, vocabulary, false, seed.wrapping_add(2), dtype, device)?,
        })
    }

    /// The logits of the next token at every position of `ids` (`[batch, time]`, `time <= context`):
    /// `[batch, time, vocabulary]`.
    pub fn forward(&self, ids: &IntTensor<B>) -> Result<Tensor<B>> {
        let [_, time] = <[usize; 2]>::try_from(ids.dims().as_slice()).map_err(|_| {
            Error::unexpected_rank("Gpt::forward", "ids [batch, time]", RankRule::Exactly(2), &ids.shape())
        })?;
        if time == 0 || time > self.config.context {
            let expected = "ids [batch, time] of 1 to `config.context` positions";
            return Err(Error::unexpected_shape("Gpt::forward", expected, &ids.shape()));
        }
        let positions = IntTensor::<B>::arange(0, time as i64, &ids.device())?;
        let mut x = self.tokens.forward(ids)?.add_into(&self.positions.forward(&positions)?)?;
        // Each branch's output is added into (its memory takes the sum): the stream `x` is kept by the next layer
        // norm's graph, the branch's output by nothing.
        for block in &self.blocks {
            x = block.attention.forward(&block.norm1.forward(&x)?)?.add_into(&x)?;
            let hidden = block.mlp.up.forward(&block.norm2.forward(&x)?)?.gelu()?;
            x = block.mlp.down.forward(&hidden)?.add_into(&x)?;
        }
        self.head.forward(&self.norm.forward(&x)?)
    }

    /// The mean cross-entropy of predicting `targets` (`[batch, time]`) from `ids`.
    pub fn loss(&self, ids: &IntTensor<B>, targets: &IntTensor<B>) -> Result<Tensor<B>> {
        let logits = self.forward(ids)?;
        let dims = logits.dims();
        let rows = dims[0] * dims[1];
        cross_entropy(&logits.reshape([rows, self.config.vocabulary])?, &targets.reshape([rows])?)
    }

    /// `count` tokens sampled after `prompt` (which must not be empty), each from the softmax of the last logits at
    /// `temperature` (0 picks the most likely), with draws from `seed`: the same text on every device.
    pub fn generate(&self, prompt: &[i64], count: usize, temperature: f32, seed: u64) -> Result<Vec<i64>> {
        if prompt.is_empty() {
            return Err(Error::invalid_value("Gpt::generate", "prompt.len()", 0usize, "at least 1"));
        }
        let device = self.tokens.weight.device();
        let mut tokens = prompt.to_vec();
        let mut state = seed;
        for _ in 0..count {
            let window = &tokens[tokens.len().saturating_sub(self.config.context)..];
            let ids = IntTensor::<B>::from_vec(window.to_vec(), [1, window.len()], &device)?;
            let logits = self.forward(&ids)?.narrow(1, window.len() - 1, 1)?.to_f64_vec()?;
            tokens.push(sample(&logits, temperature, &mut state) as i64);
        }
        Ok(tokens.split_off(prompt.len()))
    }
}

/// An index drawn from `softmax(logits / temperature)` by a seeded generator (splitmix64), or the largest logit
/// at temperature 0.
fn sample(logits: &[f64], temperature: f32, state: &mut u64) -> usize {
    let best =
        logits.iter().enumerate().fold(0, |best, (index, &value)| if value > logits[best] { index } else { best });
    if temperature <= 0.0 {
        return best;
    }
    let max = logits[best];
    let weights: Vec<f64> = logits.iter().map(|&value| ((value - max) / f64::from(temperature)).exp()).collect();
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    let uniform = ((z ^ (z >> 31)) >> 11) as f64 / (1u64 << 53) as f64;
    let mut target = uniform * weights.iter().sum::<f64>();
    for (index, weight) in weights.iter().enumerate() {
        if target < *weight {
            return index;
        }
        target -= weight;
    }
    best
}
