//! For each op of the op list, a function of that name that calls it on the operands in several ways: first the
//! calls that must compute, each of them different from handing an operand back, then calls that must fail, each
//! for a reason every backend must report as the same kind of error. The suite expands the op list into a call of
//! each function, so an op without one here does not compile.

mod comparison;
mod creation;
mod elementwise;
mod index;
mod int_bool;
mod layout;
mod outputs;
mod reduce;
mod window;

pub use comparison::*;
pub use creation::*;
pub use elementwise::*;
pub use index::*;
pub use int_bool::*;
pub use layout::*;
pub use outputs::Floats;
pub use reduce::*;
pub use window::*;
