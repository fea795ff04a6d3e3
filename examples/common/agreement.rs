//! The examples' check that runs agree: losses compared to a reference, where a loss that is not a number fails.
//!
//! Self-contained (no dispatch types), so the integration tests include this file and test the check itself.

use std::fmt::Display;

/// How far `value` is from `reference`, relative to the reference (absolute near zero). Infinite or NaN when either
/// is; [`check_agreement`] rejects those before comparing.
pub fn relative_gap(reference: f64, value: f64) -> f64 {
    (value - reference).abs() / reference.abs().max(f64::MIN_POSITIVE)
}

/// The largest [`relative_gap`] over `comparisons` of `(what, reference, value)`, if every one is at most
/// `tolerance`. An `Err` with a message naming the comparison when a reference or a value is not finite (a NaN
/// compares false with everything, so a plain `gap > tolerance` would wave it through), or when a gap exceeds
/// `tolerance` (the message names the largest).
pub fn check_agreement<W: Display>(
    comparisons: impl IntoIterator<Item = (W, f64, f64)>,
    tolerance: f64,
) -> Result<f64, String> {
    let mut worst: Option<(W, f64)> = None;
    for (what, reference, value) in comparisons {
        for (role, loss) in [("reference loss", reference), ("loss", value)] {
            if !loss.is_finite() {
                return Err(format!("{what}: the {role} is {loss}, not a finite number"));
            }
        }
        let gap = relative_gap(reference, value);
        if worst.as_ref().is_none_or(|(_, largest)| gap > *largest) {
            worst = Some((what, gap));
        }
    }
    match worst {
        Some((what, gap)) if gap > tolerance => {
            Err(format!("{what}: the losses differ by {gap:.1e} relative (tolerance {tolerance:.0e})"))
        }
        Some((_, gap)) => Ok(gap),
        None => Ok(0.0),
    }
}
