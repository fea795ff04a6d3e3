//! Window ops. The convolutions of CPU tensors run the ndarray backend's kernels (`window/conv`).
//! Elsewhere they run on candle's kernels where those take the options (one stride, padding and dilation for both
//! sides; a transposed convolution of one group, so groups are split): padding on one side only is added as zeros
//! first. Other options take the composed default, over this backend's `unfold2d`, `fold2d` and matmul, all on the
//! device. Pooling and the two column ops are in `window/`.

mod columns;
mod conv;
mod pool;

use candle_core::Tensor;

pub(super) use self::columns::{fold2d, unfold};
use self::conv::{Product, on_cpu};
pub(super) use self::pool::{adaptive_avg_pool2d, max_pool2d, max_pool2d_indices};
use super::error::OrBackend;
use super::layout::shape_of;
use super::memory::{check_output, check_output_like};
use super::operands::check_operands;
use crate::backend::window::{
    Conv1dOptions, Conv2dOptions, conv_transpose2d_geometry, conv2d_geometry, conv2d_weight_geometry, dims3, dims4,
    product,
};
use crate::backend::{Backend, defaults};
use crate::error::Result;
use crate::kernels::window::Convolution;
use crate::shape::Shape;

/// The one value of a `[height, width]` pair that is the same on both sides.
fn same(pair: [usize; 2]) -> Option<usize> {
    (pair[0] == pair[1]).then_some(pair[0])
}

/// Whether `size + 2 * padding` passes `isize::MAX`, where candle's kernels count cell positions (the geometry
/// checked that it fits in `usize`).
fn beyond_isize(size: usize, padding: usize) -> bool {
    size as u128 + 2 * padding as u128 > isize::MAX as u128
}

/// On the CPU, `kernels::window`. Elsewhere candle's own kernel where stride and dilation are the same on both sides
/// (padding on one side only is added as zeros first), else the default; also for an empty input (an empty batch,
/// no channels), and where candle's kernel would overflow. The sizes are checked first: there is room for candle's
/// unfolded input and the output.
pub(super) fn conv2d<B: Backend<FloatTensor = Tensor>>(
    input: &Tensor,
    weight: &Tensor,
    options: Conv2dOptions,
) -> Result<Tensor> {
    let op = "conv2d";
    // Devices and dtypes first, as the default checks them: operands that mix dtypes and do not fit are the same
    // error on every backend.
    check_operands(op, [input, weight])?;
    let geometry = conv2d_geometry(op, &shape_of(input), &shape_of(weight), &options)?;
    let convolution = Convolution::of(op, &shape_of(input), &geometry, &options)?;
    if let Some(output) = on_cpu(op, [input, weight], convolution, Product::Forward, geometry.output)? {
        return Ok(output);
    }
    let [n, c, h, w] = dims4(op, "an input", &shape_of(input))?;
    let (Some(stride), Some(dilation)) = (same(options.stride), same(options.dilation)) else {
        return defaults::conv2d::<B>(input, weight, options);
    };
    // (candle 0.9.2's CPU kernel also misread inputs whose channels, height and width are equal,
    // huggingface/candle#3404; 0.11 computes them right, and tests/tests/convolution.rs keeps such cases.)
    let [ph, pw] = options.padding;
    if input.elem_count() == 0 || beyond_isize(h, ph) || beyond_isize(w, pw) {
        return defaults::conv2d::<B>(input, weight, options);
    }
    check_output(op, input.device(), geometry.columns, input.dtype())?;
    check_output(op, input.device(), product(op, "the output", &geometry.output)?, input.dtype())?;
    let (input, padding) = match same(options.padding) {
        Some(padding) => (input.clone(), padding),
        None => {
            // Below `isize::MAX` on each side.
            let padded = product(op, "the padded input", &[n, c, h + 2 * ph, w + 2 * pw])?;
            check_output(op, input.device(), padded, input.dtype())?;
            let padded = input.pad_with_zeros(2, ph, ph).and_then(|padded| padded.pad_with_zeros(3, pw, pw));
            (padded.or_backend(op)?, 0)
        }
    };
    input.conv2d(weight, padding, stride, dilation, options.groups).or_backend(op)
}

