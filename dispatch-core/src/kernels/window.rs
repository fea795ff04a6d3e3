//! The window kernels both CPU backends run, on row-major slices: the max pool (one pass over each window) and the
//! convolutions. One convolution has three products:
//! - the forward: each image unfolded (im2col), then one matrix product per group;
//! - its adjoint by the input, the transposed convolution: one product per group, then folded back (col2im);
//! - its adjoint by the weight, the weight's gradient: each image's output gradient times its unfolding, summed.
//!
//! Each image is unfolded into a buffer that the next image reuses, so the unfolding of a whole batch is never held.
//! (It was the peak of a LeNet step while the weight's gradient came from `unfold2d`.) Products accumulate in the
//! element type.
//!
//! When the products are small (matrixmultiply gives them one thread), the batch is split over rayon's threads,
//! each part with its own buffer, and an image's values are the same on any number of threads. The weight's
//! gradient sums fixed blocks of images, then the blocks in order: its blocks depend on the sizes, not on the
//! threads.

use std::ops::{AddAssign, Range};

use ndarray::linalg::general_mat_mul;
use ndarray::{ArrayView2, ArrayViewMut2, LinalgScalar};
use num_traits::{Float, Zero};
use rayon::prelude::*;

use crate::backend::window::{Conv2dGeometry, Conv2dOptions, Window2d, dims4};
use crate::error::{Error, Result};
use crate::memory;
use crate::parallel::{self, Work, try_for_each_part};
use crate::shape::Shape;

/// The most blocks the weight's gradient sums separately (each holds a weight-sized sum), so at most this many
/// threads share it.
const WEIGHT_BLOCKS: usize = 8;

/// A convolution's sizes: `image` planes `[n, c, h, w]` under `window` give `output` planes `[n, o, oh, ow]`,
/// through a weight `[o, c / groups, kh, kw]`. A transposed convolution is the adjoint of one: its input has the
/// `output` planes, its output the `image` planes, and its weight the same layout.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Convolution {
    pub(crate) image: [usize; 4],
    pub(crate) output: [usize; 4],
    pub(crate) window: Window2d,
    pub(crate) groups: usize,
}

/// The lengths a convolution's loops walk, from `Convolution::sizes`.
struct Sizes {
    /// One image, `c * h * w`, and one plane of it, `h * w`.
    image: usize,
    plane: usize,
    /// One image's output, `o * oh * ow`, and the output positions `oh * ow`.
    output: usize,
    positions: usize,
    /// One group's filter `c / groups * kh * kw` (its rows of the unfolding) and its output channels.
    taps: usize,
    out_per_group: usize,
    /// One image's unfolding, `c * kh * kw * oh * ow`.
    columns: usize,
    /// The weight, `o * taps`.
    weight: usize,
}

impl Convolution {
    /// The convolution of `input` that `geometry` describes.
    pub(crate) fn of(
        op: &'static str,
        input: &Shape,
        geometry: &Conv2dGeometry,
        options: &Conv2dOptions,
    ) -> Result<Self> {
        let [_, _, kh, kw] = geometry.weight;
        let image = dims4(op, "an input", input)?;
        Ok(Self { image, output: geometry.output, window: options.window([kh, kw]), groups: options.groups })
    }

    /// The convolution whose adjoint by its images is the transposed convolution of `input` to `output` by a
    /// `weight`: from planes of the transposed convolution's output to planes of its input.
    pub(crate) fn transposed_of(
        op: &'static str,
        input: &Shape,
        weight: &Shape,
        output: [usize; 4],
        options: &Conv2dOptions,
    ) -> Result<Self> {
        let [_, _, kh, kw] = dims4(op, "a weight", weight)?;
        let input = dims4(op, "an input", input)?;
        Ok(Self { image: output, output: input, window: options.window([kh, kw]), groups: options.groups })
    }

