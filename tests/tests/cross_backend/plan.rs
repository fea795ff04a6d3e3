//! Plans a program from raw draws: each candidate step runs on the reference first, and is kept only where every
//! backend's answer is decidable — no decision (a comparison, an arg-extreme, a kink or tie of a gradient, the sign
//! under a log) taken on values the backends may round differently, no overflow, no NaN except where the docs say
//! what comes of it. A candidate that fails is kept: the program then ends in the error every backend must give.

use crate::support::draw::{Draw, RawStep, bool_step, float_step, int_step};
use crate::support::error_bound;
use crate::support::gradient_error::gradients_with_errors;
use crate::support::interpret::{self, Operands, Trace};
use crate::support::program::{Binary, Program, Reduce, ReduceDim, Scalar, Step, Unary};
use crate::support::reference::reduce::lanes;
use crate::support::reference::window::windows_of;
use crate::support::run::output_weights;
use crate::support::values::{Floats, Value, broadcast, broadcast_position, count, round_to, unravel};
use dispatch_core::DType;

/// The most elements a step may leave, and the largest magnitude: past it, sums and cancellations in half
/// precision lose more than the tolerance, through no fault of a backend.
const MOST_ELEMENTS: usize = 512;
const LARGEST_MAGNITUDE: f64 = 64.0;

pub fn plan(input: Vec<usize>, dtype: DType, seed: u64, raw_steps: &[RawStep]) -> Program {
    let mut program = Program { input, dtype, seed, steps: Vec::new() };
    let mut trace = Trace::start(&program);
    for &raw in raw_steps {
        let Some(current) = trace.last().cloned() else { break };
        let draw = Draw::new(raw, operand_dtype(&trace, dtype));
        let candidate = match &current {
            Value::Float(floats) => float_step(floats, &draw),
            Value::Int(ints) => int_step(ints, &draw),
            Value::Bool(bools) => bool_step(&bools.dims, &draw),
        };
        let operands = interpret::operands(&candidate);
        let step = match interpret::evaluate(&candidate, &current, &operands) {
            Err(_) => candidate,
            Ok(output) if decidable(&program.steps, &trace, &candidate, &current, &operands, &output) => candidate,
            Ok(_) => fallback(&current),
        };
        trace.push(&step);
        program.steps.push(step);
    }
    // Backward passes multiply derivatives: where they grow past what half precision holds, the last steps go.
    while !gradients_in_range(&program, &trace) {
        program.steps.pop();
        trace = Trace::run(&program);
    }
    program
}

/// The largest gradient a backward pass of the program may hold on its way to the input.
const LARGEST_GRADIENT: f64 = 256.0;

/// Every gradient of the backward pass is in range, and within a quarter of the tolerance of what the backends
/// may compute.
fn gradients_in_range(program: &Program, trace: &Trace) -> bool {
    let Some(output) = trace.last() else { return true };
    let weights = output_weights(program, count(output.dims()));
    let Some(all) = gradients_with_errors(&program.steps, trace, &weights) else { return true };
    let tolerance = tolerance(trace);
    all.iter()
        .flat_map(|(g, e)| g.iter().zip(e))
        .all(|(g, e)| g.is_nan() || g.abs() <= LARGEST_GRADIENT && *e <= tolerance / 4.0 * g.abs().max(1.0))
}

/// The dtype of the last float value: what operands of the next step are made in.
fn operand_dtype(trace: &Trace, input: DType) -> DType {
    trace
        .values
        .iter()
        .rev()
        .find_map(|value| if let Value::Float(f) = value { Some(f.dtype) } else { None })
        .unwrap_or(input)
}

/// A step that is always decidable.
fn fallback(current: &Value) -> Step {
    match current {
        Value::Float(floats) if floats.values.iter().any(|x| x.is_nan()) => Step::Unary(Unary::Neg),
        Value::Float(_) => Step::Unary(Unary::Tanh),
        Value::Int(_) => Step::IntAddScalar(1),
        Value::Bool(_) => Step::BoolNot,
    }
}

/// How far apart (relative, absolute below 1) two values the backends computed must be for every backend to order
/// them alike: four times the tolerance of the coarsest dtype the program has used so far.
pub fn tolerance(trace: &Trace) -> f64 {
    let dtypes = trace.values.iter().filter_map(|value| if let Value::Float(f) = value { Some(f.dtype) } else { None });
    dtypes.map(dispatch_tests::agreement).fold(0.0, f64::max)
}

