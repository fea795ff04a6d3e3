//! Softmax and log-softmax of contiguous rows, in place, and the backward passes of softmax and layer norm a row at a
//! time: both CPU backends run these (ndarray on its lanes, candle on its CPU tensors), so they give the same bits at
//! every width.
//!
//! A row's max and its sums are folded into `PARTS` partial results, entry `i` into the `i % PARTS`-th, then combined
//! in a fixed tree: independent chains that vectorise, where one fold in order waited on each addition (a 64-wide
//! attention row spent most of its time there). The order depends on the row alone, never on the CPU's vector width
//! or the thread that runs it.

use std::ops::Range;

use num_traits::Float;
use rayon::prelude::*;

use super::{Kernels, Slot, all_nan, map_in_place, map_slice};
use crate::error::Result;
use crate::memory;
use crate::parallel::{self, Work};

/// How many partial results a row is folded into.
const PARTS: usize = 8;

/// Which normalisation a row gets.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Normalise {
    /// `x - max - log Σ exp(x - max)`.
    Log,
    /// `exp(x - max) / Σ exp(x - max)`.
    Exp,
}

/// `row` replaced by its log-softmax or softmax, shifted by its max first so that `exp` cannot overflow. A row of
/// NaN, or holding NaN, becomes NaN; an empty row stays empty.
pub(crate) fn normalise_row<T: Kernels + Float>(row: &mut [T], which: Normalise) {
    let Some(max) = row_max(row) else { return };
    match which {
        Normalise::Log => {
            let log_sum_exp = log_sum_exp_of_row(row, max);
            map_in_place(Work::Light, row, |x| (x - max) - log_sum_exp);
        }
        Normalise::Exp => {
            map_in_place(Work::Heavy, row, |x| T::exp_of(x - max));
            let mut total = PartialSums::new();
            total.add(row);
            let total = total.total();
            map_in_place(Work::Light, row, |exp| exp / total);
        }
    }
}

/// A row of attention scores turned into weights in place: the first `attended` entries scaled, then normalised by
/// softmax as `normalise_row` does; the rest, the keys a causal query may not see, 0. Those are what `softmax` gives
/// the composition's masked `-inf` entries: 0, or NaN where the row's sum is NaN (then every weight of the row is).
pub(crate) fn attention_row<T: Kernels + Float>(row: &mut [T], attended: usize, scale: T) {
    let (seen, unseen) = row.split_at_mut(attended.min(row.len()));
    if scale != T::one() {
        map_in_place(Work::Light, seen, |x| x * scale);
    }
    normalise_row(seen, Normalise::Exp);
    let hidden = match seen.first() {
        Some(weight) if weight.is_nan() => T::nan(),
        _ => T::zero(),
    };
    unseen.fill(hidden);
}

/// The largest entry, `None` for an empty row. An entry replaces a partial maximum only when it is strictly greater
/// (the rule candle's max uses), so NaN is kept only as the first entry, which then starts every partial maximum.
pub(crate) fn row_max<T: Float>(row: &[T]) -> Option<T> {
    let first = *row.first()?;
    let mut maxima = [first; PARTS];
    let pick = |max: T, x: T| if max < x { x } else { max };
    let mut chunks = row.chunks_exact(PARTS);
    for chunk in &mut chunks {
        for (max, &x) in maxima.iter_mut().zip(chunk) {
            *max = pick(*max, x);
        }
    }
    for (max, &x) in maxima.iter_mut().zip(chunks.remainder()) {
        *max = pick(*max, x);
    }
    Some(combine(maxima, pick))
}

/// `log Σ exp(x - max)` over a row: what log-softmax subtracts from each shifted entry. The exponentials of each 64
/// entries by the vectorised loop, summed as softmax sums its row of them, so both normalise by the same total.
pub(crate) fn log_sum_exp_of_row<T: Kernels + Float>(row: &[T], max: T) -> T {
    let mut exponentials = [T::zero(); 64];
    let mut total = PartialSums::new();
    // Each chunk but the last is a multiple of `PARTS` long, so every entry meets the partial sum of its index.
    for part in row.chunks(exponentials.len()) {
        map_slice(Work::Heavy, part, &mut exponentials, |x| T::exp_of(x - max));
        total.add(exponentials.get(..part.len()).unwrap_or(&[]));
    }
    total.total().ln()
}

