//! Pooling in one pass over each window, visiting only the taps that read the input (a huge kernel over a small
//! input costs what the input does): the largest value and where it is (`kernels::window`, which candle's CPU
//! tensors run too), the mean with the padding counted, and the adaptive mean over a grid of nearly equal windows.

use crate::backend::Window2d;
use crate::backend::window::{adaptive_cells, adaptive_pool2d_geometry, dims4, pool2d_geometry, product};
use crate::backends::ndarray::int_bool::NdArrayIntTensor;
use crate::backends::ndarray::tensor::{Element, NdArrayTensor, array_of, row_major, with_array};
use crate::error::Result;
use crate::kernels::window;
use crate::memory;

/// The largest tap of each window, `-inf` for a window of padding alone; a NaN tap wins.
pub(in crate::backends::ndarray) fn max_pool2d(input: &NdArrayTensor, window: Window2d) -> Result<NdArrayTensor> {
    let op = "max_pool2d";
    let output = pool2d_geometry(op, &input.shape(), &window)?;
    let planes = dims4(op, "an input", &input.shape())?;
    with_array!(input, |array| {
        let maxima = window::max_pool2d(op, &row_major(op, array.view())?, planes, &window, output)?;
        // Entries of the input, or `-inf`: values the dtype holds.
        Ok(NdArrayTensor::shared_as(input.dtype(), array_of(op, &output, maxima)?.into_shared()))
    })
}

/// The flat `row * width + column` of each window's first largest tap; a NaN tap wins (the first one), padding
/// taps never do.
pub(in crate::backends::ndarray) fn max_pool2d_indices(
    input: &NdArrayTensor,
    window: Window2d,
) -> Result<NdArrayIntTensor> {
    let op = "max_pool2d_indices";
    let output = pool2d_geometry(op, &input.shape(), &window)?;
    let planes = dims4(op, "an input", &input.shape())?;
    let indices = with_array!(input, |array| {
        window::max_pool2d_indices(op, &row_major(op, array.view())?, planes, &window, output)?
    });
    Ok(NdArrayIntTensor::new(array_of(op, &output, indices)?))
}

/// The mean of each window, the padding counted as zeros (PyTorch's default): the sum of the taps in the input,
/// times `1 / (kh * kw)` rounded to the element type, as `mean_dim` scales.
pub(in crate::backends::ndarray) fn avg_pool2d(input: &NdArrayTensor, window: Window2d) -> Result<NdArrayTensor> {
    let op = "avg_pool2d";
    let shape = input.shape();
    let [n, c, oh, ow] = pool2d_geometry(op, &shape, &window)?;
    let taps = product(op, "the window's taps", &window.kernel)?;
    let (h, w) = (shape.dim_from_end(1), shape.dim_from_end(0));
    with_array!(input, |array| {
        let values = row_major(op, array.view())?;
        let scale = E::of_f64(1.0 / taps as f64);
        let mut means = memory::try_vec(op, product(op, "the output", &[n, c, oh, ow])?)?;
        // Not empty: `pool2d_geometry` refused empty planes.
        for plane in values.chunks_exact(h * w) {
            for y in 0..oh {
                let down = window.taps_in_input(0, y, h);
                for x in 0..ow {
                    let across = window.taps_in_input(1, x, w);
                    let mut sum = 0.0;
                    for i in down.clone().filter(|_| !across.is_empty()) {
                        let start = window.cell(0, y, i) * w + window.cell(1, x, across.start);
                        sum = plane[start..]
                            .iter()
                            .step_by(window.dilation[1])
                            .take(across.len())
                            .fold(sum, |s, &v| s + v);
                    }
                    means.push(sum * scale);
                }
            }
        }
        Ok(NdArrayTensor::output(input.dtype(), array_of(op, &[n, c, oh, ow], means)?))
    })
}

/// The mean of the cells `adaptive_cells` assigns to each output cell, down and across.
pub(in crate::backends::ndarray) fn adaptive_avg_pool2d(
    input: &NdArrayTensor,
    output: [usize; 2],
) -> Result<NdArrayTensor> {
    let op = "adaptive_avg_pool2d";
    let [n, c, h, w] = adaptive_pool2d_geometry(op, &input.shape(), output)?;
    let [oh, ow] = output;
    with_array!(input, |array| {
        let values = row_major(op, array.view())?;
        let mut means = memory::try_vec(op, product(op, "the output", &[n, c, oh, ow])?)?;
        // Not empty: `adaptive_pool2d_geometry` refused empty planes.
        for plane in values.chunks_exact(h * w).filter(|_| oh > 0 && ow > 0) {
            for y in 0..oh {
                let rows = adaptive_cells(y, oh, h);
                for x in 0..ow {
                    let columns = adaptive_cells(x, ow, w);
                    let count = E::of_f64((rows.len() * columns.len()) as f64);
                    let sum = rows.clone().fold(0.0, |sum, row| {
                        plane[row * w + columns.start..row * w + columns.end].iter().fold(sum, |s, &v| s + v)
                    });
                    means.push(sum / count);
                }
            }
        }
        Ok(NdArrayTensor::output(input.dtype(), array_of(op, &[n, c, oh, ow], means)?))
    })
}
