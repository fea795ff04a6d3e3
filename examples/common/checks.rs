//! What an example promises about its own run: each claim is a sentence with its bound in it, checked against what
//! the run measured, and the run fails unless every claim holds. The README quotes the same sentences, and each
//! example's test ([`missing_from_readme`]) fails when it no longer does, so a bound stated there cannot drift from
//! the one the example enforces.

/// One claim about a run, what the run measured for it, and whether it held.
pub struct Check {
    pub claim: String,
    pub measured: String,
    pub holds: bool,
}

impl Check {
    /// Holds when every value is below `bound` (a NaN never is); `values` are `(where, value)`, e.g. per device,
    /// each shown by `show`.
    pub fn all_below(claim: String, values: &[(String, f64)], bound: f64, show: fn(f64) -> String) -> Self {
        Self { claim, measured: list(values, show), holds: values.iter().all(|(_, value)| *value < bound) }
    }

    /// Holds when every value is at least `bound` (a NaN never is).
    pub fn all_at_least(claim: String, values: &[(String, f64)], bound: f64, show: fn(f64) -> String) -> Self {
        Self { claim, measured: list(values, show), holds: values.iter().all(|(_, value)| *value >= bound) }
    }

    /// Holds when an agreement check (`agreement::check_agreement`'s answer) passed.
    pub fn agreement(claim: String, outcome: Result<f64, String>) -> Self {
        match outcome {
            Ok(worst) => Self { claim, measured: format!("largest gap {worst:.1e}"), holds: true },
            Err(message) => Self { claim, measured: message, holds: false },
        }
    }
}

/// Prints every check, then an `Err` naming those that failed.
pub fn report(checks: &[Check]) -> Result<(), String> {
    println!("\nchecks (the run fails unless each holds):");
    for check in checks {
        println!("  {}  {}: {}", if check.holds { "ok    " } else { "FAILED" }, check.claim, check.measured);
    }
    let failed: Vec<String> = checks
        .iter()
        .filter(|check| !check.holds)
        .map(|check| format!("{}: {}", check.claim, check.measured))
        .collect();
    if failed.is_empty() { Ok(()) } else { Err(format!("failed: {}", failed.join("; "))) }
}

/// The claims that the workspace's README does not contain word for word (line breaks and indentation aside).
pub fn missing_from_readme(claims: &[String]) -> Result<Vec<String>, String> {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../README.md");
    let readme = std::fs::read_to_string(path).map_err(|error| format!("reading {path}: {error}"))?;
    let flat = |text: &str| text.split_whitespace().collect::<Vec<_>>().join(" ");
    let readme = flat(&readme);
    Ok(claims.iter().filter(|claim| !readme.contains(&flat(claim))).cloned().collect())
}

fn list(values: &[(String, f64)], show: fn(f64) -> String) -> String {
    values.iter().map(|(place, value)| format!("{} on {place}", show(*value))).collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn on(values: &[f64]) -> Vec<(String, f64)> {
        values.iter().enumerate().map(|(index, value)| (format!("device {index}"), *value)).collect()
    }

    fn show(value: f64) -> String {
        format!("{value:.2}")
    }

    #[test]
    fn a_bound_holds_only_when_every_value_keeps_it_and_a_nan_never_does() {
        assert!(Check::all_below("c".into(), &on(&[1.0, 2.0]), 2.5, show).holds);
        assert!(!Check::all_below("c".into(), &on(&[1.0, 2.5]), 2.5, show).holds);
        assert!(!Check::all_below("c".into(), &on(&[1.0, f64::NAN]), 2.5, show).holds);
        assert!(Check::all_at_least("c".into(), &on(&[90.0, 97.3]), 90.0, show).holds);
        assert!(!Check::all_at_least("c".into(), &on(&[89.9, 97.3]), 90.0, show).holds);
        assert!(!Check::all_at_least("c".into(), &on(&[f64::NAN]), 90.0, show).holds);
        assert_eq!(
            Check::all_below("c".into(), &on(&[1.0, 2.0]), 2.5, show).measured,
            "1.00 on device 0, 2.00 on device 1"
        );
    }

    #[test]
    fn a_report_fails_naming_every_claim_that_does_not_hold() {
        let checks = [
            Check::agreement("agree".into(), Ok(1e-6)),
            Check::agreement("agree again".into(), Err("step 3: the loss is NaN, not a finite number".into())),
            Check::all_below("learns".into(), &on(&[3.0]), 2.5, show),
        ];
        assert_eq!(
            report(&checks),
            Err("failed: agree again: step 3: the loss is NaN, not a finite number; learns: 3.00 on device 0".into())
        );
        assert_eq!(report(&checks[..1]), Ok(()));
    }

    #[test]
    fn the_readme_is_compared_word_for_word_across_line_breaks() {
        // The README breaks its line after "the bounds the".
        let wrapped = "this README no longer states the bounds the example checks".to_owned();
        assert_eq!(missing_from_readme(std::slice::from_ref(&wrapped)), Ok(Vec::new()));
        let (shouted, absent) = (wrapped.to_uppercase(), "no README states this".to_owned());
        assert_eq!(missing_from_readme(&[wrapped, shouted.clone(), absent.clone()]), Ok(vec![shouted, absent]));
    }
}
