//! Moving gradients between a broadcast shape and an operand's own shape.

use super::graph::Inner;
use crate::backends::BaseBackend;
use crate::error::{Error, Result};
use crate::shape::Shape;

/// The gradient of an operand that was broadcast to `gradient`'s shape: summed over every dimension the operand
/// was stretched along (missing leading ones, and ones of size 1), then viewed in the operand's `shape`.
pub(crate) fn reduce_to_shape<B: BaseBackend>(gradient: Inner<B>, shape: &Shape) -> Result<Inner<B>> {
    let broadcast = B::shape(&gradient);
    if broadcast == *shape {
        return Ok(gradient);
    }
    let Some(leading) = broadcast.rank().checked_sub(shape.rank()) else {
        return Err(Error::shape_mismatch("backward of a broadcasting op", &broadcast, shape));
    };
    let mut reduced = gradient;
    for (axis, &size) in broadcast.dims().iter().enumerate() {
        let operand_size = axis.checked_sub(leading).map_or(1, |operand_axis| shape.dims()[operand_axis]);
        if operand_size == 1 && size != 1 {
            reduced = B::sum_dim(&reduced, axis)?;
        }
    }
    // Only the leading axes of size 1 are left to drop.
    if B::shape(&reduced) == *shape { Ok(reduced) } else { B::reshape(&reduced, shape.clone()) }
}

/// The gradient of a reduction's input: the output's `gradient` (one element per reduced slice) broadcast back to
/// the input's `shape`, times `scale` (1 for a sum, 1/n for a mean of n elements).
pub(crate) fn expand_to_shape<B: BaseBackend>(gradient: &Inner<B>, shape: &Shape, scale: f64) -> Result<Inner<B>> {
    // One fill and one broadcasting product: the trait has no broadcast-to op, and reading the value back to the
    // host would stall an accelerator.
    let scaled_ones = B::full(shape.clone(), scale, B::dtype(gradient), &B::device(gradient))?;
    B::mul(&scaled_ones, gradient)
}
