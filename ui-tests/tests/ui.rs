//! Every error message of `#[derive(Dispatch)]`, each shown by one case under `ui/` (named after the error), and
//! the cases that must compile under `pass/`.
//!
//! The `.stderr` files are what rustc 1.95 prints; other compilers word diagnostics differently, so they skip the
//! compile-fail cases (as darling and clap do).

#[rustversion::attr(not(stable(1.95)), ignore = "the .stderr files are pinned to rustc 1.95")]
#[test]
fn compile_fail() {
    trybuild::TestCases::new().compile_fail("tests/ui/*.rs");
}

#[test]
fn pass() {
    trybuild::TestCases::new().pass("tests/pass/*.rs");
}
