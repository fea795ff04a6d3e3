//! Support of the derive's integration tests: a third-party backend defined outside dispatch-core.

pub mod host_backend;
