//! How devices are named: the grammar (`name`, `name:<device>`, `name:<rank>,<rank>...`), from the
//! `dispatch-device-name` crate, which the derive shares, and the error of a name that reads as no device.

use std::fmt::{self, Display};

pub use dispatch_device_name::{
    QUALIFIER, RANK_SEPARATOR, lists_ranks, names, qualified, ranks, write_qualified, write_ranks,
};

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
