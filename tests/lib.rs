//! Shared helpers of the integration tests under `tests/`.
