//! The derive's side of how devices are named (the runtime's is `dispatch_core::device_name`, which the generated
//! `Display` and `FromStr` call): the names it lists at compile time, and the rule that a variant's name holds
//! neither separator. A proc-macro crate cannot share code with the runtime it expands into, so the two separators
//! are spelled here once, and tests/tests/derive_device_names.rs checks that both sides read each other's names.

/// What separates a variant's name from the device it qualifies (`autodiff:candle`).
pub const QUALIFIER: char = ':';

/// What separates the ranks of a distributed device (`cluster:candle,ndarray`).
pub const RANK_SEPARATOR: char = ',';

/// `name:<device>`.
pub fn qualified(name: &str, device: &str) -> String {
    format!("{name}{QUALIFIER}{device}")
}
