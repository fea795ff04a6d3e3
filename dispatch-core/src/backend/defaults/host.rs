//! Host ops: a function on the tensor's values in host memory (the collectives), and the conversions of a tensor's
//! values to and from what host ops compute on.

use std::sync::Arc;

use super::host_values::{map, values_like};
use crate::backend::{Backend, HostOp, HostTensor, HostValues};
use crate::dtype::DType;
use crate::error::Result;

/// Through host memory: the values out (exactly, see [`HostValues`]), the op, the result back on the tensor's
/// device in the tensor's dtype.
pub fn host_op<B: Backend>(tensor: &B::FloatTensor, op: Arc<dyn HostOp>) -> Result<B::FloatTensor> {
    let output = op.forward(host_tensor_of::<B>(tensor)?)?;
    host_tensor_like::<B>(output, tensor)
}

/// A tensor's values as a host op's input, in the element type that holds its dtype exactly: an `F32` tensor's
/// own `f32` values (no conversion), an `F64` tensor's `f64` values, a half tensor's values widened to `f32`.
pub(crate) fn host_tensor_of<B: Backend>(tensor: &B::FloatTensor) -> Result<HostTensor> {
    let values = match B::dtype(tensor) {
        DType::F32 => HostValues::F32(B::to_vec(tensor)?),
        DType::F64 => HostValues::F64(B::to_f64_vec(tensor)?),
        DType::F16 | DType::BF16 => HostValues::F32(map("host_op", &B::to_f64_vec(tensor)?, |value| value as f32)?),
    };
    Ok(HostTensor { values, shape: B::shape(tensor) })
}

/// A host op's output as a float tensor of `like`'s dtype on `like`'s device, each value rounded once to that
/// dtype (`f32` and `f64` both widen to `f64` exactly, so the only rounding is `from_f64_vec`'s).
pub(crate) fn host_tensor_like<B: Backend>(host: HostTensor, like: &B::FloatTensor) -> Result<B::FloatTensor> {
    match (host.values, B::dtype(like)) {
        // The common case stays in `f32`: no widening pass, no `f64` buffer.
        (HostValues::F32(values), DType::F32) => B::from_vec(values, host.shape, &B::device(like)),
        (HostValues::F32(values), _) => values_like::<B>(map("host_op", &values, f64::from)?, host.shape, like),
        (HostValues::F64(values), _) => values_like::<B>(values, host.shape, like),
    }
}
