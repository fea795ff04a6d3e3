//! Compiles every case at once and reads each one's first error from cargo's JSON messages.
//!
//! The cases become the `[[bin]]` targets of one scratch package that depends on `dispatch-core` and `dispatch-nn`,
//! checked by one `cargo check --bins --keep-going` (a failing bin does not stop the others). It builds into
//! trybuild's target directory with trybuild's flags, so on rustc 1.95, where trybuild's own run builds
//! `dispatch-core` and its dependencies, this check reuses that build instead of making another. Different flags
//! would only cost time.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::{env, fs};

use serde_json::Value;

use super::{FirstError, Place};

/// What cargo said about one case.
pub enum Outcome {
    /// rustc accepted the case.
    Compiled,
    /// rustc rejected the case with this as its first error.
    Rejected(FirstError),
    /// Cargo reported nothing on the case: something it depends on failed, or cargo itself did.
    Unreported,
}

/// One outcome per case, in the order given, and cargo's stderr (which says why a case was not reported on).
pub struct Report {
    pub outcomes: Vec<Outcome>,
    pub cargo_stderr: String,
}

/// Flags trybuild passes to rustc (trybuild 1.0's `rustflags.rs` and its `--diagnostic-width` for compile-fail
/// builds); the same flags let the two share the dependencies' build.
const TRYBUILD_RUSTFLAGS: &[&str] = &["--cfg", "trybuild", "--verbose", "-A", "dead_code", "--diagnostic-width=140"];

/// Compiles `cases` as the bins of a package named `scratch`, in a folder of that name under cargo's scratch
/// directory for tests.
pub fn check_all(cases: &[PathBuf], scratch: &str) -> Report {
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let project = tmp.join(scratch);
    let target_dir = tmp.parent().unwrap_or(tmp).join("tests").join("trybuild");
    write_project(&project, scratch, cases);

    let host = host_triple();
    let rustflags = serde_json::to_string(TRYBUILD_RUSTFLAGS).expect("a list of strings is JSON");
    let output = Command::new(env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
        .current_dir(&project)
        .env("CARGO_TARGET_DIR", &target_dir)
        .env("CARGO_INCREMENTAL", "0")
        .env_remove("RUSTFLAGS")
        .args(["check", "--offline", "--bins", "--keep-going", "--quiet", "--color=never", "--message-format=json"])
        .args(["--target", &host])
        // TOML arrays of strings are written like JSON ones.
        .arg(format!("--config=build.rustflags={rustflags}"))
        .arg(format!("--config=target.{host}.rustflags={rustflags}"))
        .output()
        .unwrap_or_else(|error| panic!("cannot run cargo: {error}"));

    let stdout = String::from_utf8_lossy(&output.stdout);
    let mut outcomes: Vec<Outcome> = cases.iter().map(|_| Outcome::Unreported).collect();
    for line in stdout.lines() {
        let message: Value = serde_json::from_str(line)
            .unwrap_or_else(|error| panic!("cargo printed a line that is not JSON ({error}): {line}"));
        let Some(index) = message["target"]["name"].as_str().and_then(case_index) else { continue };
        let Some(outcome) = outcomes.get_mut(index) else { continue };
        match message["reason"].as_str() {
            Some("compiler-artifact") => *outcome = Outcome::Compiled,
            // Only the first error counts: a rejected case keeps it.
            Some("compiler-message") if !matches!(outcome, Outcome::Rejected(_)) => {
                if let Some(error) = error_of(&message["message"], &cases[index]) {
                    *outcome = Outcome::Rejected(error);
                }
            }
            _ => {}
        }
    }
    Report { outcomes, cargo_stderr: String::from_utf8_lossy(&output.stderr).into_owned() }
}

/// The bin target name of case `index`; case file names are not all valid target names, so they are numbered.
fn bin_name(index: usize) -> String {
    format!("case{index:03}")
}

fn case_index(bin_name: &str) -> Option<usize> {
    bin_name.strip_prefix("case")?.parse().ok()
}

/// A package with one bin per case, `dispatch-core` and `dispatch-nn` as its dependencies (all that the cases use), the
/// workspace's lock file (the same versions trybuild builds against), and a `[workspace]` of its own, since it
/// lies inside the target directory, which may be inside our workspace.
fn write_project(project: &Path, scratch: &str, cases: &[PathBuf]) {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("ui-tests lies in the workspace");
    // TOML basic strings take JSON's escapes.
    let toml_string = |path: &Path| serde_json::to_string(&path.to_string_lossy()).expect("a string is JSON");
    let mut manifest = format!(
        "[package]\nname = \"{scratch}\"\nversion = \"0.0.0\"\n\
         # The workspace's edition.\nedition = \"2024\"\npublish = false\n\n\
         [dependencies]\ndispatch-core = {{ path = {} }}\ndispatch-nn = {{ path = {} }}\n\n[workspace]\n",
        toml_string(&workspace.join("dispatch-core")),
        toml_string(&workspace.join("dispatch-nn")),
    );
    for (index, case) in cases.iter().enumerate() {
        manifest += &format!("\n[[bin]]\nname = \"{}\"\npath = {}\n", bin_name(index), toml_string(case));
    }
    fs::create_dir_all(project).unwrap_or_else(|error| panic!("cannot create {}: {error}", project.display()));
    fs::write(project.join("Cargo.toml"), manifest).expect("the scratch project's Cargo.toml is writable");
    fs::copy(workspace.join("Cargo.lock"), project.join("Cargo.lock")).expect("the workspace has a Cargo.lock");
}

/// The triple rustc builds for by default, which trybuild passes as `--target`.
fn host_triple() -> String {
    let output = Command::new(env::var_os("RUSTC").unwrap_or_else(|| "rustc".into()))
        .arg("-vV")
        .output()
        .unwrap_or_else(|error| panic!("cannot run rustc -vV: {error}"));
    let version = String::from_utf8_lossy(&output.stdout);
    let host = version.lines().find_map(|line| line.strip_prefix("host: "));
    host.unwrap_or_else(|| panic!("rustc -vV names no host:\n{version}")).to_owned()
}

/// The diagnostic as a [`FirstError`] if it is an error; warnings and notes are skipped.
fn error_of(diagnostic: &Value, case: &Path) -> Option<FirstError> {
    if diagnostic["level"] != "error" {
        return None;
    }
    let primary = diagnostic["spans"].as_array()?.iter().find(|span| span["is_primary"] == true);
    let place = primary.map(|span| in_case(span, case)).and_then(|span| {
        Some(Place {
            file: PathBuf::from(span["file_name"].as_str()?),
            line: usize::try_from(span["line_start"].as_u64()?).ok()?,
        })
    });
    Some(FirstError {
        code: diagnostic["code"]["code"].as_str().map(str::to_owned),
        message: diagnostic["message"].as_str()?.to_owned(),
        place,
    })
}

/// Where rustc shows `span`: a span inside a macro of another crate (dispatch-core's op list, say) is shown at the
/// case's own call of that macro, the first expansion site in the case's file; any other span as it is.
fn in_case<'a>(span: &'a Value, case: &Path) -> &'a Value {
    let in_file = |candidate: &Value| {
        candidate["file_name"]
            .as_str()
            .is_some_and(|file| Path::new(file).ends_with(case.file_name().unwrap_or_default()))
    };
    if in_file(span) {
        return span;
    }
    let mut site = &span["expansion"]["span"];
    while site.is_object() {
        if in_file(site) {
            return site;
        }
        site = &site["expansion"]["span"];
    }
    span
}
