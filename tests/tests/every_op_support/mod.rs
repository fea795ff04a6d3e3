//! The operands and calls of `every_op_on_every_backend.rs`, and the outcomes they give.

pub mod calls;
mod operands;
mod outcome;

pub use operands::Operands;
pub use outcome::{Outcome, bool, float, int, plain};
