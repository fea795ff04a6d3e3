//! How `dispatch` names devices, the one place that spells the grammar: `name` for a variant's default device,
//! `name:<device>` for another device of the variant (`candle:cuda:1`) and for an autodiff device over its base
//! (`autodiff:candle`), and `name:<rank>,<rank>...` for the ranks of a distributed device
//! (`cluster:candle,candle:cuda:1`). A device's own text never holds a `,` or whitespace; it may hold `:`.
//!
//! A crate of its own because both sides need it and neither can hold it for the other: `dispatch-derive` checks
//! variant names and lists qualified names at compile time, and a proc-macro crate cannot export functions to the
//! code it expands into; `dispatch-core` (as `dispatch_core::device_name`) writes and reads names at run time.

#![no_std]
#![forbid(unsafe_code)]

extern crate alloc;

use alloc::string::String;
use core::fmt::{self, Display};

/// What separates a variant's name from the device it qualifies: `candle:cuda:1`, `autodiff:candle`.
pub const QUALIFIER: char = ':';

/// What separates the ranks of a distributed device: `cluster:candle,ndarray`.
pub const RANK_SEPARATOR: char = ',';

/// `name:<device>`.
pub fn qualify(name: &str, device: &str) -> String {
    let mut qualified = String::with_capacity(name.len().saturating_add(device.len()).saturating_add(1));
    qualified.push_str(name);
    qualified.push(QUALIFIER);
    qualified.push_str(device);
    qualified
}

/// Writes `name:<device>`.
pub fn write_qualified(f: &mut fmt::Formatter<'_>, name: &str, device: &dyn Display) -> fmt::Result {
    write!(f, "{name}{QUALIFIER}{device}")
}

/// The `<device>` of `input` if it reads `name:<device>`.
pub fn qualified<'a>(input: &'a str, name: &str) -> Option<&'a str> {
    input.strip_prefix(name)?.strip_prefix(QUALIFIER)
}

/// Whether `input` is `name` itself or `name:<device>`.
pub fn names(input: &str, name: &str) -> bool {
    input == name || qualified(input, name).is_some()
}

/// Writes the ranks of a distributed device, separated by [`RANK_SEPARATOR`].
pub fn write_ranks<T: Display>(f: &mut fmt::Formatter<'_>, ranks: &[T]) -> fmt::Result {
    for (index, rank) in ranks.iter().enumerate() {
        if index > 0 {
            write!(f, "{RANK_SEPARATOR}")?;
        }
        Display::fmt(rank, f)?;
    }
    Ok(())
}

/// The rank specs of a list, each trimmed.
pub fn ranks(spec: &str) -> impl Iterator<Item = &str> {
    spec.split(RANK_SEPARATOR).map(str::trim)
}

/// Whether `spec` lists more than one rank.
pub fn lists_ranks(spec: &str) -> bool {
    spec.contains(RANK_SEPARATOR)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_qualified_name_reads_back() {
        let written = qualify("autodiff", "candle:cuda:1");
        assert_eq!(written, "autodiff:candle:cuda:1");
        assert_eq!(qualified(&written, "autodiff"), Some("candle:cuda:1"));
        assert!(names(&written, "autodiff") && names("autodiff", "autodiff"));
        // A name that only starts like another is not it.
        assert!(!names("autodiffx:candle", "autodiff") && qualified("candle", "autodiff").is_none());
    }

    #[test]
    fn ranks_split_at_the_separator_only() {
        let listed: alloc::vec::Vec<&str> = ranks("candle, candle:cuda:1 ,ndarray").collect();
        assert_eq!(listed, ["candle", "candle:cuda:1", "ndarray"]);
        assert!(lists_ranks("a,b") && !lists_ranks("candle:cuda:1"));
    }
}
