//! Pooling: the largest value or the mean of each window, and the adaptive mean over a grid of nearly equal
//! windows. The window ops follow PyTorch's rules: the batch may be empty, the channels and the plane may not, and
//! the padding is at most half the kernel.

use crate::backend::Backend;
use crate::backend::defaults::host_values::{HostFloat, in_host_float};
use crate::backend::window::{Window2d, adaptive_cells, adaptive_pool2d_geometry, dims4, pool2d_geometry, product};
use crate::error::{Error, Result};
use crate::memory;
use crate::shape::Shape;

/// On the host, one pass over each window: its largest tap, `-inf` for a window of padding alone (a NaN tap
/// wins). In `f32` for an `F32` tensor, else in `f64`; no unfolded copy of the input (`kh * kw` times its size).
pub fn max_pool2d<B: Backend>(input: &B::FloatTensor, window: Window2d) -> Result<B::FloatTensor> {
    in_host_float!(input, |Element| {
        let (values, shape) = window_maxima::<B, Element, _>("max_pool2d", input, window, |best| {
            Ok(best.map_or(<Element as num_traits::Float>::neg_infinity(), |(_, value)| value))
        })?;
        Element::write::<B>(values, shape, input)
    })
}

/// On the host: for each window, the flat `row * width + column` of its first largest tap; a NaN tap wins (the
/// first one), padding taps never do.
pub fn max_pool2d_indices<B: Backend>(input: &B::FloatTensor, window: Window2d) -> Result<B::IntTensor> {
    let op = "max_pool2d_indices";
    in_host_float!(input, |Element| {
        let (indices, shape) = window_maxima::<B, Element, _>(op, input, window, |best| {
            // A window of padding alone has no input to point at: its `max_pool2d` is `-inf`.
            let (at, _) = best.ok_or_else(|| {
                Error::invalid_value(op, "padding", window.padding, "small enough that every window covers some input")
            })?;
            i64::try_from(at).map_err(|_| Error::SizeOverflow { op, what: "an index into the plane" })
        })?;
        B::int_from_vec(indices, shape, &B::device(input))
    })
}

/// `[n, c, oh, ow]` outputs, one per window: `output` of the window's first largest tap (flat index in its plane,
/// and value), `None` if the window covers only padding. Only the taps in the input are
/// visited, so a huge kernel over a small input costs what the input does.
fn window_maxima<B: Backend, T: HostFloat, O>(
    op: &'static str,
    input: &B::FloatTensor,
    window: Window2d,
    mut output: impl FnMut(Option<(usize, T)>) -> Result<O>,
) -> Result<(Vec<O>, Shape)> {
    let shape = B::shape(input);
    let [n, c, oh, ow] = pool2d_geometry(op, &shape, &window)?;
    let [_, _, h, w] = dims4(op, "an input", &shape)?;
    let output_shape = Shape::new([n, c, oh, ow]);
    let values = T::read::<B>(input)?;
    let mut outputs = memory::try_vec(op, output_shape.num_elements())?;
    // Not empty: `check_planes` refused empty planes.
    for plane in values.chunks_exact(product(op, "a plane", &[h, w])?) {
        for y in 0..oh {
            let rows = window.taps_in_input(0, y, h);
            for x in 0..ow {
                let columns = window.taps_in_input(1, x, w);
                let mut best: Option<(usize, T)> = None;
                for i in rows.clone() {
                    let row = window.cell(0, y, i);
                    for j in columns.clone() {
                        let at = row * w + window.cell(1, x, j);
                        let value = plane[at];
                        let wins = match best {
                            None => true,
                            Some((_, max)) => !max.is_nan() && (value.is_nan() || value > max),
                        };
                        if wins {
                            best = Some((at, value));
                        }
                    }
                }
                outputs.push(output(best)?);
            }
        }
    }
    Ok((outputs, output_shape))
}

/// `unfold2d` with zeros in the padding, then the mean of each window (padding counted, as PyTorch's default).
pub fn avg_pool2d<B: Backend>(input: &B::FloatTensor, window: Window2d) -> Result<B::FloatTensor> {
    let op = "avg_pool2d";
    let [n, c, oh, ow] = pool2d_geometry(op, &B::shape(input), &window)?;
    let taps = product(op, "the window's taps", &window.kernel)?;
    let positions = product(op, "the output positions", &[oh, ow])?;
    let columns = B::unfold2d(input, window, 0.0)?;
    let taps = B::reshape(&columns, Shape::new([n, c, taps, positions]))?;
    B::reshape(&B::mean_dim(&taps, 2)?, Shape::new([n, c, oh, ow]))
}

/// The `[output, input]` matrix averaging input cells `floor(i * input / output)..ceil((i + 1) * input / output)`
/// into output cell `i`.
fn averaging_matrix(op: &'static str, output: usize, input: usize) -> Result<Vec<f64>> {
    let mut matrix = memory::try_filled(op, product(op, "an averaging matrix", &[output, input])?, 0.0)?;
    for cell in 0..output {
        let cells = adaptive_cells(cell, output, input);
        let share = 1.0 / cells.len() as f64;
        for column in cells {
            matrix[cell * input + column] = share;
        }
    }
    Ok(matrix)
}

/// `rows · x · columnsᵀ` for each image and channel, the two averaging matrices applied with the backend's matmul.
/// As PyTorch: the batch and the channels may be empty, the input's plane may not; any output size is accepted,
/// 0 included.
pub fn adaptive_avg_pool2d<B: Backend>(input: &B::FloatTensor, output: [usize; 2]) -> Result<B::FloatTensor> {
    let op = "adaptive_avg_pool2d";
    let [n, c, h, w] = adaptive_pool2d_geometry(op, &B::shape(input), output)?;
    let [oh, ow] = output;
    let output_shape = Shape::new([n, c, oh, ow]);
    if output_shape.num_elements() == 0 {
        // No window to average. The input narrowed to no rows has no elements either, and keeps it in the graph
        // (its gradient: zeros).
        return B::reshape(&B::narrow(input, 2, 0, 0)?, output_shape);
    }
    let (dtype, device) = (B::dtype(input), B::device(input));
    let rows = B::from_f64_vec(averaging_matrix(op, oh, h)?, Shape::new([1, oh, h]), dtype, &device)?;
    let columns = B::from_f64_vec(averaging_matrix(op, ow, w)?, Shape::new([1, ow, w]), dtype, &device)?;
    let planes = product(op, "the planes", &[n, c])?;
    let rows = B::expand(&rows, Shape::new([planes, oh, h]))?;
    let columns = B::expand(&B::swap_dims(&columns, 1, 2)?, Shape::new([planes, w, ow]))?;
    let pooled = B::matmul(&B::matmul(&rows, &B::reshape(input, Shape::new([planes, h, w]))?)?, &columns)?;
    B::reshape(&pooled, output_shape)
}
