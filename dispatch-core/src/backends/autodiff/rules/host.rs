//! Host ops: a function on the tensor's values in host memory (a collective), whose backward the op supplies.

use std::sync::Arc;

use crate::backend::HostOp;
use crate::backend::defaults::{host_tensor_like, host_tensor_of};
use crate::backends::BaseBackend;
use crate::backends::autodiff::tensor::AutodiffTensor;
use crate::error::{Error, Result};

/// Runs `op` through `B` (which may have its own way to reach host memory) and records `op.backward`, the
/// vector-Jacobian product the op supplies: this is what keeps a loss that goes through `all_reduce` trainable.
pub fn host_op<B: BaseBackend>(input: &AutodiffTensor<B>, op: Arc<dyn HostOp>) -> Result<AutodiffTensor<B>> {
    let output = B::host_op(input.primitive(), Arc::clone(&op))?;
    Ok(AutodiffTensor::unary("host_op", input, output, |_| {
        let input_shape = B::shape(input.primitive());
        move |gradient| {
            let grad_input = op.backward(host_tensor_of::<B>(&gradient)?)?;
            // The op is user code: a gradient of the wrong shape is its bug, reported rather than broadcast.
            if grad_input.shape != input_shape {
                return Err(Error::shape_mismatch("host_op backward", &input_shape, &grad_input.shape));
            }
            host_tensor_like::<B>(grad_input, &gradient)
        }
    }))
}
