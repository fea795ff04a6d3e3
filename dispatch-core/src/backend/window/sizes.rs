//! The size arithmetic of the window ops: exact in `u128`, and back in `usize` or an [`Error::SizeOverflow`].

use crate::error::{Error, RankRule, Result};
use crate::shape::Shape;

/// `value` in `u128`, where sums and products of two sizes are exact; lossless, as `usize` has at most 64 bits on
/// every target.
pub(crate) fn wide(value: usize) -> u128 {
    value as u128
}

/// `value` back in `usize`, or [`Error::SizeOverflow`] naming it `what`.
pub(crate) fn to_usize(op: &'static str, what: &'static str, value: u128) -> Result<usize> {
    usize::try_from(value).map_err(|_| Error::SizeOverflow { op, what })
}

/// The product of `sizes` (0 if any is 0), or [`Error::SizeOverflow`] naming it `what`.
pub(crate) fn product(op: &'static str, what: &'static str, sizes: &[usize]) -> Result<usize> {
    if sizes.contains(&0) {
        return Ok(0);
    }
    sizes.iter().try_fold(1usize, |total, &size| total.checked_mul(size)).ok_or(Error::SizeOverflow { op, what })
}

/// The dimensions of a rank-4 shape, or why it is not one.
pub(crate) fn dims4(op: &'static str, what: &'static str, shape: &Shape) -> Result<[usize; 4]> {
    <[usize; 4]>::try_from(shape.dims()).map_err(|_| Error::unexpected_rank(op, what, RankRule::Exactly(4), shape))
}

/// The dimensions of a rank-3 shape, or why it is not one.
pub(crate) fn dims3(op: &'static str, what: &'static str, shape: &Shape) -> Result<[usize; 3]> {
    <[usize; 3]>::try_from(shape.dims()).map_err(|_| Error::unexpected_rank(op, what, RankRule::Exactly(3), shape))
}

/// `sizes` of 1 or more on each side, or an [`Error::InvalidValue`] naming `parameter`.
pub(crate) fn check_positive(op: &'static str, parameter: &'static str, sizes: [usize; 2]) -> Result<()> {
    if sizes.contains(&0) {
        return Err(Error::invalid_value(op, parameter, sizes, "1 or more on each side"));
    }
    Ok(())
}

/// PyTorch's rule for pooling and unfolding: the batch may be empty, the channels and the plane may not.
pub(crate) fn check_planes(op: &'static str, shape: &Shape) -> Result<[usize; 4]> {
    let dims = dims4(op, "an input [batch, channels, height, width]", shape)?;
    if dims[1..].contains(&0) {
        let expected = "an input with channels, rows and columns (only the batch may be empty)";
        return Err(Error::unexpected_shape(op, expected, shape));
    }
    Ok(dims)
}
