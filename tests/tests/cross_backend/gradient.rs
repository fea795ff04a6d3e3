//! The reference's gradient of `Σ w ⊙ output` by the program's input, in reverse over the trace. A step that is
//! affine in the current tensor (layout, sums, products with an operand, convolutions...) is differentiated
//! exactly by probing it with each unit vector; the others by their derivative as the docs define it, ties and
//! kinks included (relu' (0) = 0, |x|' (0) = 0, maximum's gradient to `lhs` on ties, extremes share theirs
//! evenly among tied entries, max_pool2d's to the first maximum).

use crate::support::interpret::{Operands, Trace, apply};
use crate::support::program::{Binary, LayerNormArgument, Reduce, ReduceDim, Scalar, Step, Unary};
use crate::support::reference::attention::{self, AttentionSizes, query_and_key};
use crate::support::reference::elementwise::{apply_unary, gelu_derivative, gelu_second_derivative};
use crate::support::reference::reduce::{lanes, normalise_row, reduce_dim, unlanes};
use crate::support::reference::window::max_positions;
use crate::support::values::{Floats, Ints, Value, broadcast, broadcast_position, count, round_to, unravel};

/// The gradient by the input, given the output's weights; zeros when the output does not depend on the input
/// through differentiable steps. `None` if the program failed or does not end in a float tensor.
pub fn input_gradient(steps: &[Step], trace: &Trace, weights: &[f64]) -> Option<Vec<f64>> {
    gradients(steps, trace, weights).map(|mut all| all.pop().unwrap_or_default())
}

/// The gradient by every value of the trace the output depends on differentiably, from the output's back to the
/// input's (zeros where the graph is cut): `all[r]` is the gradient by `trace.values[len - 1 - r]`.
pub fn gradients(steps: &[Step], trace: &Trace, weights: &[f64]) -> Option<Vec<Vec<f64>>> {
    let Some(Value::Float(_)) = trace.last() else { return None };
    let mut all = vec![weights.to_vec()];
    for (k, step) in steps.iter().enumerate().take(trace.values.len() - 1).rev() {
        let next = match &trace.values[k] {
            Value::Float(floats) => {
                vjp(step, floats, &trace.values[k + 1], &trace.operands[k], all.last().expect("one at least"))
            }
            _ => None,
        };
        match next {
            Some(next) => all.push(next),
            None => {
                all.push(vec![0.0; count(trace.values[0].dims())]);
                break;
            }
        }
    }
    Some(all)
}

/// The gradient by `input` of `Σ g ⊙ step(input)` (`output` is what the step gave); `None` where the step cuts the
/// graph.
pub fn vjp(step: &Step, input: &Floats, output: &Value, operands: &Operands, g: &[f64]) -> Option<Vec<f64>> {
    let elementwise = |derivative: &dyn Fn(f64) -> f64| -> Option<Vec<f64>> {
        Some(input.values.iter().zip(g).map(|(&x, &g)| g * derivative(x)).collect())
    };
    let s = |scalar: f64| round_to(input.dtype, scalar);
    match step {
        // `Autodiff` documents that it keeps the output of the functions whose derivative is a function of it, and
        // computes that derivative from the output as held in the dtype: so does the reference.
        Step::Unary(op @ (Unary::Exp | Unary::Sigmoid | Unary::Tanh | Unary::Sqrt | Unary::Recip)) => {
            let Value::Float(y) = output else { unreachable!("a float function gives floats") };
            Some(y.values.iter().zip(g).map(|(&y, &g)| g * derivative_of_output(*op, y)).collect())
        }
        Step::Unary(op) if *op != Unary::Neg => elementwise(&|x| derivative(*op, x)),
        Step::Scalar { op: Scalar::Powf, scalar, .. } => elementwise(&|x| s(*scalar) * x.powf(s(*scalar) - 1.0)),
        // Documented as not differentiable: the graph is cut there (no gradient, not a zero times the derivatives
        // before it, which would be NaN behind a square root of a negative).
        Step::Scalar { op: Scalar::Greater, .. } | Step::Adam { .. } => None,
        Step::Clamp { min, max } => elementwise(&|x| f64::from(u8::from(s(*min) <= x && x <= s(*max)))),
        Step::Binary { op: op @ (Binary::Maximum | Binary::Minimum), current_first, .. } => {
            Some(picked_gradient(*op, input, &operands.floats[0], *current_first, g))
        }
        Step::Binary { op: Binary::GeluBackward, current_first: true, .. } => {
            Some(gelu_backward_gradient(input, &operands.floats[0], g))
        }
        Step::Reduce(op @ (Reduce::Max | Reduce::Min | Reduce::Prod)) => {
            let flat = Floats::new(vec![input.values.len()], input.values.clone(), input.dtype);
            let dim = match op {
                Reduce::Max => ReduceDim::Max,
                Reduce::Min => ReduceDim::Min,
                _ => ReduceDim::Prod,
            };
            Some(lane_gradient(dim, &flat, 0, g))
        }
        Step::ReduceDim(op, axis) if !matches!(op, ReduceDim::Sum | ReduceDim::Mean) => {
            Some(lane_gradient(*op, input, *axis, g))
        }
        Step::LayerNorm { current_as: LayerNormArgument::Input, eps, .. } => {
            Some(layer_norm_gradient(input, &operands.floats[0], *eps, g))
        }
        Step::CrossEntropy { .. } => Some(cross_entropy_gradient(input, &operands.ints[0], g[0])),
        Step::AttentionWeights { current_is_query, scale, causal, .. } => {
            Some(attention_gradient(*current_is_query, input, &operands.floats[0], s(*scale), *causal, g))
        }
        Step::MaxPool2d(window) => {
            let mut gradient = vec![0.0; input.values.len()];
            let positions = max_positions(input, window).expect("max_pool2d ran on this input");
            for (position, &g) in positions.iter().zip(g) {
                if let Some(at) = position {
                    gradient[*at] += g;
                }
            }
            Some(gradient)
        }
        // The gradient is cast back, and passes the identity host op and the move unchanged in value.
        Step::Cast(_) | Step::HostOp | Step::ToDevice => Some(g.to_vec()),
        Step::ThroughHost => None,
        _ => Some(affine_vjp(step, input, operands, g)),
    }
}