    /// The loops' lengths, checked to fit `usize`; `None` where some is 0, which leaves no product to compute (an
    /// empty batch, no channels, an empty plane: the outputs are zeros).
    fn sizes(&self, op: &'static str) -> Result<Option<Sizes>> {
        let ([n, c, h, w], [_, o, oh, ow], [kh, kw]) = (self.image, self.output, self.window.kernel);
        let groups = self.groups;
        if [n, c, h, w, o, oh, ow, kh, kw, groups].contains(&0) {
            return Ok(None);
        }
        let product = |values: &[usize]| {
            values
                .iter()
                .try_fold(1usize, |total, &value| total.checked_mul(value))
                .ok_or(Error::SizeOverflow { op, what: "a convolution's sizes" })
        };
        let taps = product(&[c / groups, kh, kw])?;
        let (out_per_group, positions) = (o / groups, product(&[oh, ow])?);
        Ok(Some(Sizes {
            image: product(&[c, h, w])?,
            plane: product(&[h, w])?,
            output: product(&[o, positions])?,
            positions,
            taps,
            out_per_group,
            columns: product(&[c, kh, kw, positions])?,
            weight: product(&[o, taps])?,
        }))
    }

    /// `conv2d`: the output planes of `images` by `weight`, every value written.
    pub(crate) fn forward<E: Element>(&self, op: &'static str, images: &[E], weight: &[E]) -> Result<Vec<E>> {
        let mut outputs = memory::try_filled(op, self.len(op, self.output)?, E::zero())?;
        let Some(sizes) = self.sizes(op)? else { return Ok(outputs) };
        check_len(op, images, sizes.image, self.image[0])?;
        check_len(op, weight, sizes.weight, 1)?;
        let (filters, taps, positions) = ([sizes.out_per_group, sizes.taps], sizes.taps, sizes.positions);
        self.each_image(op, &sizes, (images, sizes.image), (&mut outputs, sizes.output), |columns, image, output| {
            self.unfold(&sizes, image, columns);
            for (group, output) in output.chunks_exact_mut(sizes.out_per_group * positions).enumerate() {
                let filters = matrix(op, weight, group, filters)?;
                let rows = matrix(op, columns, group, [taps, positions])?;
                general_mat_mul(
                    E::one(),
                    &filters,
                    &rows,
                    E::zero(),
                    &mut matrix_mut(op, output, 0, [sizes.out_per_group, positions])?,
                );
            }
            Ok(())
        })?;
        Ok(outputs)
    }

    /// `conv_transpose2d`: the image planes of `outputs` (planes of the output's size) by `weight`, the adjoint of
    /// `forward` by its images: each group's filters transposed times the group's channels, then folded.
    pub(crate) fn transposed<E: Element>(&self, op: &'static str, outputs: &[E], weight: &[E]) -> Result<Vec<E>> {
        let mut images = memory::try_filled(op, self.len(op, self.image)?, E::zero())?;
        let Some(sizes) = self.sizes(op)? else { return Ok(images) };
        check_len(op, outputs, sizes.output, self.image[0])?;
        check_len(op, weight, sizes.weight, 1)?;
        let (filters, taps, positions) = ([sizes.out_per_group, sizes.taps], sizes.taps, sizes.positions);
        self.each_image(op, &sizes, (outputs, sizes.output), (&mut images, sizes.image), |columns, output, image| {
            for (group, rows) in columns.chunks_exact_mut(taps * positions).enumerate() {
                let filters = matrix(op, weight, group, filters)?;
                let channels = matrix(op, output, group, [sizes.out_per_group, positions])?;
                general_mat_mul(
                    E::one(),
                    &filters.t(),
                    &channels,
                    E::zero(),
                    &mut matrix_mut(op, rows, 0, [taps, positions])?,
                );
            }
            self.fold(&sizes, columns, image);
            Ok(())
        })?;
        Ok(images)
    }

