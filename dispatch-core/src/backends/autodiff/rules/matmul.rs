//! Matrix products, of matrices or of batches of them that broadcast.

use crate::backends::BaseBackend;
use crate::backends::autodiff::broadcast::reduce_to_shape;
use crate::backends::autodiff::graph::Inner;
use crate::backends::autodiff::tensor::AutodiffTensor;
use crate::error::Result;

/// For `out = l @ r`: `dl = dout @ rᵀ` and `dr = lᵀ @ dout`, transposing the last two dimensions (so a batch
/// stays a batch), each summed back over the batch dimensions its operand was broadcast along. Each operand is kept
/// only when the other one needs a gradient.
pub fn matmul<B: BaseBackend>(lhs: &AutodiffTensor<B>, rhs: &AutodiffTensor<B>) -> Result<AutodiffTensor<B>> {
    let output = B::matmul(lhs.primitive(), rhs.primitive())?;
    Ok(AutodiffTensor::binary("matmul", [lhs, rhs], output, |[lhs_tracked, rhs_tracked], _| {
        let rhs_value = lhs_tracked.then(|| rhs.primitive().clone());
        let lhs_value = rhs_tracked.then(|| lhs.primitive().clone());
        let (lhs_shape, rhs_shape) = (B::shape(lhs.primitive()), B::shape(rhs.primitive()));
        move |gradient| {
            let lhs_gradient = match &rhs_value {
                Some(rhs) => Some(reduce_to_shape::<B>(B::matmul(&gradient, &transpose::<B>(rhs)?)?, &lhs_shape)?),
                None => None,
            };
            let rhs_gradient = match &lhs_value {
                Some(lhs) => Some(reduce_to_shape::<B>(B::matmul(&transpose::<B>(lhs)?, &gradient)?, &rhs_shape)?),
                None => None,
            };
            Ok([lhs_gradient, rhs_gradient])
        }
    }))
}

/// Swaps the last two dimensions; `matmul` has already checked there are two or more.
fn transpose<B: BaseBackend>(matrix: &Inner<B>) -> Result<Inner<B>> {
    let rank = B::shape(matrix).rank();
    B::swap_dims(matrix, rank - 2, rank - 1)
}
