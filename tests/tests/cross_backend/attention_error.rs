//! How far a backend's `attention_weights`, and its gradient, may be from the reference's. Every backend computes
//! the default's chain, each op rounded in the dtype (a fused kernel takes the same steps, or rounds less): the
//! scores `query keyᵀ` (a matmul), times the scale as rounded, the later keys set to -inf when causal, and the softmax
//! over the last axis. The backward rule is `ds = softmax_backward(p, dp)` from the weights as computed, then
//! `scale ds key` by the query and `scale dsᵀ query` by the key. A masked weight is exactly 0 on every backend, and so
//! is its `ds`: neither has an error.

use crate::support::error_bound::unit_roundoff;
use crate::support::interpret::{Operands, quantum_exponent};
use crate::support::program::Step;
use crate::support::reference::attention::{AttentionSizes, query_and_key, weights};
use crate::support::softmax_error::softmax_lane;
use crate::support::values::{Floats, round_to};
use dispatch_core::DType;

/// The step's arguments: `current_is_query`, the scale as rounded to the dtype, `causal`.
fn arguments(step: &Step, dtype: DType) -> (bool, f64, bool) {
    let Step::AttentionWeights { current_is_query, scale, causal, .. } = step else {
        panic!("{step:?} is no attention_weights")
    };
    (*current_is_query, round_to(dtype, *scale), *causal)
}

fn magnitudes(values: &[f64]) -> Vec<f64> {
    values.iter().map(|v| v.abs()).collect()
}

fn plus(a: &[f64], b: &[f64]) -> Vec<f64> {
    a.iter().zip(b).map(|(a, b)| a + b).collect()
}

/// The rounding of a sum of `n` products, relative to the sum of their magnitudes, as for every matmul (see
/// `error_bound`).
fn sum_rounding(n: usize, u: f64) -> f64 {
    2.0 * u * (1.0 + (n as f64).sqrt())
}

/// The error estimate of the weights, from the current tensor's `error` (the other operand is exact).
/// - A score `s = Σ q k` is off by the errors carried through the other operand's magnitudes, and by the matmul's
///   rounding of the products' magnitudes (those of the values as the backend holds them, `|q| + e`).
/// - The scaled score `c s` rounds once more: `|c| e_s + u (|c s| + |c| e_s)`.
/// - Each row's softmax over the keys it attends to, as `softmax_lane` bounds it (the -inf entries add exact zeros
///   to its sum), plus the smallest subnormal of the dtype twice over, where `exp` or the division underflows. A row
///   that attends to one key is exactly 1 (`exp(x - x)` divided by itself), which `softmax_lane` does not know.
///
/// Where a score could overflow the dtype, the estimate is infinite.
pub fn forward(step: &Step, current: &Floats, error: &[f64], operands: &Operands) -> Vec<f64> {
    let dtype = current.dtype;
    let (current_is_query, scale, causal) = arguments(step, dtype);
    let u = unit_roundoff(dtype);
    let other = &operands.floats[0];
    let [query, key] = query_and_key(current_is_query, current, other);
    let exact = vec![0.0; other.values.len()];
    let [query_error, key_error] = query_and_key(current_is_query, error, &exact);
    let sizes = AttentionSizes::of(query, key).expect("the step ran on these operands");
    let (query_magnitude, key_magnitude) = (magnitudes(&query.values), magnitudes(&key.values));
    let scores = sizes.scores(&query.values, &key.values);
    let carried = plus(&sizes.scores(query_error, &key_magnitude), &sizes.scores(&query_magnitude, key_error));
    let reach = sizes.scores(&plus(&query_magnitude, query_error), &plus(&key_magnitude, key_error));
    let rounding = sum_rounding(sizes.width, u);
    let largest = reach.iter().fold(0.0, |m: f64, r| m.max(r * (1.0 + rounding)));
    if round_to(dtype, largest.max(scale.abs() * largest) * (1.0 + u)).is_infinite() {
        return vec![f64::INFINITY; scores.len()];
    }
    let underflow = 2.0 * 2f64.powi(-quantum_exponent(dtype));
    let mut bound = vec![0.0; scores.len()];
    for (start, attended) in sizes.rows(causal).filter(|&(_, attended)| attended > 1) {
        let row = start..start + attended;
        let scaled: Vec<f64> = scores[row.clone()].iter().map(|score| scale * score).collect();
        let errors: Vec<f64> = row
            .clone()
            .map(|at| {
                let score_error = carried[at] + rounding * reach[at];
                scale.abs() * score_error + u * ((scale * scores[at]).abs() + scale.abs() * score_error)
            })
            .collect();
        let (p, relative) = softmax_lane(&scaled, &errors, u);
        for (at, (p, relative)) in row.zip(p.iter().zip(relative)) {
            bound[at] = p * relative + underflow;
        }
    }
    bound
}

