//! How far a backend's value may be from the reference's: an estimate per element of the error the roundings so
//! far may have made (the reference is exact but for one rounding per step). Each step carries its inputs' errors
//! through (by its derivative, or its own op on the errors for steps that move or sum values) and adds its own
//! rounding, `u` per rounding of the output's dtype, `u·(1 + √n)` of the magnitude for a sum of `n` terms in any
//! order. The planner keeps only steps whose estimate stays well inside the tolerance, and decisions whose margin
//! is well outside it.

use crate::support::attention_error;
use crate::support::gradient::derivative;
use crate::support::interpret::{Operands, apply};
use crate::support::layer_norm_error;
use crate::support::program::{Binary, Reduce, ReduceDim, Scalar, Step, Unary};
use crate::support::reference::elementwise::{
    AdamScalars, gelu_derivative, gelu_second_derivative, normal_cdf, normal_density,
};
use crate::support::reference::reduce::{lanes, unlanes};
use crate::support::softmax_error::{self, softmax_lane};
use crate::support::values::{Floats, Value, broadcast_position, count, precision_bits, unravel};
use dispatch_core::DType;
use dispatch_core::backend::AdamStep;

/// The unit roundoff of a dtype: the largest relative error of one rounding to nearest.
pub fn unit_roundoff(dtype: DType) -> f64 {
    2f64.powi(-precision_bits(dtype))
}

/// Roundings a composite or transcendental function may make on top of its final one.
pub fn roundings(op: Unary) -> f64 {
    match op {
        Unary::Sqrt | Unary::Recip => 1.0,
        Unary::Exp | Unary::Log | Unary::Tanh | Unary::Sin | Unary::Cos => 2.0,
        _ => 4.0,
    }
}

/// `gelu_backward`'s estimate at tensor value `x` and gradient `g`, `e` being the error of the current operand
/// (the tensor when `by_tensor`): the input's error through the derivative, and the op's own roundings. Those are
/// relative to the terms `Φ(x)` and `x φ(x)` rather than to their sum, which passes through zero near `x = -0.75`;
/// the composition rounds about ten times, `erf` of a rounded argument included.
fn gelu_backward_error(x: f64, g: f64, e: f64, by_tensor: bool, u: f64) -> f64 {
    let slope = if by_tensor { (g * gelu_second_derivative(x)).abs() } else { gelu_derivative(x).abs() };
    let terms = normal_cdf(x) + (x * normal_density(x)).abs();
    slope * e + 12.0 * u * g.abs() * terms
}

/// The step's op with `current` replaced by `values` (its dims kept) and operands replaced as `operands` says.
fn on(step: &Step, current: &Floats, values: Vec<f64>, operands: &Operands) -> Vec<f64> {
    match apply(step, &Value::Float(Floats { values, ..current.clone() }), operands) {
        Ok(Value::Float(output)) => output.values,
        other => panic!("{step:?} ran on the current tensor but gives {other:?} on its errors"),
    }
}

fn mapped(operands: &Operands, f: impl Fn(f64) -> f64) -> Operands {
    let floats =
        operands.floats.iter().map(|o| Floats { values: o.values.iter().map(|&x| f(x)).collect(), ..o.clone() });
    Operands { floats: floats.collect(), ..operands.clone() }
}

/// The step that carries a step's errors when run on them: the step itself with its scalar arguments set to 0, so
/// that it copies no value in as an error; for a minimum, the maximum: the entry a minimum picks may be any within
/// the errors of the smallest, and `|min(x + e) - min(x)|` is bounded by the largest error of the lane, not the
/// smallest.
fn carrying_errors(step: &Step) -> Step {
    match step {
        Step::MaskFill { mask, .. } => Step::MaskFill { mask: mask.clone(), value: 0.0 },
        Step::Unfold2d { window, .. } => Step::Unfold2d { window: *window, pad: 0.0 },
        Step::Reduce(Reduce::Min) => Step::Reduce(Reduce::Max),
        Step::ReduceDim(ReduceDim::Min, axis) => Step::ReduceDim(ReduceDim::Max, *axis),
        other => other.clone(),
    }
}

