//! The window ops other than convolution, `unfold2d`, `fold2d` and the pools: their output sizes or why PyTorch
//! refuses their arguments, and the runs of taps that read the input rather than its padding, which a kernel walks
//! as slices. Every backend's kernel and the host defaults share these, so they cannot disagree.

use std::ops::Range;

use super::options::Window2d;
use super::sizes::{check_planes, dims3, dims4, product, wide};
use crate::error::{Error, Result};
use crate::shape::Shape;

impl Window2d {
    /// The taps along `side` (0: rows, 1: columns) of the window at output position `position` that read a cell of
    /// an input `input` long, not its padding: one run, since the cell `position * stride + tap * dilation -
    /// padding` grows with the tap. No overflow once [`Window2d::output_size`] accepted the input: every cell is
    /// below the padded input's size, which fits.
    pub(crate) fn taps_in_input(&self, side: usize, position: usize, input: usize) -> Range<usize> {
        let (start, dilation, padding) = (position * self.stride[side], self.dilation[side], self.padding[side]);
        let first = padding.saturating_sub(start).div_ceil(dilation).min(self.kernel[side]);
        let end = (input + padding).saturating_sub(start).div_ceil(dilation).min(self.kernel[side]);
        first..end.max(first)
    }

    /// The output positions along `side` (of `outputs`) whose tap `tap` reads a cell of an input `input` long, not
    /// its padding: one run, since the cell grows with the position.
    pub(crate) fn outputs_in_input(&self, side: usize, tap: usize, input: usize, outputs: usize) -> Range<usize> {
        let (stride, offset, padding) = (self.stride[side], tap * self.dilation[side], self.padding[side]);
        let start = padding.saturating_sub(offset).div_ceil(stride).min(outputs);
        let end = (input + padding).saturating_sub(offset).div_ceil(stride).min(outputs).max(start);
        start..end
    }

    /// The input cell along `side` that tap `tap` of the window at output `position` reads, for a position and a
    /// tap that [`outputs_in_input`](Self::outputs_in_input) or [`taps_in_input`](Self::taps_in_input) put in
    /// the input.
    pub(crate) fn cell(&self, side: usize, position: usize, tap: usize) -> usize {
        position * self.stride[side] + tap * self.dilation[side] - self.padding[side]
    }
}

/// The sizes of an `unfold2d`: the input's `[n, c, h, w]`, the positions `[oh, ow]` of the window over it, and the
/// output's `[n, c * kh * kw, oh * ow]`.
pub(crate) fn unfold2d_geometry(input: &Shape, window: &Window2d) -> Result<([usize; 4], [usize; 2], [usize; 3])> {
    let op = "unfold2d";
    let [n, c, h, w] = check_planes(op, input)?;
    let [oh, ow] = window.output_size(op, [h, w])?;
    let [kh, kw] = window.kernel;
    let output = [n, product(op, "the unfolded rows", &[c, kh, kw])?, product(op, "the positions", &[oh, ow])?];
    Shape::new(output).check_tensor_shape(op)?;
    Ok(([n, c, h, w], [oh, ow], output))
}

/// The sizes of a `fold2d` of `columns` into planes of `[height, width]`, by PyTorch's rules: the output's `[n, c,
/// height, width]` and the positions `[oh, ow]` of the window over it.
pub(crate) fn fold2d_geometry(
    columns: &Shape,
    [height, width]: [usize; 2],
    window: &Window2d,
) -> Result<([usize; 4], [usize; 2])> {
    let op = "fold2d";
    let [n, rows, positions] = dims3(op, "columns [batch, rows, positions]", columns)?;
    if rows == 0 || positions == 0 {
        return Err(Error::unexpected_shape(op, "columns with rows and positions", columns));
    }
    if height == 0 || width == 0 {
        return Err(Error::invalid_value(op, "[height, width]", [height, width], "1 or more on each side"));
    }
    // The rows hold whole windows, and there is one column per window position, exactly.
    let [kh, kw] = window.kernel;
    let [positions_down, positions_across] = window.positions(op, [height, width])?;
    let exact_positions = positions_down.checked_mul(positions_across);
    if !wide(rows).is_multiple_of(wide(kh) * wide(kw)) || exact_positions != Some(wide(positions)) {
        let expected = "columns of whole windows, one per position of the window over the output";
        return Err(Error::unexpected_shape(op, expected, columns));
    }
    let [oh, ow] = window.output_size(op, [height, width])?;
    let output = [n, rows / product(op, "the window's taps", &[kh, kw])?, height, width];
    Shape::new(output).check_tensor_shape(op)?;
    Ok((output, [oh, ow]))
}

/// The output `[n, c, oh, ow]` of a pooling window over `input`, or why PyTorch refuses it: the batch may be empty,
/// the channels and the plane may not, and the padding is at most half the kernel.
pub(crate) fn pool2d_geometry(op: &'static str, input: &Shape, window: &Window2d) -> Result<[usize; 4]> {
    let [n, c, h, w] = check_planes(op, input)?;
    window.check_pool_padding(op)?;
    let [oh, ow] = window.output_size(op, [h, w])?;
    Shape::new([n, c, oh, ow]).check_tensor_shape(op)?;
    Ok([n, c, oh, ow])
}

/// The input's `[n, c, h, w]` of an adaptive pooling to `output`, as PyTorch takes it: the batch and the channels
/// may be empty, the input's plane may not; any output size is accepted, 0 included.
pub(crate) fn adaptive_pool2d_geometry(op: &'static str, input: &Shape, output: [usize; 2]) -> Result<[usize; 4]> {
    let [n, c, h, w] = dims4(op, "an input [batch, channels, height, width]", input)?;
    if h == 0 || w == 0 {
        return Err(Error::unexpected_shape(op, "an input with rows and columns", input));
    }
    Shape::new([n, c, output[0], output[1]]).check_tensor_shape(op)?;
    Ok([n, c, h, w])
}

/// The input cells `floor(i * input / output)..ceil((i + 1) * input / output)` that adaptive pooling averages into
/// output cell `i` of `output`, computed exactly (in `u128`) for any sizes.
pub(crate) fn adaptive_cells(cell: usize, output: usize, input: usize) -> Range<usize> {
    let (cell, output, input) = (wide(cell), wide(output), wide(input));
    // Both ends are at most `input`, a `usize`.
    let start = (cell * input / output) as usize;
    let end = ((cell + 1) * input).div_ceil(output) as usize;
    start..end
}