/// On the CPU, `conv2d` of a height-1 image. Elsewhere candle's `conv1d`, which takes every option; the default (the
/// same `conv2d`) for an empty input and where candle's kernel would overflow.
pub(super) fn conv1d<B: Backend<FloatTensor = Tensor>>(
    input: &Tensor,
    weight: &Tensor,
    options: Conv1dOptions,
) -> Result<Tensor> {
    let op = "conv1d";
    check_operands(op, [input, weight])?;
    let [n, c, length] = dims3(op, "an input [batch, channels, length]", &shape_of(input))?;
    let [o, c_per_group, kernel] = dims3(op, "a weight [out, in / groups, kernel]", &shape_of(weight))?;
    let geometry = conv2d_geometry(
        op,
        &Shape::new([n, c, 1, length]),
        &Shape::new([o, c_per_group, 1, kernel]),
        &options.as_2d(),
    )?;
    if input.device().is_cpu() {
        // A height-1 image, on the CPU kernels (sizes checked above, under this op's name).
        let (image, filters) = (input.unsqueeze(2).or_backend(op)?, weight.unsqueeze(2).or_backend(op)?);
        return conv2d::<B>(&image, &filters, options.as_2d())?.squeeze(2).or_backend(op);
    }
    if input.elem_count() == 0 || beyond_isize(length, options.padding) {
        return defaults::conv1d::<B>(input, weight, options);
    }
    check_output(op, input.device(), geometry.columns, input.dtype())?;
    check_output(op, input.device(), product(op, "the output", &geometry.output)?, input.dtype())?;
    let Conv1dOptions { stride, padding, dilation, groups } = options;
    input.conv1d(weight, padding, stride, dilation, groups).or_backend(op)
}

/// On the CPU, `kernels::window`. Elsewhere candle's `conv_transpose2d`, one group at a time, where every option is
/// the same on both sides; the default (a matmul per group, then `fold2d`) otherwise and for an empty batch.
pub(super) fn conv_transpose2d<B: Backend<FloatTensor = Tensor>>(
    input: &Tensor,
    weight: &Tensor,
    options: Conv2dOptions,
) -> Result<Tensor> {
    let op = "conv_transpose2d";
    check_operands(op, [input, weight])?;
    let output = conv_transpose2d_geometry(&shape_of(input), &shape_of(weight), &options)?;
    let convolution = Convolution::transposed_of(op, &shape_of(input), &shape_of(weight), output, &options)?;
    if let Some(images) = on_cpu(op, [input, weight], convolution, Product::Transposed, output)? {
        return Ok(images);
    }
    let Conv2dOptions { stride, padding, dilation, groups, output_padding } = options;
    let (Some(stride), Some(padding), Some(dilation), Some(output_padding)) =
        (same(stride), same(padding), same(dilation), same(output_padding))
    else {
        return defaults::conv_transpose2d::<B>(input, weight, options);
    };
    if input.elem_count() == 0 {
        return defaults::conv_transpose2d::<B>(input, weight, options);
    }
    // candle's CPU kernel copies the input into another layout first.
    check_output_like(op, input)?;
    check_output(op, input.device(), product(op, "the output", &output)?, input.dtype())?;
    let per_group = input.dims()[1] / groups;
    let convolved = (0..groups)
        .map(|group| {
            let input = input.narrow(1, group * per_group, per_group)?;
            let weight = weight.narrow(0, group * per_group, per_group)?;
            input.conv_transpose2d(&weight, padding, output_padding, stride, dilation)
        })
        .collect::<candle_core::Result<Vec<_>>>()
        .or_backend(op)?;
    Tensor::cat(&convolved, 1).or_backend(op)
}

/// On the CPU, `kernels::window`'s weight gradient; elsewhere the default (over `unfold2d`).
pub(super) fn conv2d_weight_gradient<B: Backend<FloatTensor = Tensor>>(
    input: &Tensor,
    gradient: &Tensor,
    kernel: [usize; 2],
    options: Conv2dOptions,
) -> Result<Tensor> {
    let op = "conv2d_weight_gradient";
    check_operands(op, [input, gradient])?;
    let geometry = conv2d_weight_geometry(&shape_of(input), &shape_of(gradient), kernel, &options)?;
    let convolution = Convolution::of(op, &shape_of(input), &geometry, &options)?;
    match on_cpu(op, [input, gradient], convolution, Product::WeightGradient, geometry.weight)? {
        Some(weight) => Ok(weight),
        None => defaults::conv2d_weight_gradient::<B>(input, gradient, kernel, options),
    }
}
