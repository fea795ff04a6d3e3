//! The words of the messages: values an error's `Display` shows in a readable form.

use crate::shape::Shape;

/// The hint an [`Error::UnexpectedRank`](super::Error::UnexpectedRank) adds for the empty shape, the usual slip for
/// a scalar.
pub(super) fn scalar_hint(shape: &Shape) -> &'static str {
    if shape.rank() == 0 { "; a scalar is `[1]`" } else { "" }
}

/// The end of a range that [`Error::RangeOutOfBounds`](super::Error::RangeOutOfBounds) reports, saturated: the range
/// is out of bounds either way.
pub(super) fn range_end(start: &usize, len: &usize) -> usize {
    start.saturating_add(*len)
}

/// What an [`Error::RecordMismatch`](super::Error::RecordMismatch) says about its entries, leaving out an empty
/// list.
pub(super) fn record_mismatch(missing: &[String], unexpected: &[String]) -> String {
    let mut parts = Vec::new();
    if !missing.is_empty() {
        parts.push(format!("missing {missing:?}"));
    }
    if !unexpected.is_empty() {
        parts.push(format!("unexpected {unexpected:?}"));
    }
    parts.join(", ")
}

/// `bytes` in the largest binary unit that keeps it at 1 or more, e.g. `4.0 TiB`.
pub(super) fn readable_bytes(bytes: &usize) -> String {
    const UNITS: [&str; 7] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    let mut value = *bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Error;

    #[test]
    fn out_of_memory_names_the_op_and_the_bytes_in_a_readable_unit() {
        let error = Error::OutOfMemory { op: "full", bytes: 1 << 42 };
        assert_eq!(
            error.to_string(),
            "out of memory in `full`: 4398046511104 bytes (4.0 TiB) cannot be allocated on this machine"
        );
        assert_eq!(readable_bytes(&1536), "1.5 KiB");
        assert_eq!(readable_bytes(&usize::MAX), "16.0 EiB");
    }
}
