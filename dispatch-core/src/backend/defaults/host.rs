//! Host ops: a function on the tensor's values in host memory (the collectives), and the conversions of a tensor's
//! values to and from what host ops compute in.

use std::sync::Arc;

use super::{map, values_like};
use crate::backend::{Backend, HostOp, HostTensor};
use crate::error::Result;

/// Through host memory: the values out (as `f32`, what host ops compute in), the op, the result back on the
/// tensor's device in the tensor's dtype.
pub fn host_op<B: Backend>(tensor: &B::FloatTensor, op: Arc<dyn HostOp>) -> Result<B::FloatTensor> {
    let output = op.forward(host_tensor_of::<B>(tensor)?)?;
    host_tensor_like::<B>(output, tensor)
}

/// A tensor's values as a host op's input: host ops (the collectives among them) compute in `f32`, so the values
/// of an `F64` tensor are rounded to `f32` here, on purpose and as documented on [`HostTensor`].
pub(crate) fn host_tensor_of<B: Backend>(tensor: &B::FloatTensor) -> Result<HostTensor> {
    let data = match B::dtype(tensor) {
        crate::DType::F32 => B::to_vec(tensor)?,
        _ => map("host_op", &B::to_f64_vec(tensor)?, |value| value as f32)?,
    };
    Ok(HostTensor { data, shape: B::shape(tensor) })
}

/// The `f32` values of a host op's output as a float tensor of `like`'s dtype on `like`'s device.
pub(crate) fn host_tensor_like<B: Backend>(host: HostTensor, like: &B::FloatTensor) -> Result<B::FloatTensor> {
    values_like::<B>(map("host_op", &host.data, f64::from)?, host.shape, like)
}
