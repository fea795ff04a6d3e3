//! What the reference expects of a program, and the comparison of a backend's answer with it.

use crate::support::gradient::input_gradient;
use crate::support::interpret::Trace;
use crate::support::plan::tolerance;
use crate::support::program::Program;
use crate::support::run::{Output, output_weights};
use crate::support::values::{ErrorKind, Failure, Value, count};

/// The reference's answer: the output (or the failure), the input gradient of a float output, and the tolerance
/// of the program's coarsest dtype.
#[derive(Debug)]
pub struct Expected {
    pub outcome: Result<Value, Failure>,
    pub gradient: Option<Vec<f64>>,
    pub tolerance: f64,
}

pub fn expect(program: &Program) -> Expected {
    let trace = Trace::run(program);
    let tolerance = tolerance(&trace);
    if let Some(failure) = trace.failure {
        return Expected { outcome: Err(failure), gradient: None, tolerance };
    }
    let output = trace.last().expect("a run that did not fail has a value").clone();
    let weights = output_weights(program, count(output.dims()));
    let gradient = input_gradient(&program.steps, &trace, &weights);
    Expected { outcome: Ok(output), gradient, tolerance }
}

/// Whether `actual` is within `tolerance` of `expected` (relative, absolute below magnitude 1), NaN exactly where
/// `expected` has NaN; with `exact`, equal.
fn agree(actual: &[f64], expected: &[f64], tolerance: f64, exact: bool) -> Result<(), String> {
    if actual.len() != expected.len() {
        return Err(format!("{} values where the reference has {}", actual.len(), expected.len()));
    }
    for (index, (&a, &e)) in actual.iter().zip(expected).enumerate() {
        let fine = a == e || a.is_nan() && e.is_nan() || !exact && dispatch_tests::close_f64(a, e, tolerance);
        if !fine {
            let how = if exact { "exactly".to_string() } else { format!("to {tolerance:e}") };
            return Err(format!("element {index}: {a} where the reference has {e} ({how})"));
        }
    }
    Ok(())
}

/// A backend's output against the reference's.
pub fn check_output(expected: &Expected, actual: &dispatch_core::Result<Output>) -> Result<(), String> {
    match (&expected.outcome, actual) {
        (Err(failure), Err(error)) => match ErrorKind::of(error) {
            Ok(kind) if kind == failure.kind => Ok(()),
            _ => Err(format!("error {error:?} where the reference fails with {failure:?}")),
        },
        (Err(failure), Ok(output)) => Err(format!("{output:?} where the reference fails with {failure:?}")),
        (Ok(_), Err(error)) => Err(format!("error {error:?} where the reference succeeds")),
        (Ok(value), Ok(output)) => match (value, output) {
            (Value::Float(e), Output::Float { dims, dtype, values }) => {
                if (dims, dtype) != (&e.dims, &e.dtype) {
                    return Err(format!(
                        "dims {dims:?} in {dtype} where the reference has {:?} in {}",
                        e.dims, e.dtype
                    ));
                }
                agree(values, &e.values, expected.tolerance, e.exact)
            }
            (Value::Int(e), Output::Int { dims, values }) if (dims, values) == (&e.dims, &e.values) => Ok(()),
            (Value::Bool(e), Output::Bool { dims, values }) if (dims, values) == (&e.dims, &e.values) => Ok(()),
            _ => Err(format!("{output:?} where the reference has {value:?}")),
        },
    }
}

/// A backend's input gradient against the reference's.
pub fn check_gradient(expected: &Expected, actual: Option<&Vec<f64>>) -> Result<(), String> {
    match (&expected.gradient, actual) {
        (Some(e), Some(a)) => agree(a, e, expected.tolerance, false),
        (None, None) => Ok(()),
        (e, a) => Err(format!("gradient {a:?} where the reference has {e:?}")),
    }
}
