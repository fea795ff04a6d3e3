//! Reads the first error out of a `.stderr` that trybuild pinned: its headline line and the `-->` line below it.

use std::path::{Path, PathBuf};

use super::{FirstError, Place};

/// The first `error` diagnostic of `stderr`, as rustc's human output shows it:
///
/// ```text
/// error[E0277]: `NdArrayDevice` is not the device of backend `Candle`
///  --> tests/ui/field-is-not-the-backend-device.rs:7:9
/// ```
pub fn first_error(stderr: &str) -> Result<FirstError, String> {
    let mut lines = stderr.lines();
    let headline = lines
        .by_ref()
        .find(|line| line.starts_with("error:") || line.starts_with("error["))
        .ok_or("the .stderr has no `error` line")?;
    let (code, message) = split_headline(headline)?;
    // rustc prints the primary span's place right under the headline, or nothing there when there is no span.
    let place = lines.next().and_then(|line| line.trim_start().strip_prefix("--> ")).map(parse_place).transpose()?;
    Ok(FirstError { code, message, place })
}

/// `error[E0277]: message` into the code and the message.
fn split_headline(headline: &str) -> Result<(Option<String>, String), String> {
    let rest = &headline["error".len()..];
    let (code, rest) = match rest.strip_prefix('[') {
        Some(coded) => {
            let (code, after) = coded.split_once(']').ok_or_else(|| format!("unclosed code in `{headline}`"))?;
            (Some(code.to_owned()), after)
        }
        None => (None, rest),
    };
    let message = rest.strip_prefix(": ").ok_or_else(|| format!("no `: ` after `error` in `{headline}`"))?;
    Ok((code, message.to_owned()))
}

/// `tests/ui/case.rs:7:9` into the file and the line (the column is not pinned: only the line is).
fn parse_place(place: &str) -> Result<Place, String> {
    let mut parts = place.rsplitn(3, ':');
    let (_column, line, file) = (parts.next(), parts.next(), parts.next());
    let (Some(line), Some(file)) = (line, file) else {
        return Err(format!("`--> {place}` is not `file:line:column`"));
    };
    let line = line.parse().map_err(|_| format!("`--> {place}` has no line number"))?;
    Ok(Place { file: PathBuf::from(file), line })
}

/// `file` without trybuild's leading placeholder (`$WORKSPACE/dispatch-core/src/x.rs` is `dispatch-core/src/x.rs`),
/// so it can be matched as the tail of a real path.
pub fn without_placeholders(file: &Path) -> PathBuf {
    file.components().skip_while(|component| component.as_os_str().to_string_lossy().starts_with('$')).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_coded_error_with_its_place() {
        let stderr = "warning: unused import\n --> tests/ui/x.rs:1:5\n\n\
                      error[E0277]: `Core` has no default device\n  --> tests/ui/x.rs:64:12\n   |\n";
        let error = first_error(stderr).unwrap();
        assert_eq!(error.code.as_deref(), Some("E0277"));
        assert_eq!(error.message, "`Core` has no default device");
        assert_eq!(error.place, Some(Place { file: PathBuf::from("tests/ui/x.rs"), line: 64 }));
    }

    #[test]
    fn a_plain_error_and_one_without_a_span() {
        let stderr = "error: variant `Cpu` has two roles\n --> tests/ui/two-roles.rs:7:7\n";
        let error = first_error(stderr).unwrap();
        assert_eq!((error.code, error.message.as_str()), (None, "variant `Cpu` has two roles"));
        assert_eq!(error.place.map(|place| place.line), Some(7));
        assert_eq!(first_error("error: no span here\n\n").unwrap().place, None);
        assert!(first_error("warning: only a warning\n").is_err());
    }

    #[test]
    fn placeholders_are_dropped_from_the_front_only() {
        let file = Path::new("$WORKSPACE/dispatch-core/src/x.rs");
        assert_eq!(without_placeholders(file), Path::new("dispatch-core/src/x.rs"));
        assert_eq!(without_placeholders(Path::new("tests/ui/x.rs")), Path::new("tests/ui/x.rs"));
    }
}
