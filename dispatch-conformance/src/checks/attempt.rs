//! A dtype's run as the checks receive it, and the runs they can compare.

use dispatch_core::DType;

use crate::report::GroupReport;
use crate::run::DTypeRun;

/// A dtype's run, or why its operands could not be made on the backend under test.
pub(super) type Attempt = Result<DTypeRun, String>;

/// The runs that could be made, with the differences of those that could not and of the ops that panicked
/// recorded in `report`: the groups that compare across every dtype start here.
pub(super) fn runs_to_compare<'a>(
    runs: &[(DType, &'a Attempt)],
    report: &mut GroupReport,
) -> Vec<(&'a DTypeRun, Vec<crate::run::Call<'a>>)> {
    let mut compared = Vec::new();
    for &(dtype, run) in runs {
        match run {
            Err(error) => report.differ("operands", None, dtype, format!("cannot be made: {error}")),
            Ok(run) => {
                let calls = run.calls();
                for (op, panic) in calls.panicked {
                    report.differ(op, None, dtype, format!("panicked: {panic}"));
                }
                compared.push((run, calls.compared));
            }
        }
    }
    compared
}