/// `row` replaced by its layer normalisation `(x - mean) / sqrt(var + eps) * γ + β` (the population variance), in
/// place: its mean, then its variance about that mean (two passes over a row in cache, rather than the less accurate
/// `E[x²] - E[x]²`), each sum divided by the length. The centred value is divided by the deviation, as the composed
/// default does: a product by its reciprocal rounds differently in most entries, and training carries that from step
/// to step (the main job's devices drifted 1.1e-2 apart by step 285 with it, 9e-6 without). Parameters of another
/// length than the row give NaN.
pub(crate) fn layer_norm_row<T: Float>(row: &mut [T], (gamma, beta): (&[T], &[T]), eps: T) {
    let count = T::from(row.len());
    let (Some(count), true) = (count, gamma.len() == row.len() && beta.len() == row.len()) else {
        return row.iter_mut().for_each(|x| *x = T::nan());
    };
    let mean = sum_of((row, row, row), |x, _, _| x) / count;
    let variance = sum_of((row, row, row), |x, _, _| (x - mean) * (x - mean)) / count;
    let deviation = (variance + eps).sqrt();
    for ((x, &scale), &shift) in row.iter_mut().zip(gamma).zip(beta) {
        *x = (*x - mean) / deviation * scale + shift;
    }
}

/// `write(lhs_row, rhs_row, outputs)` with the rows `rows` of two operands laid out as the output; NaN where an
/// operand falls short of them, which no caller hands over, so that every output is written all the same.
pub(crate) fn row_pair<T: Float, O: Slot<T>>(
    (lhs, rhs): (&[T], &[T]),
    rows: Range<usize>,
    outputs: &mut [O],
    write: impl FnOnce(&[T], &[T], &mut [O]),
) {
    match (lhs.get(rows.clone()), rhs.get(rows)) {
        (Some(lhs), Some(rhs)) => write(lhs, rhs, outputs),
        _ => all_nan::<T, O>(outputs),
    }
}

/// `y (g - Σ g y)` over a row: the gradient of softmax at its output `y`, given the output's gradient `g`, into
/// `outputs`; rows of different lengths give NaN. The steps of the composed default (`mul`, `sum_dim`, `sub`, `mul`),
/// each rounded to the element type; the sum is this module's.
pub(crate) fn softmax_backward_row<T: Float, O: Slot<T>>(y: &[T], g: &[T], outputs: &mut [O]) {
    if g.len() != y.len() || outputs.len() != y.len() {
        return all_nan::<T, O>(outputs);
    }
    let dot = sum_of((y, g, g), |y, g, _| g * y);
    for ((output, &y), &g) in outputs.iter_mut().zip(y).zip(g) {
        output.put(y * (g - dot));
    }
}

/// The gradient of layer norm by its input over a row: `(s - mean(s) - x̂ mean(s x̂)) r` with `s = g γ`, `x̂ = (x -
/// mean(x)) r` and `r = 1 / sqrt(var(x) + eps)` (the population variance), into `outputs`; rows of different lengths
/// give NaN. The steps of the composed default, each rounded to the element type, means as sums times `1 / len`
/// rounded once; the sums are this module's.
pub(crate) fn layer_norm_backward_row<T: Float, O: Slot<T>>(
    (x, g, gamma): (&[T], &[T], &[T]),
    eps: T,
    outputs: &mut [O],
) {
    let len = x.len();
    let scale = T::from(1.0 / len as f64);
    let (Some(scale), true) = (scale, g.len() == len && gamma.len() == len && outputs.len() == len) else {
        return all_nan::<T, O>(outputs);
    };
    let mean = sum_of((x, x, x), |x, _, _| x) * scale;
    let variance = sum_of((x, x, x), |x, _, _| (x - mean) * (x - mean)) * scale;
    let reciprocal = (variance + eps).sqrt().recip();
    let normalised = |x: T| (x - mean) * reciprocal;
    let mean_scaled = sum_of((g, gamma, gamma), |g, gamma, _| g * gamma) * scale;
    let mean_along = sum_of((x, g, gamma), |x, g, gamma| g * gamma * normalised(x)) * scale;
    for (((output, &x), &g), &gamma) in outputs.iter_mut().zip(x).zip(g).zip(gamma) {
        output.put(((g * gamma - mean_scaled) - normalised(x) * mean_along) * reciprocal);
    }
}

