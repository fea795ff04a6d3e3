//! The check groups, each comparing the backend under test with the reference in its own respect.

mod attempt;
mod dtypes;
mod errors;
mod tolerance;
mod values;

#[cfg(test)]
pub(crate) use dtypes::mixing_dtypes_error;

use dispatch_core::{Backend, DType};

use self::attempt::Attempt;
use crate::report::{GroupReport, Report};
use crate::run::{DTypeRun, held_dtypes};

/// Runs every check but the gradients' on backend `B` (see [`check_gradients`](crate::check_gradients) for those):
/// every call of every op, in every dtype `B` holds, against the reference. The report has one group per dtype's
/// values, then the dtypes and the error kinds. Takes well under a second for a backend on the CPU.
pub fn check<B: Backend>(device: &B::Device) -> Report {
    let support = held_dtypes::<B>(device);
    let held: Vec<DType> = support.iter().filter(|(_, holds)| holds.is_ok()).map(|&(dtype, _)| dtype).collect();
    let runs: Vec<(DType, Result<Attempt, String>)> = support
        .into_iter()
        .map(|(dtype, holds)| (dtype, holds.map(|()| DTypeRun::new::<B>(device, dtype, &held))))
        .collect();
    let mut groups: Vec<GroupReport> = runs.iter().map(|(dtype, run)| values::check(*dtype, run.as_ref())).collect();
    let runs: Vec<(DType, &Attempt)> =
        runs.iter().filter_map(|(dtype, run)| Some((*dtype, run.as_ref().ok()?))).collect();
    groups.push(dtypes::check(&runs, &held));
    groups.push(errors::check(&runs));
    Report { backend: B::name(), groups }
}
