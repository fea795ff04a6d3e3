//! The peers of the benchmark that need more than a few lines: burn's GPT and LeNet.

pub mod burn_peer;
