//! Whole models built from the layers, shared by the examples, the tests and the benchmarks.

mod gpt;
mod lenet;

pub use gpt::{Block, Gpt, GptConfig, Mlp};
pub use lenet::LeNet;