/// Rows a group of `layer_norm_parameter_sums` adds in order, before the groups' sums are added in order: a fixed
/// split, so the values do not depend on the threads.
const PARAMETER_GROUP_ROWS: usize = 64;

/// `[Σ g x̂, Σ g]` over the `width`-long rows of `x` and `g` (the gradients of layer norm by `γ` and by `β`), as
/// `2 * width` values, `x̂` each row normalised as `layer_norm_row` does: rows in groups of 64, groups across threads
/// when there are many. Rows of `x` and `g` past the shorter one's are left out.
pub(crate) fn layer_norm_parameter_sums<T: Float + Send + Sync>(
    op: &'static str,
    (x, g): (&[T], &[T]),
    width: usize,
    eps: T,
) -> Result<Vec<T>> {
    let group_rows = |group: usize| {
        let start = group.saturating_mul(PARAMETER_GROUP_ROWS).saturating_mul(width);
        let (x, g) = (x.get(start..).unwrap_or_default(), g.get(start..).unwrap_or_default());
        x.chunks_exact(width.max(1)).zip(g.chunks_exact(width.max(1))).take(PARAMETER_GROUP_ROWS)
    };
    let rows = x.len().min(g.len()).checked_div(width).unwrap_or(0);
    let groups = rows.div_ceil(PARAMETER_GROUP_ROWS);
    let pair = width.saturating_mul(2);
    let mut partial = memory::try_filled(op, groups.saturating_mul(pair), T::zero())?;
    let add_group = |(group, sums): (usize, &mut [T])| {
        for (x, g) in group_rows(group) {
            add_parameter_terms(x, g, eps, sums);
        }
    };
    if width > 0 {
        if parallel::split(Work::Heavy, x.len()) {
            partial.par_chunks_exact_mut(pair).enumerate().for_each(add_group);
        } else {
            partial.chunks_exact_mut(pair).enumerate().for_each(add_group);
        }
    }
    let mut sums = memory::try_filled(op, pair, T::zero())?;
    for group in partial.chunks_exact(pair.max(1)) {
        sums.iter_mut().zip(group).for_each(|(sum, &value)| *sum = *sum + value);
    }
    Ok(sums)
}

/// Adds one row's terms to `sums`: `g x̂` to its first half, `g` to its second.
fn add_parameter_terms<T: Float>(x: &[T], g: &[T], eps: T, sums: &mut [T]) {
    let Some(count) = T::from(x.len()) else { return };
    let mean = sum_of((x, x, x), |x, _, _| x) / count;
    let variance = sum_of((x, x, x), |x, _, _| (x - mean) * (x - mean)) / count;
    let deviation = (variance + eps).sqrt();
    let (by_gamma, by_beta) = sums.split_at_mut(x.len().min(sums.len()));
    for ((sum, &x), &g) in by_gamma.iter_mut().zip(x).zip(g) {
        *sum = *sum + g * ((x - mean) / deviation);
    }
    for (sum, &g) in by_beta.iter_mut().zip(g) {
        *sum = *sum + g;
    }
}

/// `Σ term(a[i], b[i], c[i])` over a row, each term into the partial sum of its index, as `PartialSums` adds them.
fn sum_of<T: Float>(row: (&[T], &[T], &[T]), term: impl Fn(T, T, T) -> T) -> T {
    let mut sums = PartialSums::new();
    sums.add_terms(row, term);
    sums.total()
}

/// Partial sums of a row handed over in consecutive pieces, each but the last a multiple of `PARTS` long.
struct PartialSums<T> {
    sums: [T; PARTS],
}

impl<T: Float> PartialSums<T> {
    fn new() -> Self {
        Self { sums: [T::zero(); PARTS] }
    }

    fn add(&mut self, values: &[T]) {
        self.add_terms((values, values, values), |x, _, _| x);
    }

