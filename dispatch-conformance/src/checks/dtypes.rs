//! Dtypes: every op keeps its operands' dtype (or gives the one it is asked for), and mixing two dtypes fails with
//! the reference's error, `DTypeMismatch`.

use dispatch_core::backends::{NdArray, NdArrayDevice};
use dispatch_core::{Backend, DType, Shape};

use super::attempt::{Attempt, runs_to_compare};
use crate::outcome::{ErrorKind, Outcome};
use crate::report::{Group, GroupReport};

/// The dtypes group over every dtype's run; `held` are the dtypes the backend holds.
pub fn check(runs: &[(DType, &Attempt)], held: &[DType]) -> GroupReport {
    let mut report = GroupReport::new(Group::DTypes);
    if let [only] = held {
        report.not_checked.push(format!("mixing dtypes: the backend holds {only} alone"));
    }
    let mixing = mixing_dtypes_error();
    for (run, calls) in runs_to_compare(runs, &mut report) {
        for call in calls {
            let difference = match (call.tested, call.reference) {
                (Outcome::Float { dtype, .. }, Outcome::Float { dtype: expected, .. })
                | (Outcome::DType(dtype), Outcome::DType(expected)) => {
                    (dtype != expected).then(|| format!("gives {dtype}, the reference {expected}"))
                }
                (tested, Outcome::Error(kind)) if *kind == mixing => (tested != call.reference)
                    .then(|| format!("mixes dtypes: the reference fails with {kind}, this backend gives {tested}")),
                // Other outcomes have no dtype, and other errors are the error kinds group's.
                _ => continue,
            };
            report.checked += 1;
            if let Some(what) = difference {
                report.differ(call.op, Some(call.call), run.dtype, what);
            }
        }
    }
    report
}

/// The kind of error the reference gives for operands of two dtypes (`DTypeMismatch`), found by mixing two rather
/// than by its name, which the suite does not depend on.
pub fn mixing_dtypes_error() -> ErrorKind {
    let tensor = |dtype| NdArray::from_f64_vec(vec![1.0], Shape::new([1]), dtype, &NdArrayDevice);
    let sum = tensor(DType::F32).and_then(|lhs| NdArray::add(&lhs, &tensor(DType::F64)?));
    ErrorKind::of(&sum.expect_err("ndarray does not add an f32 and an f64 tensor"))
}
