//! Reductions: whole-tensor and along an axis (kept with size 1), softmaxes, cross-entropy, layer normalisation,
//! arg-extremes.

use super::index::positions;
use super::{check_axis, split_at};
use crate::support::program::{Reduce, ReduceDim};
use crate::support::values::{Floats, Ints, Outcome, dtype_mismatch, invalid, mismatch, round_to};

/// The lanes of `a` along `axis`, each as its values, in output order.
pub fn lanes(a: &Floats, axis: usize) -> Vec<Vec<f64>> {
    let (outer, len, inner) = split_at(&a.dims, axis);
    let mut lanes = Vec::with_capacity(outer * inner);
    for o in 0..outer {
        for i in 0..inner {
            lanes.push((0..len).map(|k| a.values[(o * len + k) * inner + i]).collect());
        }
    }
    lanes
}

/// Writes one lane of values (of `len` each) back at its place in a tensor of `dims`.
pub fn unlanes(dims: &[usize], axis: usize, lanes: &[Vec<f64>]) -> Vec<f64> {
    let (_, len, inner) = split_at(dims, axis);
    let mut values = vec![0.0; dims.iter().product()];
    for (lane_index, lane) in lanes.iter().enumerate() {
        let (o, i) = (lane_index / inner.max(1), lane_index % inner.max(1));
        for (k, &value) in lane.iter().enumerate() {
            values[(o * len + k) * inner + i] = value;
        }
    }
    values
}

fn extreme(lane: &[f64], largest: bool) -> f64 {
    if lane.iter().any(|x| x.is_nan()) {
        return f64::NAN;
    }
    let pick = |best: f64, &x: &f64| if largest { best.max(x) } else { best.min(x) };
    lane[1..].iter().fold(lane[0], pick)
}

pub fn reduce(op: Reduce, a: &Floats) -> Outcome<Floats> {
    let flat = Floats::new(vec![a.values.len()], a.values.clone(), a.dtype);
    let dim = match op {
        Reduce::Sum => ReduceDim::Sum,
        Reduce::Mean => ReduceDim::Mean,
        Reduce::Prod => ReduceDim::Prod,
        Reduce::Max => ReduceDim::Max,
        Reduce::Min => ReduceDim::Min,
    };
    reduce_dim(dim, &flat, 0)
}

pub fn reduce_dim(op: ReduceDim, a: &Floats, axis: usize) -> Outcome<Floats> {
    check_axis(&a.dims, axis)?;
    let len = a.dims[axis];
    let mut kept = a.dims.clone();
    kept[axis] = 1;
    let per_lane = |f: &dyn Fn(&[f64]) -> f64| lanes(a, axis).iter().map(|lane| f(lane)).collect::<Vec<_>>();
    let values = match op {
        ReduceDim::Sum => per_lane(&|lane| lane.iter().sum()),
        ReduceDim::Mean => per_lane(&|lane| lane.iter().sum::<f64>() / len as f64),
        ReduceDim::Prod => per_lane(&|lane| lane.iter().product()),
        ReduceDim::Max | ReduceDim::Min if len == 0 => return invalid(format!("the extreme of empty axis {axis}")),
        ReduceDim::Max => per_lane(&|lane| extreme(lane, true)),
        ReduceDim::Min => per_lane(&|lane| extreme(lane, false)),
        ReduceDim::Var(correction) => {
            if len <= correction {
                return invalid(format!("variance of {len} entries with correction {correction}"));
            }
            per_lane(&|lane| {
                let mean = lane.iter().sum::<f64>() / len as f64;
                lane.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (len - correction) as f64
            })
        }
        ReduceDim::LogSoftmax | ReduceDim::Softmax => {
            let softened: Vec<Vec<f64>> = lanes(a, axis)
                .iter()
                .map(|lane| {
                    let max = lane.iter().fold(f64::NEG_INFINITY, |m, &x| m.max(x));
                    let log_sum = lane.iter().map(|x| (x - max).exp()).sum::<f64>().ln() + max;
                    let log_softmax = lane.iter().map(|x| x - log_sum);
                    if op == ReduceDim::Softmax { log_softmax.map(f64::exp).collect() } else { log_softmax.collect() }
                })
                .collect();
            return Ok(Floats::new(a.dims.clone(), unlanes(&a.dims, axis, &softened), a.dtype));
        }
    };
    Ok(Floats::new(kept, values, a.dtype))
}

