//! Support of the derive's integration tests: a third-party backend defined outside dispatch-core, and data.
// Each test crate uses part of it.
#![allow(dead_code)]

pub mod data;
pub mod host_backend;