pub fn derivative(op: Unary, x: f64) -> f64 {
    let sigmoid = apply_unary(Unary::Sigmoid, x);
    match op {
        Unary::Neg => -1.0,
        Unary::Exp => x.exp(),
        Unary::Log => 1.0 / x,
        Unary::Relu => f64::from(u8::from(x > 0.0)),
        Unary::Sigmoid => sigmoid * (1.0 - sigmoid),
        Unary::Tanh => 1.0 - x.tanh() * x.tanh(),
        Unary::Sqrt => 0.5 / x.sqrt(),
        Unary::Recip => -1.0 / (x * x),
        Unary::Abs => x.signum() * f64::from(u8::from(x != 0.0)),
        Unary::Sin => x.cos(),
        Unary::Cos => -x.sin(),
        Unary::Erf => 2.0 / std::f64::consts::PI.sqrt() * (-x * x).exp(),
        Unary::Gelu => gelu_derivative(x),
        Unary::Silu => sigmoid * (1.0 + x * (1.0 - sigmoid)),
    }
}

/// The derivative of `op` as a function of its output `y`.
fn derivative_of_output(op: Unary, y: f64) -> f64 {
    match op {
        Unary::Exp => y,
        Unary::Sigmoid => y * (1.0 - y),
        Unary::Tanh => 1.0 - y * y,
        Unary::Sqrt => 0.5 / y,
        Unary::Recip => -y * y,
        other => panic!("{other:?} is differentiated by its input"),
    }
}

/// `maximum`/`minimum`: the output's gradient goes to the operand it was picked from, `lhs` on ties, summed
/// over the positions where the current tensor was broadcast.
fn picked_gradient(op: Binary, current: &Floats, other: &Floats, current_first: bool, g: &[f64]) -> Vec<f64> {
    let (lhs, rhs) = if current_first { (current, other) } else { (other, current) };
    let dims = broadcast(&lhs.dims, &rhs.dims).expect("the step ran");
    let mut gradient = vec![0.0; current.values.len()];
    for (index, &g) in g.iter().enumerate() {
        let out = unravel(index, &dims);
        let (x, y) = (lhs.values[broadcast_position(&out, &lhs.dims)], rhs.values[broadcast_position(&out, &rhs.dims)]);
        let lhs_picked = if op == Binary::Maximum { x >= y } else { x <= y };
        if lhs_picked == current_first {
            gradient[broadcast_position(&out, &current.dims)] += g;
        }
    }
    gradient
}