/// The mean cross-entropy of `logits` `[rows, classes]` against class ids `targets` `[rows]`:
/// `-mean(log_softmax(logits, 1)[row, target])`, shape `[1]`; NaN for no rows (a mean of nothing). Checked in the
/// documented order: the logits' rank, the targets' dims, then each target in `0..classes`.
pub fn cross_entropy(logits: &Floats, targets: &Ints) -> Outcome<Floats> {
    let [rows, classes] = logits.dims[..] else {
        return invalid(format!("cross_entropy of logits of dims {:?}", logits.dims));
    };
    if targets.dims != [rows] {
        return mismatch(format!("cross_entropy of {rows} rows against targets of dims {:?}", targets.dims));
    }
    let picks = positions(&targets.values, classes)?;
    let log_softmax = reduce_dim(ReduceDim::LogSoftmax, logits, 1)?;
    let total: f64 = picks.iter().enumerate().map(|(row, &pick)| log_softmax.values[row * classes + pick]).sum();
    Ok(Floats::new(vec![1], vec![-total / rows as f64], logits.dtype))
}

/// One row of a layer normalisation: `x̂ = (x - mean) / s` with `s = sqrt(var + eps)`, the population variance.
pub struct NormalisedRow {
    pub normalised: Vec<f64>,
    pub mean: f64,
    pub variance: f64,
    pub spread: f64,
}

pub fn normalise_row(row: &[f64], eps: f64) -> NormalisedRow {
    let n = row.len() as f64;
    let mean = row.iter().sum::<f64>() / n;
    let variance = row.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / n;
    let spread = (variance + eps).sqrt();
    NormalisedRow { normalised: row.iter().map(|x| (x - mean) / spread).collect(), mean, variance, spread }
}

/// `layer_norm` over the last axis: `x̂ γ + β` row by row, `eps` rounded to the input's dtype as every scalar
/// argument is. Checked in the documented order: the input's rank, then `gamma` (dtype, then shape), then `beta`.
pub fn layer_norm(x: &Floats, gamma: &Floats, beta: &Floats, eps: f64) -> Outcome<Floats> {
    let Some(&width) = x.dims.last() else { return invalid("layer_norm of a tensor without axes") };
    for parameter in [gamma, beta] {
        dtype_mismatch(x.dtype, parameter.dtype)?;
        if parameter.dims != [width] {
            return mismatch(format!("layer_norm over {width} entries with a parameter of dims {:?}", parameter.dims));
        }
    }
    let eps = round_to(x.dtype, eps);
    let mut values = Vec::with_capacity(x.values.len());
    for row in x.values.chunks(width.max(1)).filter(|_| width > 0) {
        let row = normalise_row(row, eps);
        values.extend(row.normalised.iter().enumerate().map(|(i, v)| v * gamma.values[i] + beta.values[i]));
    }
    Ok(Floats::new(x.dims.clone(), values, x.dtype))
}

/// The index of the first largest (or smallest) entry of each lane; NaN entries are skipped by `argmin`, and an
/// empty axis has no index.
pub fn arg_extreme(a: &Floats, axis: usize, largest: bool) -> Outcome<Ints> {
    check_axis(&a.dims, axis)?;
    if a.dims[axis] == 0 {
        return invalid(format!("arg-extreme of empty axis {axis}"));
    }
    let mut kept = a.dims.clone();
    kept[axis] = 1;
    let values = lanes(a, axis)
        .iter()
        .map(|lane| {
            let mut best: Option<(usize, f64)> = None;
            for (k, &x) in lane.iter().enumerate() {
                let better = match best {
                    None => !x.is_nan(),
                    Some((_, b)) => {
                        if largest {
                            x > b
                        } else {
                            x < b
                        }
                    }
                };
                if better {
                    best = Some((k, x));
                }
            }
            best.map_or(0, |(k, _)| k as i64)
        })
        .collect();
    Ok(Ints { dims: kept, values })
}
