//! The default bodies of the ops marked `= default` in the op list, which a backend may override. Most compute on
//! the host from the kind's primitives (`to_vec`, `from_vec`, `shape`, `device`): correct everywhere, and a place
//! for a backend to start before it writes a native kernel. The others are composed from the backend's own ops,
//! so they are differentiable wherever those are.

mod comparison;
mod creation;
mod elementwise;
mod host;
mod host_values;
mod index;
mod int_bool;
mod layout;
mod reduce;
mod window;

pub use self::comparison::*;
pub use self::creation::*;
pub use self::elementwise::*;
pub use self::host::host_op;
pub(crate) use self::host::{host_tensor_like, host_tensor_of};
#[cfg(feature = "ndarray")]
pub(crate) use self::host_values::split_at_axis;
pub use self::index::*;
pub use self::int_bool::*;
pub use self::layout::*;
pub use self::reduce::*;
pub use self::window::*;