/// `gelu_backward` by its tensor `x`: `g · w · gelu''(x)`, with `w` the gradient operand, summed over the positions
/// where `x` was broadcast.
fn gelu_backward_gradient(x: &Floats, w: &Floats, g: &[f64]) -> Vec<f64> {
    let dims = broadcast(&x.dims, &w.dims).expect("the step ran");
    let mut gradient = vec![0.0; x.values.len()];
    for (index, &g) in g.iter().enumerate() {
        let out = unravel(index, &dims);
        let (at, w) = (broadcast_position(&out, &x.dims), w.values[broadcast_position(&out, &w.dims)]);
        let value = x.values[at];
        gradient[at] += g * w * gelu_second_derivative(value);
    }
    gradient
}

/// Reductions and normalisations along an axis, lane by lane.
fn lane_gradient(op: ReduceDim, input: &Floats, axis: usize, g: &[f64]) -> Vec<f64> {
    let output_dims = if matches!(op, ReduceDim::LogSoftmax | ReduceDim::Softmax) {
        input.dims.clone()
    } else {
        let mut kept = input.dims.clone();
        kept[axis] = 1;
        kept
    };
    let upstream = lanes(&Floats::new(output_dims, g.to_vec(), input.dtype), axis);
    let gradients: Vec<Vec<f64>> = lanes(input, axis)
        .iter()
        .zip(&upstream)
        .map(|(lane, g)| {
            let n = lane.len() as f64;
            match op {
                ReduceDim::Max | ReduceDim::Min => {
                    let pick = |a: f64, b: f64| if op == ReduceDim::Max { a.max(b) } else { a.min(b) };
                    let extreme = lane.iter().copied().reduce(pick).unwrap_or(0.0);
                    let ties = lane.iter().filter(|&&x| x == extreme).count() as f64;
                    lane.iter().map(|&x| if x == extreme { g[0] / ties } else { 0.0 }).collect()
                }
                ReduceDim::Prod => (0..lane.len())
                    .map(|k| g[0] * lane.iter().enumerate().filter(|&(l, _)| l != k).map(|(_, x)| x).product::<f64>())
                    .collect(),
                ReduceDim::Var(correction) => {
                    let mean = lane.iter().sum::<f64>() / n;
                    lane.iter().map(|x| g[0] * 2.0 * (x - mean) / (n - correction as f64)).collect()
                }
                ReduceDim::LogSoftmax | ReduceDim::Softmax => {
                    let max = lane.iter().fold(f64::NEG_INFINITY, |m, &x| m.max(x));
                    let total: f64 = lane.iter().map(|x| (x - max).exp()).sum();
                    let softmax: Vec<f64> = lane.iter().map(|x| (x - max).exp() / total).collect();
                    if op == ReduceDim::LogSoftmax {
                        let sum_g: f64 = g.iter().sum();
                        g.iter().zip(&softmax).map(|(g, p)| g - p * sum_g).collect()
                    } else {
                        let dot: f64 = g.iter().zip(&softmax).map(|(g, p)| g * p).sum();
                        g.iter().zip(&softmax).map(|(g, p)| p * (g - dot)).collect()
                    }
                }
                ReduceDim::Sum | ReduceDim::Mean => unreachable!("affine, probed"),
            }
        })
        .collect();
    unlanes(&input.dims, axis, &gradients)
}

/// `layer_norm` by its input, row by row: `(γg - mean(γg) - x̂ mean(γg x̂)) / s`, with `x̂ = (x - mean) / s` and
/// `s = sqrt(var + eps)` (`eps` rounded to the dtype, as the forward pass takes it).
fn layer_norm_gradient(input: &Floats, gamma: &Floats, eps: f64, g: &[f64]) -> Vec<f64> {
    let width = gamma.values.len();
    let eps = round_to(input.dtype, eps);
    let rows = input.values.chunks(width.max(1)).zip(g.chunks(width.max(1))).filter(|_| width > 0);
    rows.flat_map(|(row, g)| {
        let row = normalise_row(row, eps);
        let scaled: Vec<f64> = g.iter().zip(&gamma.values).map(|(g, c)| g * c).collect();
        let mean = scaled.iter().sum::<f64>() / width as f64;
        let along = scaled.iter().zip(&row.normalised).map(|(s, v)| s * v).sum::<f64>() / width as f64;
        scaled.iter().zip(&row.normalised).map(|(s, v)| (s - mean - v * along) / row.spread).collect::<Vec<_>>()
    })
    .collect()
}

