//! Convolutions: each image unfolded (im2col) into one buffer, then one matrix product per group by
//! `matrixmultiply`, straight into the output; the transposed convolution multiplies first, then folds (col2im).
//! Products accumulate in the element type and round once to the dtype.

use ndarray::linalg::general_mat_mul;
use ndarray::{ArcArrayD, ArrayD, ArrayView2, ArrayViewD, ArrayViewMut2, Axis};

use super::planes::{array_of, fold_plane, unfold_plane};
use crate::backend::window::{Conv2dGeometry, conv_transpose2d_geometry, conv2d_geometry, dims3, dims4, product};
use crate::backend::{Conv1dOptions, Conv2dOptions};
use crate::backends::ndarray::tensor::{Element, NdArrayTensor, ndarray_error, row_major, with_arrays};
use crate::error::Result;
use crate::memory;
use crate::shape::Shape;

pub(in crate::backends::ndarray) fn conv2d(
    input: &NdArrayTensor,
    weight: &NdArrayTensor,
    options: Conv2dOptions,
) -> Result<NdArrayTensor> {
    let op = "conv2d";
    with_arrays!(op, input, weight, |x, k| {
        let geometry = conv2d_geometry(op, &input.shape(), &weight.shape(), &options)?;
        Ok(NdArrayTensor::output(input.dtype(), convolve::<E>(op, x.view(), k.view(), &geometry, &options)?))
    })
}

/// `conv2d` of a height-1 image, checked under this op's name.
pub(in crate::backends::ndarray) fn conv1d(
    input: &NdArrayTensor,
    weight: &NdArrayTensor,
    options: Conv1dOptions,
) -> Result<NdArrayTensor> {
    let op = "conv1d";
    with_arrays!(op, input, weight, |x, k| {
        let [n, c, length] = dims3(op, "an input [batch, channels, length]", &input.shape())?;
        let [o, c_per_group, kernel] = dims3(op, "a weight [out, in / groups, kernel]", &weight.shape())?;
        let options = options.as_2d();
        let (image, filters) = (Shape::new([n, c, 1, length]), Shape::new([o, c_per_group, 1, kernel]));
        let geometry = conv2d_geometry(op, &image, &filters, &options)?;
        let (x, k) = (x.view().insert_axis(Axis(2)), k.view().insert_axis(Axis(2)));
        let output = convolve::<E>(op, x, k, &geometry, &options)?.remove_axis(Axis(2));
        Ok(NdArrayTensor::output(input.dtype(), output))
    })
}

/// `[n, c, h, w]` by `[o, c / groups, kh, kw]`: per image, its unfolding by the window, then for each group the
/// group's filters `[o / groups, c / groups * kh * kw]` times the group's rows of the unfolding.
fn convolve<E: Element>(
    op: &'static str,
    input: ArrayViewD<'_, E>,
    weight: ArrayViewD<'_, E>,
    geometry: &Conv2dGeometry,
    options: &Conv2dOptions,
) -> Result<ArrayD<E>> {
    let ([n, o, oh, ow], [_, c_per_group, kh, kw]) = (geometry.output, geometry.weight);
    let [_, c, h, w] = dims4(op, "an input", &Shape::new(input.shape()))?;
    Shape::new(geometry.output).check_tensor_shape(op)?;
    let mut output = memory::try_filled(op, product(op, "the output", &geometry.output)?, E::zero())?;
    if n == 0 || c == 0 {
        // An empty batch, or the sum over no channels: zeros.
        return array_of(op, &geometry.output, output);
    }
    let (x, k) = (row_major(op, input)?, row_major(op, weight)?);
    let (groups, positions) = (options.groups, product(op, "the positions", &[oh, ow])?);
    let (out_per_group, taps) = (o / groups, product(op, "a filter", &[c_per_group, kh, kw])?);
    let window = options.window([kh, kw]);
    // One image's unfolding, reused; zeros where a tap reads the padding, which `unfold_plane` leaves alone.
    let mut columns =
        memory::try_filled(op, product(op, "an unfolded image", &[geometry.rows, positions])?, E::zero())?;
    let (image_len, plane_len) = (product(op, "an image", &[c, h, w])?, product(op, "a plane", &[h, w])?);
    let channel_rows = kh * kw * positions;
    // None of the chunk sizes is 0: `conv2d_geometry` refused empty planes, kernels and outputs.
    for (image, out) in x.chunks_exact(image_len).zip(output.chunks_exact_mut(o * positions)) {
        for (plane, rows) in image.chunks_exact(plane_len).zip(columns.chunks_exact_mut(channel_rows)) {
            unfold_plane(plane, [h, w], &window, [oh, ow], rows, positions);
        }
        for group in 0..groups {
            let filters = matrix(op, &k[group * out_per_group * taps..], [out_per_group, taps])?;
            let rows = matrix(op, &columns[group * taps * positions..], [taps, positions])?;
            let mut out = matrix_mut(op, &mut out[group * out_per_group * positions..], [out_per_group, positions])?;
            general_mat_mul(E::one(), &filters, &rows, E::zero(), &mut out);
        }
    }
    array_of(op, &geometry.output, output)
}