    /// The gradient of `forward`'s weight, `[o, c / groups, kh, kw]`, from its `images` and the gradient of its
    /// `outputs`: for each group, each image's output gradient `[o / groups, positions]` times the transpose of its
    /// unfolding `[positions, c / groups * kh * kw]`, summed over the batch.
    pub(crate) fn weight_gradient<E: Element>(&self, op: &'static str, images: &[E], outputs: &[E]) -> Result<Vec<E>> {
        let n = self.image[0];
        let Some(sizes) = self.sizes(op)? else {
            let [kh, kw] = self.window.kernel;
            let weight = [self.output[1], self.image[1] / self.groups.max(1), kh, kw];
            return memory::try_filled(op, self.len(op, weight)?, E::zero());
        };
        check_len(op, images, sizes.image, n)?;
        check_len(op, outputs, sizes.output, n)?;
        let (filters, taps, positions) = ([sizes.out_per_group, sizes.taps], sizes.taps, sizes.positions);
        // Blocks fixed by the sizes: at most as many weight-sized sums as the batch's unfolding, which this replaces,
        // would hold.
        let blocks = WEIGHT_BLOCKS.min(n).min((sizes.columns.saturating_mul(n) / sizes.weight).max(1));
        let per_block = n.div_ceil(blocks);
        let block = |first: usize| -> Result<Vec<E>> {
            let mut sum = memory::try_filled(op, sizes.weight, E::zero())?;
            let mut columns = memory::try_filled(op, sizes.columns, E::zero())?;
            for index in first..(first + per_block).min(n) {
                self.unfold(&sizes, nth(op, images, index, sizes.image)?, &mut columns);
                let output = nth(op, outputs, index, sizes.output)?;
                for (group, sum) in sum.chunks_exact_mut(sizes.out_per_group * taps).enumerate() {
                    let met = matrix(op, output, group, [sizes.out_per_group, positions])?;
                    let rows = matrix(op, &columns, group, [taps, positions])?;
                    general_mat_mul(E::one(), &met, &rows.t(), E::one(), &mut matrix_mut(op, sum, 0, filters)?);
                }
            }
            Ok(sum)
        };
        let firsts = (0..blocks).map(|index| index * per_block);
        let sums: Vec<Vec<E>> = if blocks > 1 && self.splits(&sizes) {
            firsts.collect::<Vec<_>>().into_par_iter().map(block).collect::<Result<_>>()?
        } else {
            firsts.map(block).collect::<Result<_>>()?
        };
        let mut sums = sums.into_iter();
        let mut total = sums.next().unwrap_or_default();
        for sum in sums {
            total.iter_mut().zip(&sum).for_each(|(total, &value)| *total += value);
        }
        Ok(total)
    }

    /// The elements of an output of `dims`, once they are known to make a tensor: an empty batch may come with a
    /// plane too large for one (`Error::ShapeTooLarge`).
    fn len(&self, op: &'static str, dims: [usize; 4]) -> Result<usize> {
        let shape = Shape::new(dims);
        shape.check_tensor_shape(op)?;
        Ok(shape.num_elements())
    }

    /// Whether the batch is split over threads: there is enough of it. matrixmultiply runs each product on the
    /// thread that calls it (its own threads are left off, see `kernels::matmul`), so images are the parts.
    fn splits(&self, sizes: &Sizes) -> bool {
        parallel::split(Work::Heavy, sizes.columns.saturating_mul(self.image[0]))
    }

    /// `f(columns, read, write)` for each image's slice of `reads` and of `writes` (of the given lengths), the
    /// columns being a buffer of one unfolding that images reuse: in parts over rayon's threads when `splits`, each
    /// part with its own buffer. Taps in the padding are never written to the buffer, so they stay 0.
    fn each_image<E: Element>(
        &self,
        op: &'static str,
        sizes: &Sizes,
        (reads, read_len): (&[E], usize),
        (writes, write_len): (&mut [E], usize),
        f: impl Fn(&mut [E], &[E], &mut [E]) -> Result<()> + Sync,
    ) -> Result<()> {
        let part = |first: usize, writes: &mut [E]| -> Result<()> {
            let mut columns = memory::try_filled(op, sizes.columns, E::zero())?;
            for (index, write) in writes.chunks_exact_mut(write_len).enumerate() {
                f(&mut columns, nth(op, reads, first + index, read_len)?, write)?;
            }
            Ok(())
        };
        if self.splits(sizes) {
            let per_part = self.image[0].div_ceil(rayon::current_num_threads()).max(1);
            writes
                .par_chunks_mut(per_part.saturating_mul(write_len))
                .enumerate()
                .try_for_each(|(index, writes)| part(index * per_part, writes))
        } else {
            part(0, writes)
        }
    }

    /// im2col of one image into `columns`: row `channel * kh * kw + tap`, one column per output position.
    fn unfold<E: Copy>(&self, sizes: &Sizes, image: &[E], columns: &mut [E]) {
        let channel_rows = sizes.columns / self.image[1];
        for (plane, rows) in image.chunks_exact(sizes.plane).zip(columns.chunks_exact_mut(channel_rows)) {
            unfold_plane(plane, self.plane(), &self.window, self.positions(), rows, sizes.positions);
        }
    }

    /// col2im of one image's `columns` into `image`, whose cells each tap is added to.
    fn fold<E: Copy + AddAssign>(&self, sizes: &Sizes, columns: &[E], image: &mut [E]) {
        let channel_rows = sizes.columns / self.image[1];
        for (plane, rows) in image.chunks_exact_mut(sizes.plane).zip(columns.chunks_exact(channel_rows)) {
            fold_plane(rows, sizes.positions, plane, self.plane(), &self.window, self.positions());
        }
    }

