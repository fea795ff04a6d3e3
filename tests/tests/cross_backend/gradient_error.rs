//! How far a backend's gradient may be from the reference's: the backward pass computes in the dtype, on values
//! that rounding already moved. Each step carries the errors of the gradient after it through its own Jacobian,
//! adds what the errors of its input and output (the forward estimates) change in its derivative (measured by
//! differentiating at values moved by those estimates), and adds the rounding of its own arithmetic.

use crate::support::attention_error;
use crate::support::error_bound::unit_roundoff;
use crate::support::gradient::{affine_columns, is_affine, vjp};
use crate::support::interpret::{Operands, Trace};
use crate::support::layer_norm_error;
use crate::support::program::{ReduceDim, Step};
use crate::support::softmax_error;
use crate::support::values::{Floats, Value, count};

fn moved(value: &Value, error: &[f64], sign: f64) -> Value {
    match value {
        Value::Float(f) => Value::Float(Floats {
            values: f.values.iter().zip(error).map(|(v, e)| v + sign * e).collect(),
            ..f.clone()
        }),
        other => other.clone(),
    }
}

fn dtype_of(value: &Value) -> Option<dispatch_core::DType> {
    if let Value::Float(f) = value { Some(f.dtype) } else { None }
}

/// Whether an input of the step may reach several outputs through derivatives of both signs, so that the upstream
/// errors weighed by the signed Jacobian (`vjp` of the errors) could cancel: a softmax's or a layer norm's lane, and
/// a binary op whose current tensor is broadcast. Elsewhere an input reaches one output (element-wise ops,
/// reductions) or reaches several through derivatives of one sign (max pooling), and the `vjp` of the errors, all
/// at least 0, is already `|J|ᵀe`.
fn columns_may_cancel(step: &Step) -> bool {
    matches!(
        step,
        Step::ReduceDim(ReduceDim::Softmax | ReduceDim::LogSoftmax, _) | Step::LayerNorm { .. } | Step::Binary { .. }
    )
}

/// `|J|ᵀe`: each output's error carried back along the absolute values of its row of the Jacobian, one `vjp` of a
/// unit vector per output with an error. `None` where the step passes no gradient.
fn absolute_vjp(step: &Step, x: &Floats, output: &Value, operands: &Operands, e: &[f64]) -> Option<Vec<f64>> {
    let mut carried = vec![0.0; x.values.len()];
    let mut unit = vec![0.0; e.len()];
    for (j, &error) in e.iter().enumerate() {
        if error == 0.0 {
            continue;
        }
        unit[j] = 1.0;
        let row = vjp(step, x, output, operands, &unit)?;
        unit[j] = 0.0;
        carried.iter_mut().zip(row).for_each(|(carried, derivative)| *carried += derivative.abs() * error);
    }
    Some(carried)
}

