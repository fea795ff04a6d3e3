//! The default bodies of the ops marked `= default` in the op list, which a backend may override.

use std::sync::Arc;

use crate::backend::{Backend, HostOp, HostTensor};
use crate::error::Result;
use crate::random;
use crate::shape::Shape;

/// Seeded on the host, so the same seed gives the same values on every backend.
pub fn random_uniform<B: Backend>(
    shape: Shape,
    low: f32,
    high: f32,
    seed: u64,
    device: &B::Device,
) -> Result<B::FloatTensor> {
    let data = random::uniform(&shape, low, high, seed, "random_uniform")?;
    B::from_vec(data, shape, device)
}

/// Seeded on the host, like [`random_uniform`].
pub fn random_normal<B: Backend>(
    shape: Shape,
    mean: f32,
    std: f32,
    seed: u64,
    device: &B::Device,
) -> Result<B::FloatTensor> {
    let data = random::normal(&shape, mean, std, seed, "random_normal")?;
    B::from_vec(data, shape, device)
}

/// Through host memory: the values out, the op, the result back on the tensor's device.
pub fn host_op<B: Backend>(tensor: &B::FloatTensor, op: Arc<dyn HostOp>) -> Result<B::FloatTensor> {
    let input = HostTensor { data: B::to_vec(tensor)?, shape: B::shape(tensor) };
    let output = op.forward(input)?;
    B::from_vec(output.data, output.shape, &B::device(tensor))
}
