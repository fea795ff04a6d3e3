//! Holds the trybuild cases of `#[derive(Dispatch)]` and `#[derive(Module)]` under `tests/ui/`.