/// Every gradient of the backward pass (as `gradient::gradients` gives them, the output's first) with its error
/// estimate; the Jacobian of an affine step is probed once for both.
pub fn gradients_with_errors(steps: &[Step], trace: &Trace, weights: &[f64]) -> Option<Vec<(Vec<f64>, Vec<f64>)>> {
    let Some(Value::Float(_)) = trace.last() else { return None };
    let mut all = vec![(weights.to_vec(), vec![0.0; weights.len()])];
    for k in (0..trace.values.len() - 1).rev() {
        let (g, e) = all.last().expect("one at least");
        let (Value::Float(x), output) = (&trace.values[k], &trace.values[k + 1]) else {
            all.push((vec![0.0; count(trace.values[0].dims())], vec![0.0; count(trace.values[0].dims())]));
            break;
        };
        let (step, operands) = (&steps[k], &trace.operands[k]);
        let coarser =
            dtype_of(output).map_or(x.dtype, |d| if unit_roundoff(d) > unit_roundoff(x.dtype) { d } else { x.dtype });
        let u = unit_roundoff(coarser);
        let next = if let Step::AttentionWeights { .. } = step {
            // Estimated in full by `attention_error`: the generic estimate below weighs the upstream errors by the
            // signed Jacobian, whose terms may cancel.
            let gradient = vjp(step, x, output, operands, g).expect("attention_weights passes gradients");
            (gradient, attention_error::backward(step, x, &trace.errors[k + 1], operands, g, e))
        } else if is_affine(step) {
            affine_columns(step, x, operands)
                .iter()
                .map(|column| {
                    let gradient: f64 = column.iter().map(|&(j, c)| c * g[j]).sum();
                    let carried: f64 = column.iter().map(|&(j, c)| c.abs() * e[j]).sum();
                    let magnitude: f64 = column.iter().map(|&(j, c)| (c * g[j]).abs()).sum();
                    (gradient, carried + 2.0 * u * (1.0 + (column.len() as f64).sqrt()) * magnitude)
                })
                .unzip()
        } else {
            let Some(g_in) = vjp(step, x, output, operands, g) else {
                all.push((vec![0.0; count(trace.values[0].dims())], vec![0.0; count(trace.values[0].dims())]));
                break;
            };
            let at = |sign: f64| {
                let Value::Float(input) = moved(&trace.values[k], &trace.errors[k], sign) else {
                    unreachable!("a float input")
                };
                vjp(step, &input, &moved(output, &trace.errors[k + 1], sign), operands, g).unwrap_or_default()
            };
            let carried = match columns_may_cancel(step) {
                true => absolute_vjp(step, x, output, operands, e),
                false => vjp(step, x, output, operands, e),
            };
            let carried = carried.unwrap_or_default();
            let (up, down) = (at(1.0), at(-1.0));
            let error = (0..g_in.len())
                .map(|i| {
                    let shift = |moved: &[f64]| moved.get(i).map_or(0.0, |v| (v - g_in[i]).abs());
                    carried.get(i).map_or(0.0, |c| c.abs()) + shift(&up).max(shift(&down)) + 4.0 * u * g_in[i].abs()
                })
                .collect();
            (g_in, error)
        };
        let (gradient, mut error): (Vec<f64>, Vec<f64>) = next;
        // What a backward rule computes from values of its own (statistics or a softmax computed again, an output
        // it kept) rounds there too.
        let extra = layer_norm_error::backward(step, x, operands, g, e, u)
            .or_else(|| softmax_error::backward(step, x, &trace.errors[k], operands, g, u));
        if let Some(extra) = extra {
            error.iter_mut().zip(extra).for_each(|(error, extra)| *error += extra);
        }
        all.push((gradient, error));
    }
    Some(all)
}

/// A uniform gradient through a softmax gives 0, and so do uniform errors weighed by its signed Jacobian; but the
/// errors of a computed gradient are not uniform, and neither is what they make of the softmax's gradient. Here an
/// F64 softmax is cast to F16 and added 1 to: the gradient reaching the softmax carries F16's rounding on every entry
/// alike, far above what the softmax's own F64 arithmetic adds.
#[test]
fn errors_carried_back_through_a_softmax_do_not_cancel() {
    use crate::support::interpret::apply;
    use crate::support::program::Scalar;
    use dispatch_core::DType;
    let steps = [
        Step::ReduceDim(ReduceDim::Softmax, 0),
        Step::Cast(DType::F16),
        Step::Scalar { op: Scalar::Add, scalar: 1.0, given_up: false },
    ];
    let mut values = vec![Value::Float(Floats::new(vec![3], vec![0.5, -1.0, 2.0], DType::F64))];
    for step in &steps {
        let next = apply(step, values.last().expect("the input"), &Operands::default()).expect("every step runs");
        values.push(next);
    }
    let trace = Trace {
        errors: vec![vec![0.0; 3]; values.len()],
        operands: vec![Operands::default(); steps.len()],
        values,
        failure: None,
    };
    let all = gradients_with_errors(&steps, &trace, &[1.0; 3]).expect("a float output");
    let (upstream, through_softmax) = (&all[2].1, &all[3].1);
    assert!(upstream.iter().all(|&e| e > 1e-4), "F16's rounding reaches the softmax's gradient: {upstream:?}");
    assert!(through_softmax.iter().all(|&e| e > 1e-5), "the softmax's gradient keeps it: {through_softmax:?}");
}
