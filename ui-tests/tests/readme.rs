//! What the README says about compile errors is what the compiler says: its count of rejected inputs is the number
//! of cases under `ui/`, and every error it quotes is in a case's `.stderr`.
//!
//! A quoted error is a ```` ```text ```` block starting with `error`, possibly holding several diagnostics (each
//! from its `error` line to the next). Each must be found in some `.stderr` as a diagnostic whose headline and
//! `-->` line are the quote's first two lines, and which holds every other line of the quote in the same order: a
//! quote may leave lines out (rustc's notes on internals, say), never change or reorder one. The file path of a
//! `-->` or `:::` line is not compared (the README's `src/main.rs` is the case's `tests/ui/<case>.rs`); its line
//! and column are, and so is every other line, trailing spaces aside.

use std::fs;
use std::path::{Path, PathBuf};

fn workspace() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("ui-tests lies in the workspace")
}

fn readme() -> String {
    fs::read_to_string(workspace().join("README.md")).expect("the workspace has a README.md")
}

/// The compile-fail cases: the `*.rs` files directly in `ui/`, the same set as trybuild's `ui/*.rs` glob.
fn cases() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/ui");
    let entries = fs::read_dir(&dir).unwrap_or_else(|error| panic!("cannot list {}: {error}", dir.display()));
    let mut cases: Vec<PathBuf> = entries
        .map(|entry| entry.expect("a readable entry of tests/ui").path())
        .filter(|path| path.is_file() && path.extension().is_some_and(|extension| extension == "rs"))
        .collect();
    cases.sort();
    cases
}

/// The numbers `N` of every "All N rejected inputs" in `text`.
fn counts_of_rejected_inputs(text: &str) -> Vec<usize> {
    text.match_indices("All ")
        .filter_map(|(at, _)| {
            let rest = &text[at + "All ".len()..];
            let digits = rest.find(|c: char| !c.is_ascii_digit())?;
            let count = rest[..digits].parse().ok()?;
            rest[digits..].starts_with(" rejected inputs").then_some(count)
        })
        .collect()
}

#[test]
fn the_readme_counts_every_rejected_input() {
    let cases = cases();
    assert_eq!(
        counts_of_rejected_inputs(&readme()),
        [cases.len()],
        "README.md must say \"All {} rejected inputs\" once: ui-tests/tests/ui holds {} cases",
        cases.len(),
        cases.len()
    );
}

/// The ```` ```text ```` blocks of `markdown` that start with `error`, each as its lines.
fn quoted_errors(markdown: &str) -> Vec<Vec<&str>> {
    let mut blocks = Vec::new();
    let mut lines = markdown.lines();
    while let Some(line) = lines.next() {
        if line.trim_end() != "```text" {
            continue;
        }
        let block: Vec<&str> = lines.by_ref().take_while(|line| line.trim_end() != "```").collect();
        if block.first().is_some_and(|first| first.starts_with("error")) {
            blocks.push(block);
        }
    }
    blocks
}

/// `lines` cut into diagnostics, each from an `error` or `warning` line to the next, blank lines dropped.
fn diagnostics<'a>(lines: impl IntoIterator<Item = &'a str>) -> Vec<Vec<String>> {
    let mut diagnostics: Vec<Vec<String>> = Vec::new();
    for line in lines {
        let line = normalised(line);
        if line.starts_with("error") || line.starts_with("warning") {
            diagnostics.push(vec![line]);
        } else if let Some(diagnostic) = diagnostics.last_mut().filter(|_| !line.is_empty()) {
            diagnostic.push(line);
        }
    }
    diagnostics
}

/// `line` without trailing spaces, and with `FILE` for the path of a `-->` or `:::` line.
fn normalised(line: &str) -> String {
    let line = line.trim_end();
    let trimmed = line.trim_start();
    let Some(marker) = ["--> ", "::: "].into_iter().find(|marker| trimmed.starts_with(marker)) else {
        return line.to_owned();
    };
    let indent = &line[..line.len() - trimmed.len()];
    let place = &trimmed[marker.len()..];
    // `path:line:column`, or a path alone where rustc prints no line (a file outside the workspace).
    let mut parts = place.rsplitn(3, ':');
    let (column, number) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    let is_number = |part: &str| !part.is_empty() && part.bytes().all(|byte| byte.is_ascii_digit());
    match is_number(column) && is_number(number) {
        true => format!("{indent}{marker}FILE:{number}:{column}"),
        false => format!("{indent}{marker}FILE"),
    }
}

