//! Error kinds: every call that fails on the reference fails on the backend under test with an error of the same
//! variant (compared by discriminant, not by its words).

use dispatch_core::DType;

use super::attempt::{Attempt, runs_to_compare};
use super::dtypes::mixing_dtypes_error;
use crate::outcome::Outcome;
use crate::report::{Group, GroupReport};

/// The error kinds group over every dtype's run. Mixing dtypes is the dtypes group's.
pub fn check(runs: &[(DType, &Attempt)]) -> GroupReport {
    let mut report = GroupReport::new(Group::ErrorKinds);
    let mixing = mixing_dtypes_error();
    for (run, calls) in runs_to_compare(runs, &mut report) {
        for call in calls {
            let Outcome::Error(kind) = call.reference else { continue };
            if *kind == mixing {
                continue;
            }
            report.checked += 1;
            if call.tested != call.reference {
                let what = format!("the reference fails with {kind}, this backend gives {}", call.tested);
                report.differ(call.op, Some(call.call), run.dtype, what);
            }
        }
    }
    report
}
