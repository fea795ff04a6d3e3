//! Every error message of `#[derive(Dispatch)]` and `#[derive(Module)]`, each shown by one case under `ui/` (named
//! after the error), and the cases that must compile under `pass/`.
//!
//! A compile-fail case is checked in two ways:
//! - exactly, by trybuild, against its `.stderr`. The `.stderr` files are what rustc 1.95 prints, and other
//!   compilers word rustc's own parts of a diagnostic differently (notes, labels, how a type is printed), so this
//!   comparison runs on 1.95 only;
//! - on every compiler, by [`first_error`]: the case must fail to compile, and its first error must have the code,
//!   the key words (the message's words outside backticks, which are ours alone) and the line of the first error
//!   in its `.stderr`. The `.stderr` is thus the only markup a case needs: its first `error` line names the
//!   message and the `-->` line under it the place, so a new case asks for nothing beyond what trybuild does.
//!
//! The second check prints how many cases it checked; CI (`.ci/run`) fails unless that is every case.

mod first_error;

use std::path::Path;

#[rustversion::attr(
    not(stable(1.95)),
    ignore = "the .stderr files are pinned to rustc 1.95; first_error_of_every_case checks the cases on this compiler"
)]
#[test]
fn compile_fail() {
    trybuild::TestCases::new().compile_fail("tests/ui/*.rs");
}

#[test]
fn first_error_of_every_case() {
    let checked = first_error::check_every_case(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/ui"));
    println!("first-error check: {checked} of {checked} compile-fail cases fail at their pinned line and key words");
}

#[test]
fn pass() {
    trybuild::TestCases::new().pass("tests/pass/*.rs");
}

/// A trait listed without `#[extension]` is one error, ours, that names nothing the expansion invented: rustc
/// leaves out its usual "not implemented for" help only because the checked type is a parameter (`Self`), so a
/// compiler that printed it would show the marker trait's name here.
#[test]
fn an_unmarked_extension_is_one_error_naming_no_internal_item() {
    let cases = [
        "extension-listed-without-the-attribute",
        "extension-listed-by-a-path-without-the-attribute",
        "extension-imported-without-its-module",
    ];
    for case in cases {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/ui").join(format!("{case}.stderr"));
        let stderr = std::fs::read_to_string(&path).expect("each case has its .stderr");
        assert_eq!(stderr.matches("error[").count(), 1, "{case}: {stderr}");
        assert!(!stderr.to_lowercase().contains("__dispatch"), "{case} names an internal item: {stderr}");
    }
}
