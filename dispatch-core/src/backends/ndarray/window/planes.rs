//! One plane's im2col and col2im over the runs of taps that read the input, shared by `unfold2d`/`fold2d` and the
//! convolutions.

use std::ops::Range;

use ndarray::{ArrayD, IxDyn};

use crate::backend::Window2d;
use crate::backends::ndarray::tensor::{Element, ndarray_error};
use crate::error::Result;

/// An output array of `dims` from its row-major values.
pub(super) fn array_of<E>(op: &'static str, dims: &[usize], values: Vec<E>) -> Result<ArrayD<E>> {
    ArrayD::from_shape_vec(IxDyn(dims), values).map_err(|error| ndarray_error(op, error))
}

/// Every run of taps that reads the input of a plane `[h, w]` (not its padding), for an output of `[oh, ow]`
/// positions: `visit(tap, positions, start)` for tap `tap = i * kw + j`, whose values at the output positions
/// `positions` (row-major, within one output row) read the input cells from `start` on, `window.stride[1]` apart.
fn for_each_run(
    window: &Window2d,
    [h, w]: [usize; 2],
    [oh, ow]: [usize; 2],
    mut visit: impl FnMut(usize, Range<usize>, usize),
) {
    let [kh, kw] = window.kernel;
    for i in 0..kh {
        let down = window.outputs_in_input(0, i, h, oh);
        for j in 0..kw {
            let across = window.outputs_in_input(1, j, w, ow);
            if across.is_empty() {
                continue;
            }
            for y in down.clone() {
                // One output row's taps in one input row: a strided run of it.
                let start = window.cell(0, y, i) * w + window.cell(1, across.start, j);
                visit(i * kw + j, y * ow + across.start..y * ow + across.end, start);
            }
        }
    }
}

/// im2col of one plane `[h, w]`: the `oh * ow` values of tap `(i, j)` go to `rows[(i * kw + j) * row_stride..]`.
/// Taps in the padding are left as they are (the caller fills the rows with the padding value).
pub(super) fn unfold_plane<E: Copy>(
    plane: &[E],
    plane_size: [usize; 2],
    window: &Window2d,
    output_size: [usize; 2],
    rows: &mut [E],
    row_stride: usize,
) {
    let stride = window.stride[1];
    for_each_run(window, plane_size, output_size, |tap, positions, start| {
        let taps = &mut rows[tap * row_stride + positions.start..tap * row_stride + positions.end];
        if stride == 1 {
            taps.copy_from_slice(&plane[start..start + taps.len()]);
        } else {
            for (slot, &value) in taps.iter_mut().zip(plane[start..].iter().step_by(stride)) {
                *slot = value;
            }
        }
    });
}

/// col2im into one plane `[h, w]`: the `oh * ow` values of tap `(i, j)`, at `rows[(i * kw + j) * row_stride..]`,
/// are added to the cells they read; values of taps in the padding are dropped.
pub(super) fn fold_plane<E: Element>(
    rows: &[E],
    row_stride: usize,
    plane: &mut [E],
    plane_size: [usize; 2],
    window: &Window2d,
    output_size: [usize; 2],
) {
    let stride = window.stride[1];
    for_each_run(window, plane_size, output_size, |tap, positions, start| {
        let taps = &rows[tap * row_stride + positions.start..tap * row_stride + positions.end];
        if stride == 1 {
            for (cell, &value) in plane[start..start + taps.len()].iter_mut().zip(taps) {
                *cell += value;
            }
        } else {
            for (cell, &value) in plane[start..].iter_mut().step_by(stride).zip(taps) {
                *cell += value;
            }
        }
    });
}