/// The error estimate of `output`, the result of `step` on `input` whose estimate is `error`.
pub fn propagate(step: &Step, input: &Value, error: &[f64], operands: &Operands, output: &Value) -> Vec<f64> {
    let Value::Float(y) = output else { return vec![] };
    if y.exact {
        return vec![0.0; y.values.len()];
    }
    let Value::Float(x) = input else {
        // From ints or bools and exact operands: only the output's own rounding.
        return y.values.iter().map(|v| unit_roundoff(y.dtype) * v.abs()).collect();
    };
    let u = unit_roundoff(y.dtype);
    let own = |k: f64, j: usize| k * u * y.values[j].abs();
    let elementwise = |slope: &dyn Fn(f64) -> f64, k: f64| -> Vec<f64> {
        (0..y.values.len()).map(|j| slope(x.values[j]).abs() * error[j] + own(k, j)).collect()
    };
    let zeros = mapped(operands, |_| 0.0);
    let magnitudes = mapped(operands, f64::abs);
    match step {
        Step::Unary(Unary::Neg | Unary::Relu | Unary::Abs)
        | Step::Clamp { .. }
        | Step::ThroughHost
        | Step::HostOp
        | Step::ToDevice => error.to_vec(),
        Step::Cast(_) => elementwise(&|_| 1.0, 1.0),
        Step::Unary(op) => elementwise(&|v| derivative(*op, v), roundings(*op)),
        Step::Scalar { op: Scalar::Add, .. } => elementwise(&|_| 1.0, 1.0),
        Step::Scalar { op: Scalar::Mul, scalar, .. } => elementwise(&|_| *scalar, 1.0),
        Step::Scalar { op: Scalar::Powf, scalar, .. } => elementwise(&|v| scalar * v.powf(scalar - 1.0), 2.0),
        Step::Scalar { op: Scalar::Greater, .. } => vec![0.0; y.values.len()],
        Step::Binary { op, current_first, .. } => {
            let other = &operands.floats[0];
            (0..y.values.len())
                .map(|j| {
                    let out = unravel(j, &y.dims);
                    let at = broadcast_position(&out, &x.dims);
                    let (e, w) = (error[at], other.values[broadcast_position(&out, &other.dims)]);
                    match op {
                        Binary::Mul => w.abs() * e + own(1.0, j),
                        Binary::Div if *current_first => e / w.abs() + own(1.0, j),
                        Binary::GeluBackward => {
                            let (v, g) = if *current_first { (x.values[at], w) } else { (w, x.values[at]) };
                            gelu_backward_error(v, g, e, *current_first, u)
                        }
                        _ => e + own(1.0, j),
                    }
                })
                .collect()
        }
        Step::Reduce(Reduce::Prod) | Step::ReduceDim(ReduceDim::Prod, _) => {
            let axis = if let Step::ReduceDim(_, axis) = step { *axis } else { 0 };
            let flat = |f: &Floats| {
                if let Step::Reduce(_) = step {
                    Floats::new(vec![f.values.len()], f.values.clone(), f.dtype)
                } else {
                    f.clone()
                }
            };
            let errors = lanes(&flat(&Floats { values: error.to_vec(), ..x.clone() }), axis);
            lanes(&flat(x), axis)
                .iter()
                .zip(&errors)
                .map(|(lane, errors)| {
                    let others = |k: usize| {
                        lane.iter().enumerate().filter(|&(l, _)| l != k).map(|(_, v)| v.abs()).product::<f64>()
                    };
                    let carried: f64 = errors.iter().enumerate().map(|(k, e)| e * others(k)).sum();
                    carried + lane.len() as f64 * u * lane.iter().map(|v| v.abs()).product::<f64>()
                })
                .collect()
        }
        Step::ReduceDim(op @ (ReduceDim::Var(_) | ReduceDim::LogSoftmax | ReduceDim::Softmax), axis) => {
            lane_error(*op, x, error, *axis, u)
        }
        Step::LayerNorm { .. } => layer_norm_error::forward(step, x, error, operands, y, u),
        Step::AttentionWeights { .. } => attention_error::forward(step, x, error, operands),
        Step::Adam { options, .. } => adam_step_error(options, x, error, operands, u),
        Step::CrossEntropy { .. } => softmax_error::cross_entropy_forward(x, error, &operands.ints[0], u),
        // Steps that move values, or pick one of several: their own op on the errors (all at least 0) carries them
        // (`carrying_errors`).
        Step::Reshape(_)
        | Step::Permute(_)
        | Step::SwapDims(..)
        | Step::Narrow { .. }
        | Step::Cat { .. }
        | Step::Stack { .. }
        | Step::Expand(_)
        | Step::Repeat(_)
        | Step::Flip(_)
        | Step::Squeeze(_)
        | Step::Unsqueeze(_)
        | Step::SliceAssign { .. }
        | Step::IndexSelect { .. }
        | Step::Gather { .. }
        | Step::Embedding { .. }
        | Step::MaskWhere { .. }
        | Step::MaskFill { .. }
        | Step::Unfold2d { .. }
        | Step::Reduce(Reduce::Max | Reduce::Min)
        | Step::ReduceDim(ReduceDim::Max | ReduceDim::Min, _)
        | Step::MaxPool2d(_) => on(&carrying_errors(step), x, error.to_vec(), &zeros).iter().map(|e| e.abs()).collect(),
        // Sums: the errors carried by the magnitudes of the coefficients, and the rounding of a sum of n terms.
        _ => {
            let multiplies = matches!(
                step,
                Step::Matmul { .. }
                    | Step::Conv2d { .. }
                    | Step::Conv1d { .. }
                    | Step::ConvTranspose2d { .. }
                    | Step::Conv2dWeightGradient { .. }
            );
            let carried = on(step, x, error.to_vec(), if multiplies { &magnitudes } else { &zeros });
            let magnitude = on(step, x, x.values.iter().map(|v| v.abs()).collect(), &magnitudes);
            let averages = matches!(
                step,
                Step::Reduce(Reduce::Mean)
                    | Step::ReduceDim(ReduceDim::Mean, _)
                    | Step::AvgPool2d(_)
                    | Step::AdaptiveAvgPool2d(_)
            );
            let terms: Vec<f64> = if averages {
                vec![count(&x.dims) as f64 / y.values.len().max(1) as f64; y.values.len()]
            } else {
                on(step, x, vec![1.0; x.values.len()], &mapped(operands, |_| 1.0))
            };
            (0..y.values.len()).map(|j| carried[j] + 2.0 * u * (1.0 + terms[j].sqrt()) * magnitude[j]).collect()
        }
    }
}

