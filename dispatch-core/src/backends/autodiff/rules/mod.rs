//! The forward and backward rule of every op the op list marks `tracked`, in one file per op family, each a
//! function named after its op: `Autodiff`'s impl calls `rules::<op>` for those ops, so an op marked `tracked`
//! without its rule here does not compile. Each forward calls the inner backend's op (so its values are the
//! backend's) and records a backward rule only when an input records a graph.

pub mod comparison;
pub mod creation;
pub mod elementwise;
pub mod host;
pub mod index;
pub mod layout;
pub mod matmul;
pub mod reduce;
pub mod window;

pub use self::comparison::{mask_fill, mask_where};
pub use self::creation::{cast, to_device};
pub use self::elementwise::*;
pub use self::host::host_op;
pub use self::index::{gather, index_select, scatter_add, select_add};
pub use self::layout::*;
pub use self::matmul::matmul;
pub use self::reduce::*;
pub use self::window::*;
