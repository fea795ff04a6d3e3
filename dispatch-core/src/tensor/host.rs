//! Host ops: a function on the tensor's values in host memory, such as a collective.

use std::sync::Arc;

use super::float::Tensor;
use crate::backend::{Backend, HostOp};
use crate::error::Result;

impl<B: Backend> Tensor<B> {
    /// Runs a host function (e.g. a collective) on this tensor's values; differentiable under `Autodiff`.
    pub fn host_op(&self, op: Arc<dyn HostOp>) -> Result<Self> {
        Self::wrap(B::host_op(&self.primitive, op))
    }
}
