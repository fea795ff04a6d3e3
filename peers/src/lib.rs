//! Shared code of the peer benchmark.
