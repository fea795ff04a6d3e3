//! Numpy broadcasting over arrays of any element type: the one rule every binary op of the backend (float, int,
//! bool, comparison) follows.

use ndarray::{ArcArrayD, ArrayD, ArrayViewD, IxDyn, Zip};

use super::tensor::check_output;
use crate::error::{Error, Result};
use crate::shape::Shape;

/// Views of both operands broadcast to their common shape; the shapes are checked first because `ndarray` panics
/// on a mismatch.
pub(super) fn broadcast_pair<'a, T, U>(
    op: &'static str,
    lhs: &'a ArcArrayD<T>,
    rhs: &'a ArcArrayD<U>,
) -> Result<(ArrayViewD<'a, T>, ArrayViewD<'a, U>)> {
    let (lhs_shape, rhs_shape) = (Shape::new(lhs.shape()), Shape::new(rhs.shape()));
    let shape = Shape::broadcast(op, &lhs_shape, &rhs_shape)?;
    match (lhs.broadcast(IxDyn(shape.dims())), rhs.broadcast(IxDyn(shape.dims()))) {
        (Some(lhs), Some(rhs)) => Ok((lhs, rhs)),
        _ => Err(Error::shape_mismatch(op, &lhs_shape, &rhs_shape)),
    }
}

/// `f` of every pair of elements of `lhs` and `rhs` broadcast together, once the output is known to fit in memory.
pub(super) fn zip_broadcast<T: Copy, U: Copy, V>(
    op: &'static str,
    lhs: &ArcArrayD<T>,
    rhs: &ArcArrayD<U>,
    mut f: impl FnMut(T, U) -> V,
) -> Result<ArrayD<V>> {
    let (lhs, rhs) = broadcast_pair(op, lhs, rhs)?;
    check_output::<V>(op, lhs.len())?;
    Ok(Zip::from(&lhs).and(&rhs).map_collect(|&a, &b| f(a, b)))
}
