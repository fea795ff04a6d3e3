//! Layers: each a struct of parameters with a `forward`, created from a seed so that the same seed gives the same
//! model on every device.

mod activation;
mod attention;
mod conv;
mod dropout;
mod embedding;
mod init;
mod layer_norm;
mod linear;

pub use activation::{Gelu, Silu};
pub use attention::CausalSelfAttention;
pub use conv::{AvgPool2d, Conv2d, MaxPool2d};
pub use dropout::Dropout;
pub use embedding::Embedding;
pub use layer_norm::LayerNorm;
pub use linear::Linear;
