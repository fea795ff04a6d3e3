//! `attention_weights`: in each block of leading indices, the softmax over the keys of `scale · query keyᵀ`, a causal
//! query `i` seeing keys `0..=i` only (top-left aligned) and giving the later ones a weight of exactly 0.

use crate::support::values::{Floats, Outcome, dtype_mismatch, invalid, mismatch, round_to};

/// The sizes of a checked `attention_weights` call: `query` `[..., queries, width]`, `key` `[..., keys, width]`,
/// the output `[..., queries, keys]`; `blocks` counts the leading indices.
#[derive(Clone, Copy, Debug)]
pub struct AttentionSizes {
    pub blocks: usize,
    pub queries: usize,
    pub keys: usize,
    pub width: usize,
}

impl AttentionSizes {
    /// Checked as the docs say: the same dtype, a rank of 2 at least, then the same leading dims and width (no
    /// broadcasting).
    pub fn of(query: &Floats, key: &Floats) -> Outcome<Self> {
        dtype_mismatch(query.dtype, key.dtype)?;
        let (&[ref leading @ .., queries, width], &[.., keys, _]) = (&query.dims[..], &key.dims[..]) else {
            return invalid(format!("attention of a query {:?} and a key {:?}", query.dims, key.dims));
        };
        if key.dims != [leading, &[keys, width]].concat() {
            return mismatch(format!("attention of a query {:?} and a key {:?}", query.dims, key.dims));
        }
        Ok(Self { blocks: leading.iter().product(), queries, keys, width })
    }

    /// How many keys query `row` (its index in its block) attends to.
    pub fn attended(&self, row: usize, causal: bool) -> usize {
        if causal { (row + 1).min(self.keys) } else { self.keys }
    }

    /// Each row of the output: where it starts in the output, and how many keys (its first ones) it attends to.
    pub fn rows(&self, causal: bool) -> impl Iterator<Item = (usize, usize)> + '_ {
        (0..self.blocks * self.queries).map(move |row| (row * self.keys, self.attended(row % self.queries, causal)))
    }

    /// `Σ_l query[b, i, l] key[b, j, l]`, as `[blocks, queries, keys]`. Bilinear, so it also carries magnitudes and
    /// errors.
    pub fn scores(&self, query: &[f64], key: &[f64]) -> Vec<f64> {
        let (queries, keys, width) = (self.queries, self.keys, self.width);
        let mut scores = vec![0.0; self.blocks * queries * keys];
        for (at, score) in scores.iter_mut().enumerate() {
            let (block, i, j) = (at / (queries * keys), at / keys % queries, at % keys);
            let q = &query[(block * queries + i) * width..][..width];
            let k = &key[(block * keys + j) * width..][..width];
            *score = q.iter().zip(k).map(|(q, k)| q * k).sum();
        }
        scores
    }

    /// `Σ_j scores[b, i, j] key[b, j, l]`, as `[blocks, queries, width]`: the product behind the query's gradient.
    pub fn by_query(&self, scores: &[f64], key: &[f64]) -> Vec<f64> {
        let (queries, keys, width) = (self.queries, self.keys, self.width);
        let mut product = vec![0.0; self.blocks * queries * width];
        for (at, entry) in product.iter_mut().enumerate() {
            let (block, i, l) = (at / (queries * width), at / width % queries, at % width);
            let (score, key_row) = ((block * queries + i) * keys, block * keys);
            *entry = (0..keys).map(|j| scores[score + j] * key[(key_row + j) * width + l]).sum();
        }
        product
    }

    /// `Σ_i scores[b, i, j] query[b, i, l]`, as `[blocks, keys, width]`: the product behind the key's gradient.
    pub fn by_key(&self, scores: &[f64], query: &[f64]) -> Vec<f64> {
        let (queries, keys, width) = (self.queries, self.keys, self.width);
        let mut product = vec![0.0; self.blocks * keys * width];
        for (at, entry) in product.iter_mut().enumerate() {
            let (block, j, l) = (at / (keys * width), at / width % keys, at % width);
            let row = |i: usize| block * queries + i;
            *entry = (0..queries).map(|i| scores[row(i) * keys + j] * query[row(i) * width + l]).sum();
        }
        product
    }
}

/// `[query, key]` of a step that takes the current tensor as the query or as the key, and `other` as the other.
pub fn query_and_key<T>(current_is_query: bool, current: T, other: T) -> [T; 2] {
    if current_is_query { [current, other] } else { [other, current] }
}

/// `exp(x - max) / Σ exp(x - max)`, exact.
pub fn softmax(lane: &[f64]) -> Vec<f64> {
    let max = lane.iter().fold(f64::NEG_INFINITY, |m, &x| m.max(x));
    let exps: Vec<f64> = lane.iter().map(|x| (x - max).exp()).collect();
    let total: f64 = exps.iter().sum();
    exps.iter().map(|exp| exp / total).collect()
}

/// The exact weights, as `[blocks, queries, keys]`, with `scale` already rounded to the dtype.
pub fn weights(sizes: &AttentionSizes, query: &Floats, key: &Floats, scale: f64, causal: bool) -> Vec<f64> {
    let scores = sizes.scores(&query.values, &key.values);
    let mut weights = vec![0.0; scores.len()];
    for (start, attended) in sizes.rows(causal) {
        let scaled: Vec<f64> = scores[start..start + attended].iter().map(|score| scale * score).collect();
        weights[start..start + attended].copy_from_slice(&softmax(&scaled));
    }
    weights
}

/// `attention_weights(query, key, scale, causal)`, the scale rounded to the dtype as every scalar argument is.
pub fn attention_weights(query: &Floats, key: &Floats, scale: f64, causal: bool) -> Outcome<Floats> {
    let sizes = AttentionSizes::of(query, key)?;
    let scale = round_to(query.dtype, scale);
    let dims = [&query.dims[..query.dims.len() - 1], &[sizes.keys]].concat();
    Ok(Floats::new(dims, weights(&sizes, query, key, scale, causal), query.dtype))
}
