//! Whole models built from the layers, shared by the examples, the tests and the benchmarks.

pub mod classifier;
mod gpt;
mod lenet;

pub use classifier::{Classifier, ClassifierGradients};
pub use gpt::{Block, Gpt, GptConfig, Mlp};
pub use lenet::LeNet;
