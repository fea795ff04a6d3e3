//! Window ops over `[batch, channels, height, width]`: im2col (`unfold2d`) and col2im (`fold2d`) here, the
//! convolutions in `conv` (on `kernels::window`, which both CPU backends run), the pools in `pool` (one pass over
//! each window). What each op accepts and the sizes it computes are the shared rules of `backend::window`;
//! the kernels walk the runs of taps that read the input as slices of its rows, and never visit padding.

mod conv;
mod pool;

pub(super) use self::conv::{conv_transpose2d, conv1d, conv2d, conv2d_weight_gradient};
pub(super) use self::pool::{adaptive_avg_pool2d, avg_pool2d, max_pool2d, max_pool2d_indices};
use super::tensor::{Element, NdArrayTensor, array_of, row_major, with_array};
use crate::backend::Window2d;
use crate::backend::window::{fold2d_geometry, product, unfold2d_geometry};
use crate::error::Result;
use crate::kernels::window::{fold_plane, unfold_plane};
use crate::memory;

/// `[n, c, h, w]` to `[n, c * kh * kw, oh * ow]`: row `c * kh * kw + i * kw + j` holds tap `(i, j)` of channel `c`
/// at every output position, `pad_value` (rounded to the dtype) where the tap reads the padding.
pub(super) fn unfold2d(tensor: &NdArrayTensor, window: Window2d, pad_value: f64) -> Result<NdArrayTensor> {
    let op = "unfold2d";
    let ([_, _, h, w], positions, output) = unfold2d_geometry(&tensor.shape(), &window)?;
    let pad = tensor.scalar(pad_value);
    with_array!(tensor, |array| {
        let values = row_major(op, array.view())?;
        let mut unfolded = memory::try_filled(op, product(op, "the unfolded input", &output)?, E::of_f64(pad))?;
        let channel_rows = product(op, "a channel's rows", &[window.kernel[0], window.kernel[1], output[2]])?;
        // Neither size is 0: `unfold2d_geometry` refused empty planes and channels.
        for (plane, rows) in values.chunks_exact(h * w).zip(unfolded.chunks_exact_mut(channel_rows)) {
            unfold_plane(plane, [h, w], &window, positions, rows, output[2]);
        }
        // Copies of the input and the padding value, which the dtype holds.
        Ok(NdArrayTensor::shared_as(tensor.dtype(), array_of(op, &output, unfolded)?.into_shared()))
    })
}

/// `[n, c * kh * kw, oh * ow]` back to `[n, c, height, width]`, adding up the taps that read the same cell (those
/// that read the padding are dropped).
pub(super) fn fold2d(tensor: &NdArrayTensor, height: usize, width: usize, window: Window2d) -> Result<NdArrayTensor> {
    let op = "fold2d";
    let (output, positions) = fold2d_geometry(&tensor.shape(), [height, width], &window)?;
    with_array!(tensor, |array| {
        let columns = row_major(op, array.view())?;
        let mut folded = memory::try_filled(op, product(op, "the folded output", &output)?, 0.0)?;
        let row_len = product(op, "the positions", &positions)?;
        let channel_rows = product(op, "a channel's rows", &[window.kernel[0], window.kernel[1], row_len])?;
        // Neither size is 0: `fold2d_geometry` refused empty planes and columns.
        for (plane, rows) in folded.chunks_exact_mut(height * width).zip(columns.chunks_exact(channel_rows)) {
            fold_plane(rows, row_len, plane, [height, width], &window, positions);
        }
        Ok(NdArrayTensor::output(tensor.dtype(), array_of(op, &output, folded)?))
    })
}
