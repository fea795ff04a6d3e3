//! Holds the trybuild cases of `#[derive(Dispatch)]` under `tests/ui/`.