fn decidable(steps: &[Step], trace: &Trace, step: &Step, input: &Value, operands: &Operands, output: &Value) -> bool {
    if count(output.dims()) > MOST_ELEMENTS || output.dims().len() > 4 {
        return false;
    }
    let input_nan = matches!(input, Value::Float(x) if x.values.iter().any(|v| v.is_nan()));
    if input_nan && !keeps_nan_decidable(step) {
        return false;
    }
    let input_error = trace.errors.last().map_or(&[][..], Vec::as_slice);
    if let Value::Float(y) = output {
        if y.values.iter().any(|v| v.is_infinite() || v.abs() > LARGEST_MAGNITUDE) {
            return false;
        }
        if !input_nan && y.values.iter().any(|v| v.is_nan()) && !makes_nan_decidable(step, steps) {
            return false;
        }
        // Every value within a quarter of the tolerance of what the backends may compute.
        let tolerance = tolerance(trace).max(dispatch_tests::agreement(y.dtype));
        let error = error_bound::propagate(step, input, input_error, operands, output);
        let within = |(v, e): (&f64, &f64)| v.is_nan() || *e <= tolerance / 4.0 * v.abs().max(1.0);
        if !y.values.iter().zip(&error).all(within) {
            return false;
        }
    }
    let Value::Float(x) = input else { return true };
    in_domain(step, x) && (x.exact || decisions_apart(step, x, input_error, operands))
}

/// Two values are ordered alike by every backend when they are further apart than twice what rounding may have
/// moved them, or when nothing moved them.
fn apart((v, e): (f64, f64), (w, f): (f64, f64)) -> bool {
    e + f == 0.0 || (v - w).abs() > 2.0 * (e + f)
}

/// Where the input holds NaN: steps whose value and gradient follow from the docs (NaN propagates, compares
/// false but for `ne`, is skipped by `argmin`, wins a max pool) and whose gradient by the input never reads it.
fn keeps_nan_decidable(step: &Step) -> bool {
    matches!(
        step,
        Step::Binary { op: Binary::Add | Binary::Sub | Binary::Mul | Binary::Div, .. }
            | Step::Scalar { op: Scalar::Add | Scalar::Mul, .. }
            | Step::Unary(Unary::Neg)
            | Step::Reduce(Reduce::Sum | Reduce::Mean)
            | Step::ReduceDim(ReduceDim::Sum | ReduceDim::Mean, _)
            | Step::Reshape(_)
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
            | Step::ScatterAdd { .. }
            | Step::SelectAdd { .. }
            | Step::Embedding { .. }
            | Step::MaskWhere { .. }
            | Step::MaskFill { .. }
            | Step::Cast(_)
            | Step::ToDevice
            | Step::Compare { .. }
            | Step::CompareScalar { .. }
            | Step::ArgMin(_)
            | Step::MaxPool2d(_)
            | Step::MaxPool2dIndices(_)
    )
}

/// Steps that only move values: a NaN in the gradient passes them unchanged, place for place.
fn moves_gradient(step: &Step) -> bool {
    matches!(
        step,
        Step::Reshape(_)
            | Step::Permute(_)
            | Step::SwapDims(..)
            | Step::Flip(_)
            | Step::Squeeze(_)
            | Step::Unsqueeze(_)
            | Step::Narrow { .. }
            | Step::Cast(_)
            | Step::ToDevice
    )
}

/// Where NaN may first appear: a log of negatives (its derivative 1/x stays finite), a mean of nothing (0/0, a
/// cross-entropy of no rows too), a square root or fractional power of negatives when only moves came before
/// (their derivative is NaN there too, and must reach the input gradient at exactly those places).
fn makes_nan_decidable(step: &Step, earlier: &[Step]) -> bool {
    match step {
        Step::Unary(Unary::Log)
        | Step::Reduce(Reduce::Mean)
        | Step::ReduceDim(ReduceDim::Mean, _)
        | Step::CrossEntropy { .. } => true,
        Step::Unary(Unary::Sqrt) | Step::Scalar { op: Scalar::Powf, .. } => earlier.iter().all(moves_gradient),
        _ => false,
    }
}

