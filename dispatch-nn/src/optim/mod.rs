//! Optimizers: each takes a module and the gradients of a loss and returns the module one step on, its
//! parameters new leaves ready for the next `backward`. State lives by parameter name, and saves and loads as
//! named tensors ([`crate::record`]).

mod adam;
mod optimizer;
mod sgd;

pub use adam::{Adam, AdamW};
pub use optimizer::Optimizer;
pub use sgd::Sgd;