    fn plane(&self) -> [usize; 2] {
        [self.image[2], self.image[3]]
    }

    fn positions(&self) -> [usize; 2] {
        [self.output[2], self.output[3]]
    }
}

/// The largest tap of each window of `planes` `[n, c, h, w]`, row-major in `values`, over `[n, c, oh, ow]`:
/// `-inf` for a window of padding alone; a NaN tap wins.
pub(crate) fn max_pool2d<E: Float + Send + Sync>(
    op: &'static str,
    values: &[E],
    planes: [usize; 4],
    window: &Window2d,
    output: [usize; 4],
) -> Result<Vec<E>> {
    window_maxima(op, values, planes, window, output, |best| Ok(best.map_or(E::neg_infinity(), |(_, value)| value)))
}

/// The flat `row * width + column` of each window's first largest tap; a NaN tap wins (the first one), padding
/// taps never do, and a window of padding alone is an error.
pub(crate) fn max_pool2d_indices<E: Float + Send + Sync>(
    op: &'static str,
    values: &[E],
    planes: [usize; 4],
    window: &Window2d,
    output: [usize; 4],
) -> Result<Vec<i64>> {
    window_maxima(op, values, planes, window, output, |best: Option<(usize, E)>| {
        // A window of padding alone has no input to point at: its `max_pool2d` is `-inf`.
        let (at, _) = best.ok_or_else(|| {
            Error::invalid_value(op, "padding", window.padding, "small enough that every window covers some input")
        })?;
        i64::try_from(at).map_err(|_| Error::SizeOverflow { op, what: "an index into the plane" })
    })
}