    /// `term` of the entries of each index of the three slices, over the shortest one's length.
    fn add_terms(&mut self, (a, b, c): (&[T], &[T], &[T]), term: impl Fn(T, T, T) -> T) {
        let (a, b, c) = (a.chunks_exact(PARTS), b.chunks_exact(PARTS), c.chunks_exact(PARTS));
        let tails = (a.remainder(), b.remainder(), c.remainder());
        for ((a, b), c) in a.zip(b).zip(c) {
            for (((sum, &a), &b), &c) in self.sums.iter_mut().zip(a).zip(b).zip(c) {
                *sum = *sum + term(a, b, c);
            }
        }
        for (((sum, &a), &b), &c) in self.sums.iter_mut().zip(tails.0).zip(tails.1).zip(tails.2) {
            *sum = *sum + term(a, b, c);
        }
    }

    fn total(self) -> T {
        combine(self.sums, |a, b| a + b)
    }
}

/// The partial results folded pairwise: halves added element by element until one is left.
fn combine<T: Copy>(mut parts: [T; PARTS], f: impl Fn(T, T) -> T) -> T {
    let mut len = PARTS;
    while len > 1 {
        len /= 2;
        let (low, high) = parts.split_at_mut(len);
        low.iter_mut().zip(high.iter()).for_each(|(part, &other)| *part = f(*part, other));
    }
    parts[0]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(len: usize) -> Vec<f64> {
        (0..len).map(|i| ((i as f64) * 0.618).sin() * 4.0).collect()
    }

    #[test]
    fn rows_of_every_length_normalise_to_the_exact_values_within_rounding() {
        for len in [1, 7, 8, 9, 63, 64, 65, 130] {
            let values = row(len);
            let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let exact_total: f64 = values.iter().map(|x| (x - max).exp()).sum();
            let (mut softmax, mut log_softmax) = (values.clone(), values.clone());
            normalise_row(&mut softmax, Normalise::Exp);
            normalise_row(&mut log_softmax, Normalise::Log);
            for ((&x, &p), &log_p) in values.iter().zip(&softmax).zip(&log_softmax) {
                let exact = (x - max).exp() / exact_total;
                assert!((p - exact).abs() <= 1e-15, "len {len}: softmax {p}, exact {exact}");
                assert!((log_p - exact.ln()).abs() <= 1e-14, "len {len}: log-softmax {log_p}, exact {}", exact.ln());
            }
            let sum: f64 = softmax.iter().sum();
            assert!((sum - 1.0).abs() <= 1e-14, "len {len}: softmax sums to {sum}");
        }
    }

    #[test]
    fn the_max_is_the_first_entry_when_it_is_nan_and_skips_nan_elsewhere() {
        assert_eq!(row_max::<f32>(&[]), None);
        assert!(row_max(&[f32::NAN, 5.0, 1.0]).is_some_and(f32::is_nan));
        let later: Vec<f32> = (0..20).map(|i| if i == 11 { f32::NAN } else { i as f32 }).collect();
        assert_eq!(row_max(&later), Some(19.0));
        let mut with_nan = later;
        normalise_row(&mut with_nan, Normalise::Exp);
        assert!(with_nan.iter().all(|x| x.is_nan()), "{with_nan:?}");
    }

    #[test]
    fn a_row_of_masked_entries_but_one_puts_all_weight_there() {
        let mut masked = vec![f32::NEG_INFINITY; 70];
        masked[67] = 3.5;
        normalise_row(&mut masked, Normalise::Exp);
        assert!(masked.iter().enumerate().all(|(i, &p)| p == if i == 67 { 1.0 } else { 0.0 }), "{masked:?}");
    }

    #[test]
    fn entries_meet_the_partial_sum_of_their_index_whatever_the_pieces() {
        let values: Vec<f32> = (0..150).map(|i| 1.0 + (i as f32) * 1e-3).collect();
        let mut whole = PartialSums::new();
        whole.add(&values);
        let mut pieces = PartialSums::new();
        values.chunks(64).for_each(|piece| pieces.add(piece));
        assert_eq!(whole.total().to_bits(), pieces.total().to_bits());
    }

    #[test]
    fn the_backward_rows_are_their_closed_forms() {
        for len in [1, 5, 8, 13, 64, 70] {
            let (x, g) = (row(len), row(len + 3)[3..].to_vec());
            let gamma: Vec<f64> = (0..len).map(|i| 0.5 + (i as f64) * 0.25).collect();
            let mut softmax = x.clone();
            normalise_row(&mut softmax, Normalise::Exp);
            let dot: f64 = g.iter().zip(&softmax).map(|(g, y)| g * y).sum();
            let mut got = vec![0.0; len];
            softmax_backward_row(&softmax, &g, &mut got);
            for ((&got, &y), &g) in got.iter().zip(&softmax).zip(&g) {
                assert!((got - y * (g - dot)).abs() <= 1e-15, "len {len}: softmax backward {got}");
            }

            let n = len as f64;
            let mean = x.iter().sum::<f64>() / n;
            let deviation = (x.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n + 1e-5).sqrt();
            let normalised: Vec<f64> = x.iter().map(|x| (x - mean) / deviation).collect();
            let scaled: Vec<f64> = g.iter().zip(&gamma).map(|(g, c)| g * c).collect();
            let mean_scaled = scaled.iter().sum::<f64>() / n;
            let along = scaled.iter().zip(&normalised).map(|(s, v)| s * v).sum::<f64>() / n;
            layer_norm_backward_row((&x, &g, &gamma), 1e-5, &mut got);
            for i in 0..len {
                let exact = (scaled[i] - mean_scaled - normalised[i] * along) / deviation;
                assert!((got[i] - exact).abs() <= 1e-12 * (1.0 + exact.abs()), "len {len}: {} vs {exact}", got[i]);
            }
        }
    }

    #[test]
    fn backward_rows_of_different_lengths_are_nan() {
        let mut outputs = [0.0f32; 4];
        softmax_backward_row(&[0.5; 4], &[1.0; 3], &mut outputs);
        assert!(outputs.iter().all(|x| x.is_nan()));
        let mut outputs = [0.0f32; 4];
        layer_norm_backward_row((&[0.5; 4], &[1.0; 4], &[1.0; 3]), 1e-5, &mut outputs);
        assert!(outputs.iter().all(|x| x.is_nan()));
    }

    #[test]
    fn a_layer_norm_row_is_its_closed_form() {
        for len in [1, 7, 64, 70] {
            let x = row(len);
            let (gamma, beta): (Vec<f64>, Vec<f64>) = (0..len).map(|i| (0.5 + i as f64 * 0.1, i as f64 * -0.2)).unzip();
            let n = len as f64;
            let mean = x.iter().sum::<f64>() / n;
            let deviation = (x.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n + 1e-5).sqrt();
            let mut got = x.clone();
            layer_norm_row(&mut got, (&gamma, &beta), 1e-5);
            for i in 0..len {
                let exact = (x[i] - mean) / deviation * gamma[i] + beta[i];
                assert!((got[i] - exact).abs() <= 1e-13, "len {len}: {} vs {exact}", got[i]);
            }
        }
        let mut short = [1.0f32, 2.0];
        layer_norm_row(&mut short, (&[1.0], &[0.0, 0.0]), 1e-5);
        assert!(short.iter().all(|x| x.is_nan()));
    }

    #[test]
    fn the_parameter_sums_are_their_closed_forms_over_several_groups() {
        let (width, rows) = (9, 150);
        let x: Vec<f64> = (0..width * rows).map(|i| ((i as f64) * 0.377).sin() * 3.0).collect();
        let g: Vec<f64> = (0..width * rows).map(|i| ((i as f64) * 0.211).cos()).collect();
        let sums = layer_norm_parameter_sums("test", (&x, &g), width, 1e-5).unwrap();
        let mut exact = vec![0.0; 2 * width];
        for (x, g) in x.chunks(width).zip(g.chunks(width)) {
            let mean = x.iter().sum::<f64>() / width as f64;
            let deviation = (x.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / width as f64 + 1e-5).sqrt();
            for j in 0..width {
                exact[j] += g[j] * (x[j] - mean) / deviation;
                exact[width + j] += g[j];
            }
        }
        for (got, exact) in sums.iter().zip(&exact) {
            assert!((got - exact).abs() <= 1e-12 * (1.0 + exact.abs()), "{got} vs {exact}");
        }
        assert_eq!(layer_norm_parameter_sums("test", (&x, &g), 0, 1e-5).unwrap(), Vec::<f64>::new());
    }
}