/// Functions with a pole or a branch point at 0 stay 1/16 away from it; products stay in range in every order
/// (each of their partial products, and each product of the others, which is the gradient).
fn in_domain(step: &Step, x: &Floats) -> bool {
    let away_from_zero = || x.values.iter().all(|v| v.is_nan() || v.abs() >= 1.0 / 16.0);
    let products_in_range = |lanes: Vec<Vec<f64>>| {
        lanes.iter().all(|lane| lane.iter().map(|v| v.abs().max(1.0)).product::<f64>() <= LARGEST_MAGNITUDE)
    };
    match step {
        Step::Unary(Unary::Log | Unary::Sqrt | Unary::Recip) => away_from_zero(),
        Step::Scalar { op: Scalar::Powf, scalar, .. } => scalar.fract() == 0.0 && *scalar > 0.0 || away_from_zero(),
        Step::Reduce(Reduce::Prod) => products_in_range(vec![x.values.clone()]),
        Step::ReduceDim(ReduceDim::Prod, axis) => products_in_range(lanes(x, *axis)),
        _ => true,
    }
}

/// On values the backends may have rounded differently: every decision the step takes on them (and its gradient's
/// kinks and ties) is clear by more than what rounding may have moved them.
fn decisions_apart(step: &Step, x: &Floats, error: &[f64], operands: &Operands) -> bool {
    let all_apart_from =
        |threshold: f64| x.values.iter().zip(error).all(|(&v, &e)| v.is_nan() || apart((v, e), (threshold, 0.0)));
    let paired = |other: &Floats| {
        let Some(dims) = broadcast(&x.dims, &other.dims) else { return true };
        (0..count(&dims)).all(|index| {
            let out = unravel(index, &dims);
            let at = broadcast_position(&out, &x.dims);
            let w = other.values[broadcast_position(&out, &other.dims)];
            x.values[at].is_nan() || apart((x.values[at], error[at]), (w, 0.0))
        })
    };
    // The winner of every lane (or window) is clear of every other entry: a tie is decidable only between values
    // nothing rounded (equal values rounded alike by the reference may come out apart on a backend).
    let lanes_apart = |values: Vec<Vec<f64>>, errors: Vec<Vec<f64>>| {
        values.iter().zip(&errors).all(|(lane, errors)| {
            let numbers: Vec<(f64, f64)> =
                lane.iter().zip(errors).map(|(&v, &e)| (v, e)).filter(|(v, _)| !v.is_nan()).collect();
            let position = |largest: bool| {
                (0..numbers.len()).reduce(|best, k| if (numbers[k].0 > numbers[best].0) == largest { k } else { best })
            };
            let (Some(max), Some(min)) = (position(true), position(false)) else { return lane.is_empty() };
            let clear = |winner: usize| (0..numbers.len()).all(|k| k == winner || apart(numbers[k], numbers[winner]));
            clear(max) && clear(min)
        })
    };
    let errors = Floats { values: error.to_vec(), ..x.clone() };
    let s = |scalar: f64| round_to(x.dtype, scalar);
    match step {
        Step::Unary(Unary::Relu | Unary::Abs | Unary::Log | Unary::Sqrt) => all_apart_from(0.0),
        Step::Scalar { op: Scalar::Powf, .. } => all_apart_from(0.0),
        Step::Scalar { op: Scalar::Greater, scalar, .. } | Step::CompareScalar { scalar, .. } => {
            all_apart_from(s(*scalar))
        }
        Step::Clamp { min, max } => all_apart_from(s(*min)) && all_apart_from(s(*max)),
        Step::Binary { op: Binary::Maximum | Binary::Minimum, .. } | Step::Compare { .. } => {
            paired(&operands.floats[0])
        }
        Step::Reduce(Reduce::Max | Reduce::Min) => lanes_apart(vec![x.values.clone()], vec![error.to_vec()]),
        Step::ReduceDim(ReduceDim::Max | ReduceDim::Min, axis) | Step::ArgMax(axis) | Step::ArgMin(axis) => {
            lanes_apart(lanes(x, *axis), lanes(&errors, *axis))
        }
        Step::MaxPool2d(window) | Step::MaxPool2dIndices(window) => {
            match (windows_of(x, window), windows_of(&errors, window)) {
                (Ok(values), Ok(errors)) => lanes_apart(values, errors),
                _ => true,
            }
        }
        _ => true,
    }
}
