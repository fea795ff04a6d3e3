//! Models written once against `Tensor<B>`, for any backend and so any variant of a derived device enum:
//!
//! - [`Module`]: a model's parameters visited by name, for optimizers, saving and loading, moving to another
//!   device or dtype, and marking for gradients. `#[derive(Module)]` writes the impl for a struct of modules.
//! - [`layers`]: `Linear`, `Conv2d`, pooling, `LayerNorm`, `Embedding`, `Dropout`, causal self-attention, `Gelu`,
//!   `Silu`.
//! - [`loss`]: cross-entropy over int class ids, mean squared error.
//! - [`optim`]: SGD (momentum, weight decay), Adam and AdamW, whose state saves and loads like a model's.
//! - [`distributed`]: gradients all-reduced over the ranks of a data-parallel group.
//! - [`record`]: save and load with the `safetensors` format, by parameter name, into any device and dtype.
//!
//! Every failure is an `Err` of `dispatch_core::Error`; nothing here panics on bad input.

#![warn(missing_docs)]

// The derive names `::dispatch_nn::__private01`, which must resolve inside this crate's own layers too.
extern crate self as dispatch_nn;

#[doc(hidden)]
#[path = "private.rs"]
pub mod __private01;
pub mod distributed;
pub mod layers;
pub mod loss;
pub mod models;
mod module;
pub mod optim;
pub mod record;

/// `#[derive(Module)]`: the trait's impl for a struct of modules (see [`Module`](trait@Module)).
pub use dispatch_derive::Module;
pub use module::{Module, ModuleExt, ParamMapper, join_name};