/// Whether `quote` is `diagnostic` with lines left out: the same first two lines, then the rest in order.
fn quotes(quote: &[String], diagnostic: &[String]) -> bool {
    if quote.len() < 2 || diagnostic.len() < 2 || quote[..2] != diagnostic[..2] {
        return false;
    }
    let mut rest = diagnostic[2..].iter();
    quote[2..].iter().all(|line| rest.any(|candidate| candidate == line))
}

/// Every diagnostic of every `.stderr` of the cases.
fn pinned_diagnostics() -> Vec<Vec<String>> {
    let stderrs = cases().into_iter().map(|case| {
        let path = case.with_extension("stderr");
        fs::read_to_string(&path).unwrap_or_else(|error| panic!("cannot read {}: {error}", path.display()))
    });
    stderrs.flat_map(|stderr| diagnostics(stderr.lines())).collect()
}

/// The quoted diagnostics of `markdown` that no diagnostic of `pinned` holds.
fn misquoted(markdown: &str, pinned: &[Vec<String>]) -> Vec<Vec<String>> {
    let quoted = quoted_errors(markdown).into_iter().flat_map(diagnostics);
    quoted.filter(|quote| !pinned.iter().any(|diagnostic| quotes(quote, diagnostic))).collect()
}

#[test]
fn every_error_the_readme_quotes_is_in_a_stderr() {
    let readme = readme();
    let quoted = quoted_errors(&readme).into_iter().flat_map(diagnostics).count();
    assert!(quoted >= 5, "found only {quoted} quoted errors in README.md");
    let misquoted = misquoted(&readme, &pinned_diagnostics());
    let shown: Vec<String> = misquoted.iter().map(|quote| quote.join("\n")).collect();
    assert!(shown.is_empty(), "README.md quotes errors that no .stderr under ui/ holds:\n\n{}", shown.join("\n\n"));
}

#[test]
fn a_quote_must_keep_the_headline_place_and_order_of_lines() {
    let pinned = diagnostics(
        "error[E0277]: `NdArrayDevice` is not the device of backend `Candle`\n \
         --> tests/ui/field-is-not-the-backend-device.rs:7:9\n  |\n7 |     Cpu(NdArrayDevice),\n  \
         |         ^^^^^^^^^^^^^ a `#[backend(Candle)]` variant holds `CandleDevice`\n  |\n  \
         = note: write the field as `CandleDevice`\n"
            .lines(),
    );
    let readme = |body: &str| format!("Some text.\n\n```text\n{body}\n```\n\n```text\nnot an error\n```\n");
    let headline = "error[E0277]: `NdArrayDevice` is not the device of backend `Candle`";
    let place = " --> src/main.rs:7:9";
    let label = "  |         ^^^^^^^^^^^^^ a `#[backend(Candle)]` variant holds `CandleDevice`";
    let note = "  = note: write the field as `CandleDevice`";

    // Lines left out (the source line, the blank gutter) are fine.
    assert!(misquoted(&readme(&[headline, place, label, note].join("\n")), &pinned).is_empty());
    // Changed, reordered or moved lines are not.
    let wrong_label = label.replace("`CandleDevice`", "`<Candle as Backend>::Device`");
    for wrong in [
        vec![headline, place, &wrong_label, note],
        vec![headline, place, note, label],
        vec![headline, " --> src/main.rs:8:9", label],
        vec![headline, label],
    ] {
        assert_eq!(misquoted(&readme(&wrong.join("\n")), &pinned).len(), 1, "{wrong:#?}");
    }
}

#[test]
fn the_count_is_read_where_the_readme_says_it() {
    let text = "All 47 rejected inputs are here. All of them. All 3 rejected inputs.";
    assert_eq!(counts_of_rejected_inputs(text), [47, 3]);
}
