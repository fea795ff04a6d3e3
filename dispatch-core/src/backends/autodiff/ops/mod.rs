//! The forward and backward rule of every differentiable op, by op family. Each forward calls the inner backend's
//! op (so its values are the backend's) and records a backward rule only when an input records a graph.

pub(crate) mod binary;
pub(crate) mod index;
pub(crate) mod layout;
pub(crate) mod mask;
pub(crate) mod matmul;
pub(crate) mod reduce;
pub(crate) mod scalar;
pub(crate) mod transfer;
pub(crate) mod unary;
pub(crate) mod window;