/// `cross_entropy` by its logits, `g` the output's gradient: `(softmax - one_hot(targets)) g / rows`.
fn cross_entropy_gradient(logits: &Floats, targets: &Ints, g: f64) -> Vec<f64> {
    let softmax = reduce_dim(ReduceDim::Softmax, logits, 1).expect("cross_entropy ran on these logits");
    let classes = logits.dims[1];
    let scale = g / targets.values.len() as f64;
    let picked = |at: usize| f64::from(u8::from(targets.values[at / classes] == (at % classes) as i64));
    softmax.values.iter().enumerate().map(|(at, p)| (p - picked(at)) * scale).collect()
}

/// `attention_weights` by its query or its key, `g` the weights' gradient: row by row `ds = p (g - Σ g p)` (0 where
/// a key is masked, as its weight is), then `scale ds key` by the query, `scale dsᵀ query` by the key.
fn attention_gradient(
    current_is_query: bool,
    current: &Floats,
    other: &Floats,
    scale: f64,
    causal: bool,
    g: &[f64],
) -> Vec<f64> {
    let [query, key] = query_and_key(current_is_query, current, other);
    let sizes = AttentionSizes::of(query, key).expect("attention_weights ran on these operands");
    let weights = attention::weights(&sizes, query, key, scale, causal);
    let mut scores_gradient = vec![0.0; weights.len()];
    for (start, attended) in sizes.rows(causal) {
        let row = start..start + attended;
        let dot: f64 = row.clone().map(|at| g[at] * weights[at]).sum();
        for at in row {
            scores_gradient[at] = weights[at] * (g[at] - dot);
        }
    }
    let product = if current_is_query {
        sizes.by_query(&scores_gradient, &key.values)
    } else {
        sizes.by_key(&scores_gradient, &query.values)
    };
    product.iter().map(|entry| scale * entry).collect()
}

/// Whether `vjp` differentiates the step by probing it: the steps affine in the current tensor.
pub fn is_affine(step: &Step) -> bool {
    match step {
        Step::Unary(op) => *op == Unary::Neg,
        Step::Scalar { op, .. } => matches!(op, Scalar::Add | Scalar::Mul),
        Step::Binary { op, current_first, .. } => match op {
            Binary::Maximum | Binary::Minimum => false,
            // Affine in its gradient, not in its tensor (the first operand).
            Binary::GeluBackward => !*current_first,
            _ => true,
        },
        Step::Reduce(op) => matches!(op, Reduce::Sum | Reduce::Mean),
        Step::ReduceDim(op, _) => matches!(op, ReduceDim::Sum | ReduceDim::Mean),
        // Affine in `gamma` and in `beta`, not in the input.
        Step::LayerNorm { current_as, .. } => *current_as != LayerNormArgument::Input,
        Step::Clamp { .. }
        | Step::Adam { .. }
        | Step::CrossEntropy { .. }
        | Step::AttentionWeights { .. }
        | Step::MaxPool2d(_)
        | Step::Cast(_)
        | Step::HostOp
        | Step::ToDevice
        | Step::ThroughHost => false,
        _ => true,
    }
}

/// The Jacobian of a step affine in the current tensor, by input position: the output positions that depend on it
/// and how much, `f(e_i) - f(0)`.
pub fn affine_columns(step: &Step, input: &Floats, operands: &Operands) -> Vec<Vec<(usize, f64)>> {
    let probe = |values: Vec<f64>| match apply(step, &Value::Float(Floats { values, ..input.clone() }), operands) {
        Ok(Value::Float(output)) => output.values,
        other => panic!("{step:?} ran on the input but gives {other:?} on a probe"),
    };
    let n = input.values.len();
    let base = probe(vec![0.0; n]);
    (0..n)
        .map(|i| {
            let mut unit = vec![0.0; n];
            unit[i] = 1.0;
            let column = probe(unit);
            column.iter().zip(&base).enumerate().filter(|(_, (c, b))| c != b).map(|(j, (c, b))| (j, c - b)).collect()
        })
        .collect()
}

/// The gradient of a step affine in the current tensor: `Σ_j g_j (f(e_i) - f(0))_j` for each input position `i`.
/// Only entries that depend on `i` enter the sum, so a NaN in `g` reaches only the inputs it depends on.
fn affine_vjp(step: &Step, input: &Floats, operands: &Operands, g: &[f64]) -> Vec<f64> {
    let columns = affine_columns(step, input, operands);
    columns.iter().map(|column| column.iter().map(|&(j, c)| c * g[j]).sum()).collect()
}
