//! Values: every call that computes on the reference computes on the backend under test too, with the same shape,
//! ints and bools, and floats within the dtype's tolerance of the exact values.

use dispatch_core::DType;

use super::attempt::Attempt;
use super::tolerance::{deviation, tolerance};
use crate::outcome::Outcome;
use crate::report::{Group, GroupReport};
use crate::run::Call;

/// The values group of `dtype`: the calls made in it, or how the backend refused the dtype (a report of what was
/// not checked, but for `F32`, which every backend must hold).
pub fn check(dtype: DType, run: Result<&Attempt, &String>) -> GroupReport {
    let mut report = GroupReport::new(Group::Values(dtype));
    match run {
        Err(refusal) if dtype == DType::F32 => {
            report.differ("from_f64_vec", None, dtype, format!("every backend must hold f32, but it gave {refusal}"));
        }
        Err(refusal) => report.not_checked.push(format!("the backend does not hold {dtype}: {refusal}")),
        Ok(Err(error)) => report.differ("operands", None, dtype, format!("cannot be made: {error}")),
        Ok(Ok(run)) => {
            let calls = run.calls();
            for (op, panic) in calls.panicked {
                report.differ(op, None, dtype, format!("panicked: {panic}"));
            }
            for call in calls.compared.iter().filter(|call| !call.reference.is_error()) {
                report.checked += 1;
                let (largest_deviation, difference) = difference(dtype, call);
                report.measured(call.op, largest_deviation);
                if let Some(what) = difference {
                    report.differ(call.op, Some(call.call), dtype, what);
                }
            }
        }
    }
    report
}

/// The largest deviation of the floats of a call that computes on the reference, and how the backend's outcome
/// differs from the reference's, if it does. Dtypes are the dtypes group's to compare.
fn difference(dtype: DType, call: &Call) -> (f64, Option<String>) {
    let Call { tested, reference, exact, .. } = call;
    match (tested, reference) {
        (Outcome::Float { shape, values, .. }, Outcome::Float { shape: expected_shape, dtype: output, .. }) => {
            if shape != expected_shape {
                return (0.0, Some(format!("gives {tested}, the reference {reference}")));
            }
            float_difference(values, expected(reference, exact), *output)
        }
        (Outcome::Values(values), Outcome::Values(_)) => float_difference(values, expected(reference, exact), dtype),
        (Outcome::DType(_), Outcome::DType(_)) => (0.0, None),
        (tested, reference) if tested == reference => (0.0, None),
        (Outcome::Int { shape, values }, Outcome::Int { shape: expected_shape, values: expected })
            if shape == expected_shape =>
        {
            (0.0, Some(format!("gives ints {values:?}, the reference {expected:?}")))
        }
        (Outcome::Bool { shape, values }, Outcome::Bool { shape: expected_shape, values: expected })
            if shape == expected_shape =>
        {
            (0.0, Some(format!("gives bools {values:?}, the reference {expected:?}")))
        }
        (tested, reference) => (0.0, Some(format!("gives {tested}, the reference {reference}"))),
    }
}

/// The values a call must give: the exact reference's, where it computes the same kind of output (it fails where
/// only the dtype makes the call fit, as `to_vec` of an `F32` tensor), else the reference's own.
fn expected<'a>(reference: &'a Outcome, exact: &'a Outcome) -> &'a [f64] {
    match (reference, exact) {
        (Outcome::Float { values: fallback, .. }, Outcome::Float { values, .. })
        | (Outcome::Values(fallback), Outcome::Values(values)) => {
            if values.len() == fallback.len() {
                values
            } else {
                fallback
            }
        }
        (Outcome::Float { values, .. } | Outcome::Values(values), _) => values,
        _ => &[],
    }
}

/// The largest deviation of `values` from the exact ones rounded to `dtype`, and the first value farther than
/// `dtype`'s tolerance, if one is.
fn float_difference(values: &[f64], exact: &[f64], dtype: DType) -> (f64, Option<String>) {
    if values.len() != exact.len() {
        return (0.0, Some(format!("gives {} values, the reference {}", values.len(), exact.len())));
    }
    let (tolerance, count) = (tolerance(dtype), values.len());
    let (mut largest, mut first) = (0.0_f64, None);
    for (index, (&value, &exact)) in values.iter().zip(exact).enumerate() {
        let expected = dtype.round(exact);
        let deviation = deviation(value, expected);
        largest = largest.max(deviation);
        if deviation > tolerance && first.is_none() {
            first = Some(format!(
                "value {index} of {count} is {value}, the exact one {expected} in {dtype} (deviation {deviation:.1e}, \
                 tolerance {tolerance:.0e})"
            ));
        }
    }
    (largest, first)
}
