//! The check of the compile-fail cases that holds on any compiler: each case fails to compile, and its first
//! error is the one its `.stderr` pins, at the same line, with the same code and key words.
//!
//! The `.stderr` is the only markup a case needs: its first `error` line names the message and its `-->` line the
//! place. All cases are compiled by one `cargo check --keep-going` (see [`compile`]), and its JSON diagnostics are
//! compared with what [`pinned`] reads from each `.stderr`.

mod compile;
mod pinned;

use std::fs;
use std::path::{Path, PathBuf};

use compile::Outcome;

/// The first error of a case, as pinned in its `.stderr` or as reported by the compiler now.
#[derive(Debug, PartialEq)]
pub struct FirstError {
    /// `E0277` in `error[E0277]: ...`; `None` for a plain `error: ...` (what the derive emits).
    pub code: Option<String>,
    /// The headline after `error: ` or `error[E....]: `.
    pub message: String,
    /// Where the primary span points; `None` for an error without a span.
    pub place: Option<Place>,
}

/// The file and line an error points at.
#[derive(Debug, PartialEq)]
pub struct Place {
    pub file: PathBuf,
    pub line: usize,
}

/// Checks every `*.rs` case in `dir` against the `.stderr` beside it and returns how many cases were checked;
/// panics listing every case that fails the check, and if `dir` holds no case at all.
pub fn check_every_case(dir: &Path) -> usize {
    let cases = find_cases(dir);
    assert!(!cases.is_empty(), "no compile-fail case (*.rs) under {}: the UI suite would check nothing", dir.display());
    let (failures, cargo_stderr) = failures(&cases, "ui-first-error");
    assert!(
        failures.is_empty(),
        "{} of {} compile-fail cases do not fail as their .stderr pins:\n{}\n\ncargo's stderr:\n{cargo_stderr}",
        failures.len(),
        cases.len(),
        failures.join("\n"),
    );
    cases.len()
}

/// One line per case that fails the check, naming the case and why, and cargo's stderr; `scratch` names the
/// package the cases are compiled in (one per caller, as tests run in parallel).
fn failures(cases: &[PathBuf], scratch: &str) -> (Vec<String>, String) {
    let report = compile::check_all(cases, scratch);
    let failures = cases
        .iter()
        .zip(&report.outcomes)
        .filter_map(|(case, outcome)| check_case(case, outcome).err().map(|why| format!("{}: {why}", case.display())))
        .collect();
    (failures, report.cargo_stderr)
}

/// The `*.rs` files directly in `dir`, sorted: the same set as trybuild's `dir/*.rs` glob.
fn find_cases(dir: &Path) -> Vec<PathBuf> {
    let entries = fs::read_dir(dir).unwrap_or_else(|error| panic!("cannot list {}: {error}", dir.display()));
    let mut cases: Vec<PathBuf> = entries
        .map(|entry| entry.unwrap_or_else(|error| panic!("cannot list {}: {error}", dir.display())).path())
        .filter(|path| path.is_file() && path.extension().is_some_and(|extension| extension == "rs"))
        .collect();
    cases.sort();
    cases
}

fn check_case(case: &Path, outcome: &Outcome) -> Result<(), String> {
    let stderr_path = case.with_extension("stderr");
    let stderr = fs::read_to_string(&stderr_path)
        .map_err(|error| format!("cannot read {} for the pinned first error: {error}", stderr_path.display()))?;
    let pinned = pinned::first_error(&stderr)?;
    let pinned_place = pinned.place.as_ref().ok_or("the .stderr's first error has no `-->` line to pin its place")?;

    let actual = match outcome {
        Outcome::Rejected(actual) => actual,
        Outcome::Compiled => return Err("compiles, but must be rejected".to_owned()),
        Outcome::Unreported => return Err("cargo reported nothing on this case (see cargo's stderr below)".to_owned()),
    };
    let mismatch = |what: &str| format!("{what}\n    pinned: {}\n    actual: {}", describe(&pinned), describe(actual));

    if actual.code != pinned.code {
        return Err(mismatch("first error has another code"));
    }
    if key_words(&actual.message) != key_words(&pinned.message) {
        return Err(mismatch("first error has other key words"));
    }
    let at_pinned_place = actual.place.as_ref().is_some_and(|place| {
        place.line == pinned_place.line && place.file.ends_with(pinned::without_placeholders(&pinned_place.file))
    });
    if !at_pinned_place {
        return Err(mismatch("first error is elsewhere"));
    }
    Ok(())
}

/// The words of `message` outside backticks, in order. Our messages quote every name and type in backticks, and
/// what is inside may be printed by rustc (`{Self}` of an `on_unimplemented` message), which another compiler may
/// spell differently (a longer path, other spacing); the words around them are ours alone.
fn key_words(message: &str) -> Vec<&str> {
    message
        .split('`')
        .step_by(2)
        .flat_map(|unquoted| unquoted.split(|c: char| !c.is_alphanumeric()))
        .filter(|word| !word.is_empty())
        .collect()
}

fn describe(error: &FirstError) -> String {
    let code = error.code.as_deref().map(|code| format!("[{code}]")).unwrap_or_default();
    let place = match &error.place {
        Some(place) => format!("{}:{}", place.file.display(), place.line),
        None => "no place".to_owned(),
    };
    format!("error{code}: {} (at {place})", error.message)
}

#[cfg(test)]
mod self_test;
