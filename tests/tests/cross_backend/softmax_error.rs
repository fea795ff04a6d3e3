//! How far a backend's `softmax` and `cross_entropy` may be from the reference's, and what their backward rules add
//! to a gradient's error. Both backends compute softmax as `exp(x - max) / Σ exp(x - max)` along the lane, op by op
//! in the dtype (candle rounds every op in F16 and BF16; ndarray computes those in f32 and rounds once, which errs
//! less). `Autodiff` differentiates softmax from its rounded output, and cross_entropy from a softmax it computes
//! again from the logits.

use crate::support::error_bound::{lane_error, roundings};
use crate::support::interpret::Operands;
use crate::support::program::{ReduceDim, Step, Unary};
use crate::support::reference::reduce::{lanes, reduce_dim, unlanes};
use crate::support::values::{Floats, Ints};

/// One lane's softmax `p`, and a bound on the relative error of each entry as a backend computes it from values
/// up to `errors` away from the lane's.
/// - Carried: `e_i + Σ p_j e_j`, since `d log p_i = dx_i - Σ p_j dx_j` (the max cancels).
/// - The numerator: `x - max` rounds by `u|x - max|`, which `exp` turns into a relative error, and `exp` rounds as
///   `roundings` counts; both are exact (0, then 1) at the maximum of a lane nothing moved.
/// - The denominator: its terms' errors weighted by `p`, and its sum's rounding, positive terms so `(n - 1)u` of
///   the sum at most, or the `2u(1 + √n)` taken for every sum where that is smaller.
/// - The division rounds once.
pub fn softmax_lane(lane: &[f64], errors: &[f64], u: f64) -> (Vec<f64>, Vec<f64>) {
    let n = lane.len() as f64;
    let max = lane.iter().fold(f64::NEG_INFINITY, |m, &x| m.max(x));
    let exps: Vec<f64> = lane.iter().map(|x| (x - max).exp()).collect();
    let total: f64 = exps.iter().sum();
    let p: Vec<f64> = exps.iter().map(|exp| exp / total).collect();
    let unmoved = errors.iter().all(|&e| e == 0.0);
    let numerator: Vec<f64> = lane
        .iter()
        .map(|&x| if unmoved && x == max { 0.0 } else { u * ((x - max).abs() + roundings(Unary::Exp)) })
        .collect();
    let carried: f64 = p.iter().zip(errors).map(|(p, e)| p * e).sum();
    let sum_rounding = u * (n - 1.0).max(0.0).min(2.0 * (1.0 + n.sqrt()));
    let denominator = p.iter().zip(&numerator).map(|(p, r)| p * r).sum::<f64>() + sum_rounding;
    let relative = errors.iter().zip(&numerator).map(|(e, r)| e + carried + r + denominator + u).collect();
    (p, relative)
}

/// The error estimate of `cross_entropy(logits, targets)` (`[1]`): log_softmax's estimate at each row's target,
/// averaged, and the rounding of that mean of `rows` terms (`2u(1 + √rows)` of the mean magnitude, as for every
/// mean; it covers the `1/rows` rounded to the dtype and the product with it). Nothing to round for no rows.
pub fn cross_entropy_forward(logits: &Floats, error: &[f64], targets: &Ints, u: f64) -> Vec<f64> {
    let classes = logits.dims[1];
    let log_softmax = reduce_dim(ReduceDim::LogSoftmax, logits, 1).expect("cross_entropy ran on these logits");
    let log_errors = lane_error(ReduceDim::LogSoftmax, logits, error, 1, u);
    let picked = targets.values.iter().enumerate().map(|(row, &target)| row * classes + target as usize);
    let (carried, magnitude) = picked.fold((0.0, 0.0), |(carried, magnitude), at| {
        (carried + log_errors[at], magnitude + log_softmax.values[at].abs())
    });
    let rows = targets.values.len().max(1) as f64;
    vec![(carried + 2.0 * u * (1.0 + rows.sqrt()) * magnitude) / rows]
}

/// What the backward rules of `softmax` and `cross_entropy` may get wrong beyond `gradient_error`'s generic estimate
/// (which carries the upstream gradient's error `e` and rounds the rule's last few ops), given the input `x` with
/// its forward errors and the upstream gradient `g`; `None` for other steps.
pub fn backward(step: &Step, x: &Floats, x_errors: &[f64], operands: &Operands, g: &[f64], u: f64) -> Option<Vec<f64>> {
    match step {
        Step::ReduceDim(ReduceDim::Softmax, axis) => Some(softmax_backward(x, x_errors, *axis, g, u)),
        Step::CrossEntropy { .. } => Some(cross_entropy_backward(x, x_errors, &operands.ints[0], g[0], u)),
        _ => None,
    }
}

/// `dx = y (g - Σ g y)` from the output `y = p (1 + ρ)` as computed: `p_i ρ_i |g_i - Σ g p|` and
/// `p_i Σ |g_j| p_j ρ_j` from the rounded `y`, and the rounding of the products `g y` and of their sum.
fn softmax_backward(x: &Floats, x_errors: &[f64], axis: usize, g: &[f64], u: f64) -> Vec<f64> {
    let errors = lanes(&Floats { values: x_errors.to_vec(), ..x.clone() }, axis);
    let upstream = lanes(&Floats { values: g.to_vec(), ..x.clone() }, axis);
    let per_lane: Vec<Vec<f64>> = lanes(x, axis)
        .iter()
        .zip(&errors)
        .zip(&upstream)
        .map(|((lane, errors), g)| {
            let (p, relative) = softmax_lane(lane, errors, u);
            let n = lane.len() as f64;
            let dot: f64 = g.iter().zip(&p).map(|(g, p)| g * p).sum();
            let magnitude: f64 = g.iter().zip(&p).map(|(g, p)| (g * p).abs()).sum();
            let moved: f64 = g.iter().zip(&p).zip(&relative).map(|((g, p), r)| (g * p).abs() * r).sum();
            let sum_error = moved + u * magnitude + 2.0 * u * (1.0 + n.sqrt()) * magnitude;
            p.iter().zip(&relative).zip(g).map(|((p, r), g)| p * (r * (g - dot).abs() + sum_error)).collect()
        })
        .collect();
    unlanes(&x.dims, axis, &per_lane)
}

/// `dx = (softmax(x) - one_hot(targets)) g / rows` with the softmax computed again: its error, `|g| / rows` times
/// `p ρ` (the subtraction, the `1/rows` and the products round as the generic estimate has it).
fn cross_entropy_backward(x: &Floats, x_errors: &[f64], targets: &Ints, g: f64, u: f64) -> Vec<f64> {
    let classes = x.dims[1];
    let scale = g.abs() / targets.values.len() as f64;
    let rows = x.values.chunks(classes.max(1)).zip(x_errors.chunks(classes.max(1))).filter(|_| classes > 0);
    rows.flat_map(|(row, errors)| {
        let (p, relative) = softmax_lane(row, errors, u);
        p.iter().zip(relative).map(|(p, r)| scale * p * r).collect::<Vec<_>>()
    })
    .collect()
}
