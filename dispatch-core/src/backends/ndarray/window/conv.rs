//! Convolutions, on `kernels::window`: each image unfolded (im2col) into a buffer the next image reuses, one matrix
//! product per group by `matrixmultiply`; the transposed convolution multiplies first, then folds (col2im); the
//! weight's gradient sums each image's product with its unfolding. Products accumulate in the element type and
//! round once to the dtype.

use crate::backend::window::{conv_transpose2d_geometry, conv2d_geometry, conv2d_weight_geometry, dims3};
use crate::backend::{Conv1dOptions, Conv2dOptions};
use crate::backends::ndarray::tensor::{NdArrayTensor, array_of, row_major, with_arrays};
use crate::error::Result;
use crate::kernels::window::Convolution;
use crate::shape::Shape;

pub(in crate::backends::ndarray) fn conv2d(
    input: &NdArrayTensor,
    weight: &NdArrayTensor,
    options: Conv2dOptions,
) -> Result<NdArrayTensor> {
    let op = "conv2d";
    with_arrays!(op, input, weight, |x, k| {
        let geometry = conv2d_geometry(op, &input.shape(), &weight.shape(), &options)?;
        let convolution = Convolution::of(op, &input.shape(), &geometry, &options)?;
        let output = convolution.forward(op, &row_major(op, x.view())?, &row_major(op, k.view())?)?;
        Ok(NdArrayTensor::output(input.dtype(), array_of(op, &geometry.output, output)?))
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
        let image = Shape::new([n, c, 1, length]);
        let geometry = conv2d_geometry(op, &image, &Shape::new([o, c_per_group, 1, kernel]), &options)?;
        let convolution = Convolution::of(op, &image, &geometry, &options)?;
        // A height-1 image has the row-major values of its signal.
        let output = convolution.forward(op, &row_major(op, x.view())?, &row_major(op, k.view())?)?;
        let [_, _, _, out_length] = geometry.output;
        Ok(NdArrayTensor::output(input.dtype(), array_of(op, &[n, o, out_length], output)?))
    })
}

pub(in crate::backends::ndarray) fn conv_transpose2d(
    input: &NdArrayTensor,
    weight: &NdArrayTensor,
    options: Conv2dOptions,
) -> Result<NdArrayTensor> {
    let op = "conv_transpose2d";
    with_arrays!(op, input, weight, |x, k| {
        let output = conv_transpose2d_geometry(&input.shape(), &weight.shape(), &options)?;
        let convolution = Convolution::transposed_of(op, &input.shape(), &weight.shape(), output, &options)?;
        let images = convolution.transposed(op, &row_major(op, x.view())?, &row_major(op, k.view())?)?;
        Ok(NdArrayTensor::output(input.dtype(), array_of(op, &output, images)?))
    })
}

pub(in crate::backends::ndarray) fn conv2d_weight_gradient(
    input: &NdArrayTensor,
    gradient: &NdArrayTensor,
    kernel: [usize; 2],
    options: Conv2dOptions,
) -> Result<NdArrayTensor> {
    let op = "conv2d_weight_gradient";
    with_arrays!(op, input, gradient, |x, g| {
        let geometry = conv2d_weight_geometry(&input.shape(), &gradient.shape(), kernel, &options)?;
        let convolution = Convolution::of(op, &input.shape(), &geometry, &options)?;
        let weight = convolution.weight_gradient(op, &row_major(op, x.view())?, &row_major(op, g.view())?)?;
        Ok(NdArrayTensor::output(input.dtype(), array_of(op, &geometry.weight, weight)?))
    })
}
