//! How devices are named, the one place that spells the grammar: `name` for a variant's default device,
//! `name:<device>` for another device of the variant (`candle:cuda:1`) and for an autodiff device over its base
//! (`autodiff:candle`), and `name:<rank>,<rank>...` for the ranks of a distributed device
//! (`cluster:candle,candle:cuda:1`). A device's own text never holds a `,` or whitespace; it may hold `:`.

use std::fmt::{self, Display};

/// What separates a variant's name from the device it qualifies: `candle:cuda:1`, `autodiff:candle`.
pub const QUALIFIER: char = ':';

/// What separates the ranks of a distributed device: `cluster:candle,ndarray`.
pub const RANK_SEPARATOR: char = ',';

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

/// A device name that no compiled-in device answers to, or whose device part is not valid.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseDeviceError {
    input: String,
    choices: Vec<&'static str>,
    reason: Option<String>,
}

impl ParseDeviceError {
    /// `input` names no device; `choices` are the names that would have been accepted.
    pub fn unknown(input: &str, choices: &[&'static str]) -> Self {
        Self { input: input.to_owned(), choices: choices.to_vec(), reason: None }
    }

    /// `input` names a device, but what follows the name is not valid for it.
    pub fn invalid(input: &str, reason: impl Into<String>) -> Self {
        Self { input: input.to_owned(), choices: Vec::new(), reason: Some(reason.into()) }
    }

    /// The text that failed to parse.
    pub fn input(&self) -> &str {
        &self.input
    }

    /// The names that would have been accepted; empty for an error that says what is wrong instead.
    pub fn choices(&self) -> &[&'static str] {
        &self.choices
    }
}

impl Display for ParseDeviceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.reason {
            Some(reason) => write!(f, "invalid device `{}`: {reason}", self.input),
            None if self.choices.is_empty() => {
                write!(f, "unknown device `{}`: no device is compiled in", self.input)
            }
            None => write!(f, "unknown device `{}`; expected one of: {}", self.input, self.choices.join(", ")),
        }
    }
}

impl std::error::Error for ParseDeviceError {}