/// `output` of each window's first largest tap (its flat index in the plane, and its value), `None` if the window
/// covers only padding; the taps are visited row by row, each row's taps a strided slice of an input row.
fn window_maxima<E: Float + Send + Sync, O: Copy + Zero + Send>(
    op: &'static str,
    values: &[E],
    [_, _, h, w]: [usize; 4],
    window: &Window2d,
    [n, c, oh, ow]: [usize; 4],
    output: impl Fn(Option<(usize, E)>) -> Result<O> + Sync + Send,
) -> Result<Vec<O>> {
    let len = [n, c, oh, ow].iter().try_fold(1usize, |total, &dim| total.checked_mul(dim));
    let len = len.ok_or(Error::SizeOverflow { op, what: "the output" })?;
    let mut outputs = memory::try_filled(op, len, O::zero())?;
    if values.len() != n.saturating_mul(c).saturating_mul(h).saturating_mul(w) {
        return Err(Error::invalid(op, "an operand's elements do not match its shape"));
    }
    // Planes across threads: each window reads one plane and writes one output.
    try_for_each_part(Work::Heavy, (&mut outputs, oh * ow), (values, h * w), |outputs, plane| {
        let mut slots = outputs.iter_mut();
        for y in 0..oh {
            let down = window.taps_in_input(0, y, h);
            for (x, slot) in (0..ow).zip(slots.by_ref()) {
                let across = window.taps_in_input(1, x, w);
                let mut best: Option<(usize, E)> = None;
                for i in down.clone().filter(|_| !across.is_empty()) {
                    let start = window.cell(0, y, i) * w + window.cell(1, x, across.start);
                    let taps = plane[start..].iter().step_by(window.dilation[1]).take(across.len());
                    for (k, &value) in taps.enumerate() {
                        let wins = match best {
                            None => true,
                            Some((_, max)) => !max.is_nan() && (value.is_nan() || value > max),
                        };
                        if wins {
                            best = Some((start + k * window.dilation[1], value));
                        }
                    }
                }
                *slot = output(best)?;
            }
        }
        Ok(())
    })?;
    Ok(outputs)
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
pub(crate) fn unfold_plane<E: Copy>(
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
pub(crate) fn fold_plane<E: Copy + AddAssign>(
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

/// The element types the convolutions run in.
pub(crate) trait Element: LinalgScalar + AddAssign + Send + Sync {}

impl<E: LinalgScalar + AddAssign + Send + Sync> Element for E {}

/// `Err` unless `values` holds `count` blocks of `len`: an operand of another size than its shape says.
fn check_len<E>(op: &'static str, values: &[E], len: usize, count: usize) -> Result<()> {
    if Some(values.len()) == len.checked_mul(count) {
        return Ok(());
    }
    Err(Error::invalid(op, "an operand's elements do not match its shape"))
}

/// Block `index` of `values`, blocks being `len` long.
fn nth<'a, E>(op: &'static str, values: &'a [E], index: usize, len: usize) -> Result<&'a [E]> {
    let start = index.checked_mul(len);
    let block = start.and_then(|start| values.get(start..start.checked_add(len)?));
    block.ok_or_else(|| Error::invalid(op, "an operand's elements do not match its shape"))
}

/// Matrix `index` of `[rows, columns]` in `values`, row-major.
fn matrix<'a, E>(
    op: &'static str,
    values: &'a [E],
    index: usize,
    [rows, columns]: [usize; 2],
) -> Result<ArrayView2<'a, E>> {
    let values = nth(op, values, index, rows.saturating_mul(columns))?;
    ArrayView2::from_shape((rows, columns), values).map_err(|error| Error::backend("cpu", op, error))
}

fn matrix_mut<'a, E>(
    op: &'static str,
    values: &'a mut [E],
    index: usize,
    [rows, columns]: [usize; 2],
) -> Result<ArrayViewMut2<'a, E>> {
    let len = rows.saturating_mul(columns);
    let start = index.saturating_mul(len);
    let values = values.get_mut(start..start.saturating_add(len));
    let values = values.ok_or_else(|| Error::invalid(op, "an operand's elements do not match its shape"))?;
    ArrayViewMut2::from_shape((rows, columns), values).map_err(|error| Error::backend("cpu", op, error))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Values in (-1, 1) that differ everywhere, from a small linear congruential sequence.
    fn values(len: usize, seed: u64) -> Vec<f64> {
        let mut state = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (0..len)
            .map(|_| {
                state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                (state >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
            })
            .collect()
    }

    /// The convolution's input cell that output `(y, x)` reads through tap `(i, j)`, if it is not padding.
    fn source(convolution: &Convolution, [y, x]: [usize; 2], [i, j]: [usize; 2]) -> Option<[usize; 2]> {
        let window = &convolution.window;
        let cell = |side: usize, out: usize, tap: usize| {
            let padded = out * window.stride[side] + tap * window.dilation[side];
            padded.checked_sub(window.padding[side]).filter(|&cell| cell < convolution.image[2 + side])
        };
        Some([cell(0, y, i)?, cell(1, x, j)?])
    }

    /// Every (output element, weight element, image element) triple the convolution multiplies, by direct loops.
    fn triples(convolution: &Convolution) -> Vec<[usize; 3]> {
        let ([n, c, h, w], [_, o, oh, ow], [kh, kw]) =
            (convolution.image, convolution.output, convolution.window.kernel);
        let (c_per_group, o_per_group) = (c / convolution.groups, o / convolution.groups);
        let mut triples = Vec::new();
        for (b, out, y, x) in
            (0..n).flat_map(|b| (0..o).flat_map(move |out| (0..oh * ow).map(move |p| (b, out, p / ow, p % ow))))
        {
            let group = out / o_per_group;
            for (k, i, j) in (0..c_per_group).flat_map(|k| (0..kh * kw).map(move |t| (k, t / kw, t % kw))) {
                if let Some([row, column]) = source(convolution, [y, x], [i, j]) {
                    let channel = group * c_per_group + k;
                    let output = ((b * o + out) * oh + y) * ow + x;
                    let weight = ((out * c_per_group + k) * kh + i) * kw + j;
                    let image = ((b * c + channel) * h + row) * w + column;
                    triples.push([output, weight, image]);
                }
            }
        }
        triples
    }

    /// Convolutions with every option away from 1 somewhere: groups, strides, padding on one side, dilation.
    fn convolutions() -> Vec<Convolution> {
        let of = |image: [usize; 4], out: usize, window: Window2d, groups: usize| {
            let [oh, ow] = window.output_size("test", [image[2], image[3]]).unwrap();
            Convolution { image, output: [image[0], out, oh, ow], window, groups }
        };
        vec![
            of([2, 3, 5, 6], 4, Window2d::new([2, 3]), 1),
            of([3, 4, 7, 5], 6, Window2d::new([3, 2]).stride([2, 1]).padding([1, 0]).dilation([1, 2]), 2),
            of([1, 2, 4, 4], 2, Window2d::new([1, 1]).stride([3, 3]), 2),
            // Large enough to be split over threads (with two of them), small enough for one-thread products.
            of([32, 6, 14, 14], 16, Window2d::new([5, 5]), 1),
            of([32, 1, 28, 28], 6, Window2d::new([5, 5]).padding([2, 2]), 1),
        ]
    }

    #[test]
    fn the_three_products_are_the_direct_sums() {
        for (index, convolution) in convolutions().into_iter().enumerate() {
            let seed = index as u64 * 3;
            let image_len = convolution.image.iter().product();
            let output_len = convolution.output.iter().product();
            let [kh, kw] = convolution.window.kernel;
            let weight_len = convolution.output[1] * convolution.image[1] / convolution.groups * kh * kw;
            let (images, weight, outputs) =
                (values(image_len, seed), values(weight_len, seed + 1), values(output_len, seed + 2));
            let (mut forward, mut transposed, mut weight_gradient) =
                (vec![0.0; output_len], vec![0.0; image_len], vec![0.0; weight_len]);
            for [o, k, x] in triples(&convolution) {
                forward[o] += weight[k] * images[x];
                transposed[x] += weight[k] * outputs[o];
                weight_gradient[k] += outputs[o] * images[x];
            }
            let close = |got: Vec<f64>, expected: Vec<f64>, what: &str| {
                assert_eq!(got.len(), expected.len(), "{what} of {convolution:?}");
                for (got, expected) in got.iter().zip(&expected) {
                    assert!(
                        (got - expected).abs() <= 1e-12 * (1.0 + expected.abs()),
                        "{what} of {convolution:?}: {got} against {expected}"
                    );
                }
            };
            close(convolution.forward("test", &images, &weight).unwrap(), forward, "forward");
            close(convolution.transposed("test", &outputs, &weight).unwrap(), transposed, "transposed");
            close(convolution.weight_gradient("test", &images, &outputs).unwrap(), weight_gradient, "weight gradient");
        }
    }

    #[test]
    fn values_do_not_depend_on_the_threads() {
        let pool = |threads: usize| rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        for convolution in convolutions() {
            let image_len: usize = convolution.image.iter().product();
            let output_len: usize = convolution.output.iter().product();
            let [kh, kw] = convolution.window.kernel;
            let weight_len = convolution.output[1] * convolution.image[1] / convolution.groups * kh * kw;
            let (images, weight, outputs) = (values(image_len, 7), values(weight_len, 8), values(output_len, 9));
            let (images, weight, outputs): (Vec<f32>, Vec<f32>, Vec<f32>) = (
                images.iter().map(|&x| x as f32).collect(),
                weight.iter().map(|&x| x as f32).collect(),
                outputs.iter().map(|&x| x as f32).collect(),
            );
            let run = |threads: usize| {
                pool(threads).install(|| {
                    [
                        convolution.forward("test", &images, &weight).unwrap(),
                        convolution.transposed("test", &outputs, &weight).unwrap(),
                        convolution.weight_gradient("test", &images, &outputs).unwrap(),
                    ]
                })
            };
            let bits =
                |products: [Vec<f32>; 3]| products.map(|values| values.iter().map(|x| x.to_bits()).collect::<Vec<_>>());
            assert_eq!(bits(run(1)), bits(run(2)), "{convolution:?}");
            assert_eq!(bits(run(1)), bits(run(3)), "{convolution:?}");
        }
    }

    #[test]
    fn empty_sizes_give_zeros_and_short_operands_an_error() {
        let convolution =
            Convolution { image: [0, 2, 3, 3], output: [0, 2, 2, 2], window: Window2d::new([2, 2]), groups: 1 };
        assert!(convolution.forward::<f32>("test", &[], &[0.0; 8]).unwrap().is_empty());
        assert_eq!(convolution.weight_gradient::<f32>("test", &[], &[]).unwrap(), vec![0.0; 16]);
        let convolution = Convolution { image: [1, 2, 3, 3], ..convolution };
        let convolution = Convolution { output: [1, 2, 2, 2], ..convolution };
        assert!(matches!(
            convolution.forward::<f32>("test", &[0.0; 17], &[0.0; 16]),
            Err(Error::InvalidArgument { .. })
        ));
        assert!(matches!(
            convolution.weight_gradient::<f32>("test", &[0.0; 18], &[0.0; 7]),
            Err(Error::InvalidArgument { .. })
        ));
    }
}