pub(in crate::backends::ndarray) fn conv_transpose2d(
    input: &NdArrayTensor,
    weight: &NdArrayTensor,
    options: Conv2dOptions,
) -> Result<NdArrayTensor> {
    let op = "conv_transpose2d";
    with_arrays!(op, input, weight, |x, k| {
        let output = conv_transpose2d_geometry(&input.shape(), &weight.shape(), &options)?;
        Ok(NdArrayTensor::output(input.dtype(), transposed_convolution::<E>(x, k, output, &options)?))
    })
}

/// `[n, c, h, w]` by `[c, o / groups, kh, kw]` to `output`: per image and group, the group's filters transposed,
/// `[o / groups * kh * kw, c / groups]`, times the group's channels `[c / groups, h * w]`, which gives one row of
/// `h * w` columns per output channel and tap; then each output channel's `kh * kw` rows folded into its plane.
fn transposed_convolution<E: Element>(
    input: &ArcArrayD<E>,
    weight: &ArcArrayD<E>,
    output: [usize; 4],
    options: &Conv2dOptions,
) -> Result<ArrayD<E>> {
    let op = "conv_transpose2d";
    let ([n, o, height, width], [_, c, h, w]) = (output, dims4(op, "an input", &Shape::new(input.shape()))?);
    let [_, out_per_group, kh, kw] = dims4(op, "a weight", &Shape::new(weight.shape()))?;
    Shape::new(output).check_tensor_shape(op)?;
    let mut folded = memory::try_filled(op, product(op, "the output", &output)?, E::zero())?;
    if n == 0 {
        return array_of(op, &output, folded);
    }
    let (x, k) = (row_major(op, input.view())?, row_major(op, weight.view())?);
    let (c_per_group, filter) = (c / options.groups, product(op, "a filter", &[out_per_group, kh, kw])?);
    let plane_len = product(op, "a plane", &[h, w])?;
    let mut columns = memory::try_filled(op, product(op, "an image's columns", &[o, kh, kw, plane_len])?, E::zero())?;
    let window = options.window([kh, kw]);
    // None of the chunk sizes is 0: the weight has no empty dimension, and only an empty batch (returned above)
    // may have an empty plane or output.
    let (image_len, output_len) = (c * plane_len, product(op, "an output image", &[o, height, width])?);
    for (image, out) in x.chunks_exact(image_len).zip(folded.chunks_exact_mut(output_len)) {
        for group in 0..options.groups {
            let filters = matrix(op, &k[group * c_per_group * filter..], [c_per_group, filter])?;
            let channels = matrix(op, &image[group * c_per_group * plane_len..], [c_per_group, plane_len])?;
            let mut rows = matrix_mut(op, &mut columns[group * filter * plane_len..], [filter, plane_len])?;
            general_mat_mul(E::one(), &filters.t(), &channels, E::zero(), &mut rows);
        }
        // The window's positions over the output are the input's `[h, w]` (`conv_transpose2d_geometry`).
        let channel_rows = kh * kw * plane_len;
        for (plane, rows) in out.chunks_exact_mut(height * width).zip(columns.chunks_exact(channel_rows)) {
            fold_plane(rows, plane_len, plane, [height, width], &window, [h, w]);
        }
    }
    array_of(op, &output, folded)
}

/// The `[rows, columns]` matrix at the start of `values`, row-major.
fn matrix<'a, E>(op: &'static str, values: &'a [E], [rows, columns]: [usize; 2]) -> Result<ArrayView2<'a, E>> {
    ArrayView2::from_shape((rows, columns), &values[..rows * columns]).map_err(|error| ndarray_error(op, error))
}

fn matrix_mut<'a, E>(
    op: &'static str,
    values: &'a mut [E],
    [rows, columns]: [usize; 2],
) -> Result<ArrayViewMut2<'a, E>> {
    ArrayViewMut2::from_shape((rows, columns), &mut values[..rows * columns]).map_err(|error| ndarray_error(op, error))
}
