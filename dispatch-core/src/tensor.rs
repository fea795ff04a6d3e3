//! `Tensor<B>`: the handle model code is written against, once, generic over the backend; `IntTensor<B>` and
//! `BoolTensor<B>` for the other kinds.

mod comparison;
mod creation;
mod elementwise;
mod float;
mod host;
mod index;
mod int_bool;
mod layout;
mod matmul;
mod reduce;
mod window;

pub use self::float::Tensor;
pub use self::int_bool::{BoolTensor, IntTensor};