/// The error estimate of the gradient by the current tensor, given the weights' estimate `weight_errors`, the
/// upstream gradient `g` and its estimate `e`. Row by row, with `p` the exact weights, `E` their estimate and
/// `d = Σ g p`:
/// - the computed `d` is off by `Σ (e (p + E) + |g| E)`, and by the rounding of its products and sum;
/// - `ds = p (g - d)` is off by `E |g - d| + (p + E)(e + δd)`, and by the subtraction's and product's roundings,
///   `u` each of at most `(p + E)(|g| + e + |d| + δd)`, counted `3u` for the products of `1 + u`.
///
/// Then the product with the other operand (exact) carries those errors through its magnitudes, rounds as a matmul
/// of the magnitudes `|ds| + δds` does, and the scale rounds once more.
pub fn backward(
    step: &Step,
    current: &Floats,
    weight_errors: &[f64],
    operands: &Operands,
    g: &[f64],
    e: &[f64],
) -> Vec<f64> {
    let dtype = current.dtype;
    let (current_is_query, scale, causal) = arguments(step, dtype);
    let u = unit_roundoff(dtype);
    let [query, key] = query_and_key(current_is_query, current, &operands.floats[0]);
    let sizes = AttentionSizes::of(query, key).expect("the step ran on these operands");
    let p = weights(&sizes, query, key, scale, causal);
    let (mut ds, mut ds_error) = (vec![0.0; p.len()], vec![0.0; p.len()]);
    for (start, attended) in sizes.rows(causal) {
        let row = start..start + attended;
        let within = |at: usize| (p[at] + weight_errors[at], g[at].abs() + e[at]);
        let dot: f64 = row.clone().map(|at| g[at] * p[at]).sum();
        let carried: f64 = row.clone().map(|at| e[at] * within(at).0 + g[at].abs() * weight_errors[at]).sum();
        let reach: f64 = row.clone().map(|at| within(at).0 * within(at).1).sum();
        // The kernel sums the whole row: the masked keys add exact zeros.
        let dot_error = carried + (u + sum_rounding(sizes.keys, u)) * reach;
        for at in row {
            let (weight, upstream) = within(at);
            ds[at] = p[at] * (g[at] - dot);
            ds_error[at] = weight_errors[at] * (g[at] - dot).abs()
                + weight * (e[at] + dot_error)
                + 3.0 * u * weight * (upstream + dot.abs() + dot_error);
        }
    }
    let (other, terms) = if current_is_query { (key, sizes.keys) } else { (query, sizes.queries) };
    let product = |ds: &[f64]| {
        let other = magnitudes(&other.values);
        if current_is_query { sizes.by_query(ds, &other) } else { sizes.by_key(ds, &other) }
    };
    let carried = product(&ds_error);
    let reach = product(&plus(&magnitudes(&ds), &ds_error));
    let rounding = sum_rounding(terms, u) + 2.0 * u;
    carried.iter().zip(reach).map(|(carried, reach)| scale.abs() * (carried + rounding * reach)).collect()
}
