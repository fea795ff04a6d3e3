//! How far a backend's `layer_norm`, and its gradient, may be from the reference's. The bound is that of the
//! default's chain of ops, each rounded in the dtype (mean, subtract, square, mean, add `eps`, square root,
//! divide, scale, shift), which also bounds a kernel that computes in more precision and rounds once. The rounding
//! of a mean of `n` terms is `2u·(1 + √n)` of the mean magnitude, as for every sum (see `error_bound`). The
//! backward pass computes the statistics again, so its gradient carries their rounding too.

use crate::support::interpret::Operands;
use crate::support::program::{LayerNormArgument, Step};
use crate::support::reference::reduce::{NormalisedRow, normalise_row};
use crate::support::values::{Floats, round_to};

/// One row's statistics, and what rounding may move them by.
struct RoundedRow {
    row: NormalisedRow,
    /// The error of each normalised value `x̂`.
    normalised_errors: Vec<f64>,
    /// The relative error of the spread `s = sqrt(var + eps)`.
    spread_relative: f64,
}

fn rounded_row(values: &[f64], eps: f64, u: f64) -> RoundedRow {
    let row = normalise_row(values, eps);
    let n = values.len() as f64;
    let terms = 1.0 + n.sqrt();
    let mean_error = 2.0 * u * terms * values.iter().map(|x| x.abs()).sum::<f64>() / n + u * row.mean.abs();
    let deviation_errors: Vec<f64> = values.iter().map(|x| mean_error + u * (x - row.mean).abs()).collect();
    let variance_error =
        values.iter().zip(&deviation_errors).map(|(x, e)| 2.0 * (x - row.mean).abs() * e + e * e).sum::<f64>() / n
            + 3.0 * u * terms * row.variance;
    // The add and the square root round once each; `s²` is `var + eps` with `eps` as rounded.
    let spread_relative = variance_error / (2.0 * row.spread * row.spread) + 2.0 * u;
    let normalised_errors = deviation_errors
        .iter()
        .zip(&row.normalised)
        .map(|(e, v)| e / row.spread + v.abs() * (spread_relative + u))
        .collect();
    RoundedRow { row, normalised_errors, spread_relative }
}

/// The input, `gamma` and `beta` of the step, and the error estimate of each (only the current tensor's is not 0).
fn arguments<'a>(
    current_as: LayerNormArgument,
    current: &'a Floats,
    error: &[f64],
    operands: &'a Operands,
) -> ([&'a Floats; 3], [Vec<f64>; 3]) {
    let others = [&operands.floats[0], &operands.floats[1]];
    let none = |floats: &Floats| vec![0.0; floats.values.len()];
    (current_as.arrange(current, others), current_as.arrange(error.to_vec(), others.map(none)))
}

fn mean(values: impl Iterator<Item = f64>, n: usize) -> f64 {
    values.sum::<f64>() / n as f64
}

/// The error estimate of `output` (`y = x̂ γ + β`), from the current tensor's `error`: carried through the
/// normalisation's Jacobian `(δ_ij - 1/n - x̂_i x̂_j / n) / s` (or `x̂` for `gamma`, 1 for `beta`), plus the chain's
/// own rounding.
pub fn forward(step: &Step, current: &Floats, error: &[f64], operands: &Operands, output: &Floats, u: f64) -> Vec<f64> {
    let Step::LayerNorm { current_as, eps, .. } = step else { panic!("{step:?} is no layer_norm") };
    let ([x, gamma, _], [ex, eg, eb]) = arguments(*current_as, current, error, operands);
    let width = gamma.values.len();
    let eps = round_to(x.dtype, *eps);
    let mut bound = Vec::with_capacity(output.values.len());
    for (r, values) in x.values.chunks(width.max(1)).enumerate().filter(|_| width > 0) {
        let RoundedRow { row, normalised_errors, .. } = rounded_row(values, eps, u);
        let ex = &ex[r * width..(r + 1) * width];
        let (mean_error, mean_along) =
            (mean(ex.iter().copied(), width), mean(ex.iter().zip(&row.normalised).map(|(e, v)| e * v.abs()), width));
        for i in 0..width {
            let (v, scale, y) = (row.normalised[i], gamma.values[i].abs(), output.values[r * width + i]);
            let carried = scale / row.spread * (ex[i] + mean_error + v.abs() * mean_along) + v.abs() * eg[i] + eb[i];
            let own = scale * normalised_errors[i] + u * (v * scale).abs() + u * y.abs();
            bound.push(carried + own);
        }
    }
    bound
}

/// What the backward pass of `layer_norm` may get wrong beyond `gradient_error`'s generic estimate, given the
/// upstream gradient `g` and its error `e`: by the input, the error `e` carried through the Jacobian's magnitudes,
/// the rounding of `(γg - mean(γg) - x̂ mean(γg x̂)) / s` and of the recomputed `x̂` and `s`; by `gamma`, the rounding
/// of the recomputed `x̂` it is summed against. `None` for other steps.
pub fn backward(step: &Step, current: &Floats, operands: &Operands, g: &[f64], e: &[f64], u: f64) -> Option<Vec<f64>> {
    let Step::LayerNorm { current_as, eps, .. } = step else { return None };
    let ([x, gamma, _], _) = arguments(*current_as, current, &vec![0.0; current.values.len()], operands);
    let width = gamma.values.len();
    let eps = round_to(x.dtype, *eps);
    let rows = x.values.chunks(width.max(1)).zip(g.chunks(width.max(1))).zip(e.chunks(width.max(1)));
    let mut bound = vec![0.0; current.values.len()];
    for (r, ((values, g), e)) in rows.enumerate().filter(|_| width > 0) {
        let RoundedRow { row, normalised_errors, spread_relative } = rounded_row(values, eps, u);
        let (v, dv) = (&row.normalised, &normalised_errors);
        match current_as {
            LayerNormArgument::Input => {
                let scaled: Vec<f64> = g.iter().zip(&gamma.values).map(|(g, c)| g * c).collect();
                let along = mean(scaled.iter().zip(v).map(|(s, v)| s * v), width);
                let mean_scaled = mean(scaled.iter().copied(), width);
                let magnitude = (
                    mean(scaled.iter().map(|s| s.abs()), width),
                    mean(scaled.iter().zip(v).map(|(s, v)| (s * v).abs()), width),
                );
                let carried = (
                    mean(e.iter().zip(&gamma.values).map(|(e, c)| e * c.abs()), width),
                    mean(e.iter().zip(&gamma.values).zip(v).map(|((e, c), v)| (e * c * v).abs()), width),
                );
                let recomputed = mean(scaled.iter().zip(dv).map(|(s, d)| s.abs() * d), width);
                let terms = 1.0 + (width as f64).sqrt();
                for i in 0..width {
                    let gradient = (scaled[i] - mean_scaled - v[i] * along) / row.spread;
                    bound[r * width + i] = (e[i] * gamma.values[i].abs()
                        + carried.0
                        + v[i].abs() * carried.1
                        + 4.0 * u * terms * (scaled[i].abs() + magnitude.0 + v[i].abs() * magnitude.1)
                        + dv[i] * along.abs()
                        + v[i].abs() * recomputed)
                        / row.spread
                        + spread_relative * gradient.abs();
                }
            }
            LayerNormArgument::Gamma => {
                for i in 0..width {
                    bound[i] += g[i].abs() * dv[i];
                }
            }
            LayerNormArgument::Beta => {}
        }
    }
    Some(bound)
}