/// An Adam step's estimate, row by row: the parameter's error through the decay and (Adam's penalty) the
/// gradient, and each op's rounding relative to its terms (the moments' sums may cancel, their terms do not). The
/// denominator's error is bounded by the square root's change over the second moment's error, which stays finite
/// where the moment is 0; the factor 2 covers second-order terms.
fn adam_step_error(options: &AdamStep, x: &Floats, error: &[f64], operands: &Operands, u: f64) -> Vec<f64> {
    let (gradient, moments) = (&operands.floats[0], &operands.floats[1]);
    let scalars = AdamScalars::of(options, x.dtype).expect("the step ran with these options");
    let n = x.values.len();
    let mut rows: [Vec<f64>; 3] = Default::default();
    for (i, (&p, &e)) in x.values.iter().zip(error).enumerate() {
        let c = scalars.column(p, gradient.values[i], moments.values[i], moments.values[n + i]);
        let (beta1, rest1) = scalars.first;
        let (_, rest2) = scalars.second;
        let decayed_error = scalars.decay.map_or(e, |decay| decay.abs() * e + u * c.decayed.abs());
        let gradient_error = scalars.penalty.map_or(0.0, |penalty| {
            penalty * decayed_error + 2.0 * u * (c.gradient.abs() + (penalty * c.decayed).abs())
        });
        let first_terms = (beta1 * moments.values[i]).abs() + (rest1 * c.gradient).abs();
        let first_error = rest1 * gradient_error + 3.0 * u * first_terms;
        let second_error = rest2 * (2.0 * c.gradient.abs() + gradient_error) * gradient_error + 4.0 * u * c.second;
        let root = (c.second * scalars.correction).sqrt();
        let lowest = (c.second - second_error).max(0.0) * scalars.correction;
        let denominator_error = (root - lowest.sqrt()) + 3.0 * u * root + u * c.denominator;
        let step_error = if denominator_error < c.denominator {
            let quotient = first_error / c.denominator
                + c.first.abs() * denominator_error / (c.denominator * (c.denominator - denominator_error));
            scalars.step_size * quotient + 3.0 * u * c.step.abs()
        } else {
            f64::INFINITY
        };
        rows[0].push(2.0 * (decayed_error + step_error + u * (c.decayed - c.step).abs()));
        rows[1].push(2.0 * first_error);
        rows[2].push(2.0 * second_error);
    }
    rows.concat()
}

