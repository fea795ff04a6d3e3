//! One plane's im2col and col2im over the runs of taps that read the input, shared by `unfold2d`/`fold2d` and the
//! convolutions.

use ndarray::{ArrayD, IxDyn};

use crate::backend::Window2d;
use crate::backends::ndarray::tensor::{Element, ndarray_error};
use crate::error::Result;

/// An output array of `dims` from its row-major values.
pub(super) fn array_of<E>(op: &'static str, dims: &[usize], values: Vec<E>) -> Result<ArrayD<E>> {
    ArrayD::from_shape_vec(IxDyn(dims), values).map_err(|error| ndarray_error(op, error))
}

/// im2col of one plane `[h, w]`: the `oh * ow` values of tap `(i, j)` go to `rows[(i * kw + j) * row_stride..]`.
/// Taps in the padding are left as they are (the caller fills the rows with the padding value).
pub(super) fn unfold_plane<E: Copy>(
    plane: &[E],
    [h, w]: [usize; 2],
    window: &Window2d,
    [oh, ow]: [usize; 2],
    rows: &mut [E],
    row_stride: usize,
) {
    let [kh, kw] = window.kernel;
    for i in 0..kh {
        let down = window.outputs_in_input(0, i, h, oh);
        for j in 0..kw {
            let across = window.outputs_in_input(1, j, w, ow);
            if across.is_empty() {
                continue;
            }
            let row = &mut rows[(i * kw + j) * row_stride..];
            for y in down.clone() {
                // One output row's taps in one input row: a strided run of it.
                let start = window.cell(0, y, i) * w + window.cell(1, across.start, j);
                let taps = &mut row[y * ow + across.start..y * ow + across.end];
                if window.stride[1] == 1 {
                    taps.copy_from_slice(&plane[start..start + taps.len()]);
                } else {
                    for (tap, &value) in taps.iter_mut().zip(plane[start..].iter().step_by(window.stride[1])) {
                        *tap = value;
                    }
                }
            }
        }
    }
}

/// col2im into one plane `[h, w]`: the `oh * ow` values of tap `(i, j)`, at `rows[(i * kw + j) * row_stride..]`,
/// are added to the cells they read; values of taps in the padding are dropped.
pub(super) fn fold_plane<E: Element>(
    rows: &[E],
    row_stride: usize,
    plane: &mut [E],
    [h, w]: [usize; 2],
    window: &Window2d,
    [oh, ow]: [usize; 2],
) {
    let [kh, kw] = window.kernel;
    for i in 0..kh {
        let down = window.outputs_in_input(0, i, h, oh);
        for j in 0..kw {
            let across = window.outputs_in_input(1, j, w, ow);
            if across.is_empty() {
                continue;
            }
            let row = &rows[(i * kw + j) * row_stride..];
            for y in down.clone() {
                let start = window.cell(0, y, i) * w + window.cell(1, across.start, j);
                let taps = &row[y * ow + across.start..y * ow + across.end];
                if window.stride[1] == 1 {
                    for (cell, &value) in plane[start..start + taps.len()].iter_mut().zip(taps) {
                        *cell += value;
                    }
                } else {
                    for (cell, &value) in plane[start..].iter_mut().step_by(window.stride[1]).zip(taps) {
                        *cell += value;
                    }
                }
            }
        }
    }
}
