//! Convolution and pooling over `[batch, channels, height, width]`, with windows that stride, pad and dilate.

use dispatch_core::backend::{Conv1dOptions, Conv2dOptions, Window2d};
use dispatch_core::{Backend, Shape};

use super::outputs::{Floats, Ints};
use crate::operands::Operands;

/// A 2x3 window with stride 2, padding 1 and dilation 2: over a 5x6 input, 3x2 positions.
pub const WINDOW: Window2d = Window2d { kernel: [2, 3], stride: [2, 2], padding: [1, 1], dilation: [2, 2] };

/// Stride 2, padding 1, dilation 2 and 2 groups.
const CONV: Conv2dOptions =
    Conv2dOptions { stride: [2, 2], padding: [1, 1], dilation: [2, 2], groups: 2, output_padding: [0, 0] };

/// `CONV` along one axis: stride 2, padding 1, dilation 2 and 2 groups.
const CONV1D: Conv1dOptions = Conv1dOptions { stride: 2, padding: 1, dilation: 2, groups: 2 };

/// A 3x3 window with stride 2 and padding 1, no dilation.
fn padded_3x3() -> Window2d {
    Window2d::new([3, 3]).stride([2, 2]).padding([1, 1])
}

pub fn unfold2d<B: Backend>(o: &Operands<B>) -> Floats<B> {
    vec![
        B::unfold2d(&o.image, WINDOW, 0.5),
        B::unfold2d(&o.image, padded_3x3(), 0.0),
        // Six rows do not fit a 5-row input.
        B::unfold2d(&o.image, Window2d::new([6, 1]), 0.0),
        B::unfold2d(&o.cube, WINDOW, 0.0),
    ]
}

pub fn fold2d<B: Backend>(o: &Operands<B>) -> Floats<B> {
    vec![
        B::fold2d(&o.columns, 5, 6, WINDOW),
        // 6x6 gives the same 3x2 positions.
        B::fold2d(&o.columns, 6, 6, WINDOW),
        // 5x8 gives 3x3 positions, not the 6 columns.
        B::fold2d(&o.columns, 5, 8, WINDOW),
    ]
}

pub fn conv2d<B: Backend>(o: &Operands<B>) -> Floats<B> {
    let calls = [
        B::conv2d(&o.image, &o.filters, CONV),
        // Stride and dilation apart, so that one taken for the other shows.
        B::conv2d(&o.image, &o.filters, Conv2dOptions { stride: [1, 1], padding: [2, 2], ..CONV }),
        B::conv2d(&o.image, &o.filters, Conv2dOptions { groups: 2, padding: [0, 1], ..Default::default() }),
        // One group: 4 input channels against filters of 2.
        B::conv2d(&o.image, &o.filters, Conv2dOptions::default()),
        B::conv2d(&o.image, &o.filters, Conv2dOptions { groups: 3, ..CONV }),
    ];
    let mixing =
        o.other.map(|other| B::cast(&o.filters, other).and_then(|filters| B::conv2d(&o.image, &filters, CONV)));
    calls.into_iter().chain(mixing).collect()
}

pub fn conv1d<B: Backend>(o: &Operands<B>) -> Floats<B> {
    vec![
        B::conv1d(&o.signal, &o.filters1d, CONV1D),
        B::conv1d(&o.signal, &o.filters1d, Conv1dOptions { groups: 2, ..Default::default() }),
        B::conv1d(&o.image, &o.filters1d, CONV1D),
    ]
}

pub fn conv_transpose2d<B: Backend>(o: &Operands<B>) -> Floats<B> {
    let options = Conv2dOptions { output_padding: [1, 0], ..CONV };
    vec![
        B::conv_transpose2d(&o.small_image, &o.transposed_filters, options),
        B::conv_transpose2d(&o.small_image, &o.transposed_filters, Conv2dOptions { groups: 2, ..Default::default() }),
        // An output padding of the stride.
        B::conv_transpose2d(&o.small_image, &o.transposed_filters, Conv2dOptions { output_padding: [2, 0], ..CONV }),
        B::conv_transpose2d(&o.small_image, &o.transposed_filters, Conv2dOptions { groups: 3, ..CONV }),
    ]
}

pub fn conv2d_weight_gradient<B: Backend>(o: &Operands<B>) -> Floats<B> {
    // Gradients of the outputs' shapes, from operands of as many elements (not computed by `conv2d`, whose rounding
    // in a narrow dtype would enter the checked values).
    let gradient = |operand: &B::FloatTensor, dims: [usize; 4]| B::reshape(operand, Shape::new(dims));
    let weight_gradient = |operand: &B::FloatTensor, dims: [usize; 4], kernel: [usize; 2], options: Conv2dOptions| {
        gradient(operand, dims).and_then(|gradient| B::conv2d_weight_gradient(&o.image, &gradient, kernel, options))
    };
    let depthwise = Conv2dOptions { stride: [1, 2], groups: 4, ..Default::default() };
    let calls = [
        weight_gradient(&o.filters, [2, 6, 3, 2], [2, 3], CONV),
        weight_gradient(&o.signal, [2, 6, 3, 2], [2, 3], Conv2dOptions { groups: 1, ..CONV }),
        weight_gradient(&o.transposed_filters, [2, 4, 3, 3], [3, 2], depthwise),
        // A 3x3 kernel's output is 2x2, not the gradient's 3x2.
        weight_gradient(&o.filters, [2, 6, 3, 2], [3, 3], CONV),
    ];
    let mixing = o.other.map(|other| {
        let gradient = gradient(&o.filters, [2, 6, 3, 2]).and_then(|gradient| B::cast(&gradient, other));
        gradient.and_then(|gradient| B::conv2d_weight_gradient(&o.image, &gradient, [2, 3], CONV))
    });
    calls.into_iter().chain(mixing).collect()
}

pub fn max_pool2d<B: Backend>(o: &Operands<B>) -> Floats<B> {
    vec![
        B::max_pool2d(&o.image, WINDOW),
        B::max_pool2d(&o.image, padded_3x3()),
        B::max_pool2d(&o.image, Window2d::new([6, 1])),
    ]
}

pub fn max_pool2d_indices<B: Backend>(o: &Operands<B>) -> Ints<B> {
    vec![
        B::max_pool2d_indices(&o.image, WINDOW),
        B::max_pool2d_indices(&o.image, padded_3x3()),
        B::max_pool2d_indices(&o.image, Window2d::new([6, 1])),
    ]
}

pub fn avg_pool2d<B: Backend>(o: &Operands<B>) -> Floats<B> {
    vec![
        B::avg_pool2d(&o.image, WINDOW),
        B::avg_pool2d(&o.image, padded_3x3()),
        B::avg_pool2d(&o.image, Window2d::new([6, 1])),
    ]
}

pub fn adaptive_avg_pool2d<B: Backend>(o: &Operands<B>) -> Floats<B> {
    vec![
        B::adaptive_avg_pool2d(&o.image, [3, 4]),
        B::adaptive_avg_pool2d(&o.image, [2, 5]),
        B::adaptive_avg_pool2d(&o.image, [0, 2]),
        B::adaptive_avg_pool2d(&o.cube, [2, 2]),
    ]
}