/// Variance and the softmaxes, lane by lane.
pub fn lane_error(op: ReduceDim, x: &Floats, error: &[f64], axis: usize, u: f64) -> Vec<f64> {
    let errors = lanes(&Floats { values: error.to_vec(), ..x.clone() }, axis);
    let per_lane: Vec<Vec<f64>> = lanes(x, axis)
        .iter()
        .zip(&errors)
        .map(|(lane, errors)| {
            let n = lane.len() as f64;
            let roundoff = 4.0 * u * (1.0 + n.sqrt());
            match op {
                ReduceDim::Var(correction) => {
                    let divisor = n - correction as f64;
                    let mean = lane.iter().sum::<f64>() / n;
                    let spread: f64 = lane.iter().map(|v| (v - mean) * (v - mean)).sum::<f64>() / divisor;
                    let carried: f64 = lane.iter().zip(errors).map(|(v, e)| 2.0 * (v - mean).abs() * e).sum::<f64>();
                    // Second order: each deviation is off by its input's error and the computed mean's (the mean of
                    // the errors, and the rounding of a sum of n terms), whose squares the variance sums. First order
                    // they cancel where the spread is 0: equal values whose mean rounds give a variance above 0.
                    let magnitude = lane.iter().map(|v| v.abs()).sum::<f64>() / n;
                    let mean_error = errors.iter().sum::<f64>() / n + roundoff * magnitude;
                    let deviation_error = errors.iter().fold(0.0, |largest: f64, &e| largest.max(e)) + mean_error;
                    let squared = n * deviation_error * deviation_error;
                    vec![(carried + squared) / divisor + roundoff * spread]
                }
                // `exp(x - max) / Σ exp(x - max)`, as both backends compute it: relative errors, derived there.
                ReduceDim::Softmax => {
                    let (p, relative) = softmax_lane(lane, errors, u);
                    p.iter().zip(relative).map(|(p, r)| p * r).collect()
                }
                _ => {
                    // log_softmax: each error plus the softmax-weighted mean error; the log-sum's rounding is about
                    // that of the largest magnitude.
                    let max = lane.iter().fold(f64::NEG_INFINITY, |m, &v| m.max(v));
                    let total: f64 = lane.iter().map(|v| (v - max).exp()).sum();
                    let weights: Vec<f64> = lane.iter().map(|v| (v - max).exp() / total).collect();
                    let mean_error: f64 = weights.iter().zip(errors).map(|(w, e)| w * e).sum();
                    let scale = lane.iter().fold(1.0, |m: f64, v| m.max(v.abs())) + total.ln();
                    errors.iter().map(|e| e + mean_error + roundoff * scale).collect()
                }
            }
        })
        .collect();
    match op {
        ReduceDim::Var(_) => per_lane.into_iter().flatten().collect(),
        _ => unlanes(&x.dims, axis, &per_lane),
    }
}
