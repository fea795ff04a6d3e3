//! The check itself: each way a case can differ from its `.stderr` is a failure, and only those are.

use std::fs;
use std::path::Path;

use super::{failures, find_cases, key_words};

#[test]
fn key_words_skip_what_rustc_prints_between_backticks() {
    let pinned = "`Autodiff<Candle>` cannot be wrapped in `Autodiff`: it is not a base backend";
    let other_compiler = "`dispatch_core::Autodiff<Candle>` cannot be wrapped in `Autodiff`: it is not a base backend";
    assert_eq!(key_words(pinned), ["cannot", "be", "wrapped", "in", "it", "is", "not", "a", "base", "backend"]);
    assert_eq!(key_words(pinned), key_words(other_compiler));
    assert_ne!(key_words(pinned), key_words("`Autodiff<Candle>` cannot be wrapped: it is not a backend"));
}

/// Cases written with `compile_error!`, whose message is ours on every compiler, each with the `.stderr` it pins
/// (`None`: no `.stderr`), and whether the check must fail it.
const CASES: &[(&str, &str, Option<&str>, bool)] = &[
    (
        "right",
        "// line 1\ncompile_error!(\"the `right` case fails here\");\nfn main() {}\n",
        Some("error: the `right` case fails here\n --> tests/ui/right.rs:2:1\n"),
        false,
    ),
    (
        "quoted-differently",
        "compile_error!(\"`a::B` is not `C`\");\nfn main() {}\n",
        Some("error: `B` is not `C`\n --> tests/ui/quoted-differently.rs:1:1\n"),
        false,
    ),
    (
        "wrong-line",
        "compile_error!(\"fails\");\nfn main() {}\n",
        Some("error: fails\n --> tests/ui/wrong-line.rs:2:1\n"),
        true,
    ),
    (
        "wrong-file",
        "compile_error!(\"fails\");\nfn main() {}\n",
        Some("error: fails\n --> tests/ui/another-case.rs:1:1\n"),
        true,
    ),
    (
        "wrong-words",
        "compile_error!(\"fails here\");\nfn main() {}\n",
        Some("error: fails there\n --> tests/ui/wrong-words.rs:1:1\n"),
        true,
    ),
    (
        "wrong-code",
        "compile_error!(\"fails\");\nfn main() {}\n",
        Some("error[E0277]: fails\n --> tests/ui/wrong-code.rs:1:1\n"),
        true,
    ),
    (
        "second-error-pinned",
        "compile_error!(\"first\");\ncompile_error!(\"second\");\nfn main() {}\n",
        Some("error: second\n --> tests/ui/second-error-pinned.rs:2:1\n"),
        true,
    ),
    ("compiles", "fn main() {}\n", Some("error: fails\n --> tests/ui/compiles.rs:1:1\n"), true),
    ("no-place-pinned", "compile_error!(\"fails\");\nfn main() {}\n", Some("error: fails\n\n"), true),
    ("no-stderr", "compile_error!(\"fails\");\nfn main() {}\n", None, true),
];

#[test]
fn every_way_of_differing_from_the_stderr_fails_the_check() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("ui-first-error-self-test-cases/tests/ui");
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    for (name, source, stderr, _) in CASES {
        fs::write(dir.join(format!("{name}.rs")), source).unwrap();
        if let Some(stderr) = stderr {
            fs::write(dir.join(format!("{name}.stderr")), stderr).unwrap();
        }
    }

    let cases = find_cases(&dir);
    assert_eq!(cases.len(), CASES.len());
    let (failures, cargo_stderr) = failures(&cases, "ui-first-error-self-test");
    for (name, _, _, must_fail) in CASES {
        let file = format!("/{name}.rs: ");
        let failed = failures.iter().any(|failure| failure.contains(&file));
        assert_eq!(
            failed,
            *must_fail,
            "case {name}; failures:\n{}\ncargo's stderr:\n{cargo_stderr}",
            failures.join("\n")
        );
    }
    assert_eq!(failures.len(), CASES.iter().filter(|case| case.3).count(), "{failures:#?}");
}
