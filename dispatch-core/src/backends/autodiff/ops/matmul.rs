//! Matrix products, 2-D and batched 3-D.

use crate::backend::BaseBackend;
use crate::backends::autodiff::graph::Inner;
use crate::backends::autodiff::tensor::AutodiffTensor;
use crate::error::Result;

/// For `out = l @ r`: `dl = dout @ rᵀ` and `dr = lᵀ @ dout`, transposing the last two dimensions (so a batch
/// stays a batch). Each operand is kept only when the other one needs a gradient.
pub(crate) fn matmul<B: BaseBackend>(lhs: &AutodiffTensor<B>, rhs: &AutodiffTensor<B>) -> Result<AutodiffTensor<B>> {
    let output = B::matmul(lhs.primitive(), rhs.primitive())?;
    Ok(AutodiffTensor::binary("matmul", [lhs, rhs], output, |[lhs_tracked, rhs_tracked], _| {
        let rhs_value = lhs_tracked.then(|| rhs.primitive().clone());
        let lhs_value = rhs_tracked.then(|| lhs.primitive().clone());
        move |gradient| {
            let lhs_gradient = match &rhs_value {
                Some(rhs) => Some(B::matmul(&gradient, &transpose::<B>(rhs)?)?),
                None => None,
            };
            let rhs_gradient = match &lhs_value {
                Some(lhs) => Some(B::matmul(&transpose::<B>(lhs)?, &gradient)?),
                None => None,
            };
            Ok([lhs_gradient, rhs_gradient])
        }
    }))
}

/// Swaps the last two dimensions; `matmul` has already checked there are two or three.
fn transpose<B: BaseBackend>(matrix: &Inner<B>) -> Result<Inner<B>> {
    let rank = B::shape(matrix).rank();
    B::swap_dims(matrix, rank - 2, rank - 1)
}
