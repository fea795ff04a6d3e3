//! Convolution and pooling under `Autodiff`: each forward is the base backend's own kernel (candle's convolution,
//! ndarray's loops), and each backward is written in the base backend's ops too, never on the host. `unfold2d` and
//! `fold2d` are each other's adjoint; a convolution's input gradient is the transposed convolution of its output's
//! gradient (and the other way round), its weight gradient the input's windows times the gradient at their
//! positions; `max_pool2d`'s gradient goes where the indices its forward found point.

use crate::backend::window::{dims4, product};
use crate::backend::{Conv2dOptions, Window2d};
use crate::backends::BaseBackend;
use crate::backends::autodiff::tensor::{AutodiffTensor, gradient_if};
use crate::error::{Error, Result};
use crate::shape::Shape;

/// d unfold2d: the gradient's columns folded back onto the input (padding taps, which read no input, drop out).
pub fn unfold2d<B: BaseBackend>(
    input: &AutodiffTensor<B>,
    window: Window2d,
    pad_value: f64,
) -> Result<AutodiffTensor<B>> {
    let output = B::unfold2d(input.primitive(), window, pad_value)?;
    let [_, _, height, width] = dims4("unfold2d", "an input", &B::shape(input.primitive()))?;
    Ok(AutodiffTensor::unary("unfold2d", input, output, |_| {
        move |gradient| B::fold2d(&gradient, height, width, window)
    }))
}

/// d fold2d: the gradient unfolded again (zeros for the padding, which received nothing).
pub fn fold2d<B: BaseBackend>(
    input: &AutodiffTensor<B>,
    height: usize,
    width: usize,
    window: Window2d,
) -> Result<AutodiffTensor<B>> {
    let output = B::fold2d(input.primitive(), height, width, window)?;
    Ok(AutodiffTensor::unary("fold2d", input, output, |_| move |gradient| B::unfold2d(&gradient, window, 0.0)))
}

/// The base backend's `max_pool2d`. When the input records a graph, the forward finds each window's first maximum
/// once (`max_pool2d_indices`) and gathers the output from there, and the backward adds each window's gradient at
/// that index, so overlapping windows that pick one input add up there and ties do not share. A window of padding
/// alone has no maximum to send its gradient to: its output is `-inf`, and a backward through it is that error.
pub fn max_pool2d<B: BaseBackend>(input: &AutodiffTensor<B>, window: Window2d) -> Result<AutodiffTensor<B>> {
    let op = "max_pool2d";
    if !input.is_tracked() {
        return Ok(AutodiffTensor::detached(B::max_pool2d(input.primitive(), window)?));
    }
    let shape = B::shape(input.primitive());
    let [n, c, h, w] = dims4(op, "an input", &shape)?;
    let indices = match B::max_pool2d_indices(input.primitive(), window) {
        Ok(indices) => indices,
        Err(_) => {
            // A window of padding alone: the output is `-inf` there, and the backward is the error the indices
            // gave, found again (an `Error` is not `Clone`) when a gradient asks for it.
            let output = B::max_pool2d(input.primitive(), window)?;
            return Ok(AutodiffTensor::unary(op, input, output, |_| {
                let input = input.primitive().clone();
                move |_| B::max_pool2d_indices(&input, window).and_then(|_| Err(no_maximum_found()))
            }));
        }
    };
    let [_, _, oh, ow] = dims4(op, "the indices", &B::int_shape(&indices))?;
    let (plane, positions) = (product(op, "a plane", &[h, w])?, product(op, "the positions", &[oh, ow])?);
    let flat_indices = B::int_reshape(&indices, Shape::new([n, c, positions]))?;
    let planes = B::reshape(input.primitive(), Shape::new([n, c, plane]))?;
    let output = B::reshape(&B::gather(&planes, 2, &flat_indices)?, Shape::new([n, c, oh, ow]))?;
    Ok(AutodiffTensor::unary(op, input, output, |_| {
        let device = B::device(input.primitive());
        move |gradient| {
            let gradient = B::reshape(&gradient, Shape::new([n, c, positions]))?;
            let zeros = B::full(Shape::new([n, c, plane]), 0.0, B::dtype(&gradient), &device)?;
            B::reshape(&B::scatter_add(&zeros, 2, &flat_indices, &gradient)?, shape.clone())
        }
    }))
}

/// The base backend's `avg_pool2d`; d input: each window's gradient, divided among its `kh * kw` taps (padding
/// counted, as the forward counts it), folded back onto the taps that read the input.
pub fn avg_pool2d<B: BaseBackend>(input: &AutodiffTensor<B>, window: Window2d) -> Result<AutodiffTensor<B>> {
    let output = B::avg_pool2d(input.primitive(), window)?;
    Ok(AutodiffTensor::unary("avg_pool2d", input, output, |_| {
        let shape = B::shape(input.primitive());
        move |gradient| {
            let op = "avg_pool2d";
            let ([_, _, h, w], [n, c, oh, ow]) =
                (dims4(op, "an input", &shape)?, dims4(op, "a gradient", &B::shape(&gradient))?);
            let taps = product(op, "the window's taps", &window.kernel)?;
            let positions = product(op, "the positions", &[oh, ow])?;
            let per_tap = B::mul_scalar(&B::reshape(&gradient, Shape::new([n, c, 1, positions]))?, 1.0 / taps as f64)?;
            let columns = B::expand(&per_tap, Shape::new([n, c, taps, positions]))?;
            let rows = product(op, "the unfolded rows", &[c, taps])?;
            B::fold2d(&B::reshape(&columns, Shape::new([n, rows, positions]))?, h, w, window)
        }
    }))
}

/// The base backend's `conv2d` (`[n, c, h, w]` by `[o, c / groups, kh, kw]`). d input: the transposed
/// convolution of the gradient by the same weight, with the output padding that gives back `h x w`; d weight: the
/// base backend's `conv2d_weight_gradient`.
pub fn conv2d<B: BaseBackend>(
    input: &AutodiffTensor<B>,
    weight: &AutodiffTensor<B>,
    options: Conv2dOptions,
) -> Result<AutodiffTensor<B>> {
    let output = B::conv2d(input.primitive(), weight.primitive(), options)?;
    Ok(AutodiffTensor::binary("conv2d", [input, weight], output, |[input_tracked, weight_tracked], _| {
        let (x, w) = (input.primitive().clone(), weight.primitive().clone());
        move |gradient| {
            if let Some(zeros) = empty_gradients::<B>(&x, &w, &gradient, [input_tracked, weight_tracked])? {
                return Ok(zeros);
            }
            let input_gradient = gradient_if(input_tracked, || conv2d_input_gradient::<B>(&x, &w, &gradient, options))?;
            let weight_gradient = gradient_if(weight_tracked, || {
                let [_, _, kh, kw] = dims4("conv2d backward", "a weight", &B::shape(&w))?;
                B::conv2d_weight_gradient(&x, &gradient, [kh, kw], options)
            })?;
            Ok([input_gradient, weight_gradient])
        }
    }))
}

/// The gradient of `conv2d(x, w)` by `x`, for the output's `gradient`: the transposed convolution of the gradient by
/// the same weight, with the output padding that gives back `x`'s height and width.
fn conv2d_input_gradient<B: BaseBackend>(
    x: &B::FloatTensor,
    w: &B::FloatTensor,
    gradient: &B::FloatTensor,
    options: Conv2dOptions,
) -> Result<B::FloatTensor> {
    let op = "conv2d backward";
    let ([_, _, h, wi], [_, _, kh, kw]) = (dims4(op, "an input", &B::shape(x))?, dims4(op, "a weight", &B::shape(w))?);
    let [_, _, oh, ow] = dims4(op, "a gradient", &B::shape(gradient))?;
    // The rows and columns the transposed convolution leaves off: the forward's output size rounded them down, so
    // they are below the stride. `(out - 1) * stride + reach` is at most the padded input, which the forward's
    // geometry checked fits in `usize`.
    let left_off = |side: usize, size: usize, out: usize, kernel: usize| {
        let reach = options.dilation[side] * (kernel - 1) + 1;
        (size + 2 * options.padding[side]) - ((out - 1) * options.stride[side] + reach)
    };
    let output_padding = [left_off(0, h, oh, kh), left_off(1, wi, ow, kw)];
    B::conv_transpose2d(gradient, w, Conv2dOptions { output_padding, ..options })
}

/// `conv2d_weight_gradient` is bilinear in the input `x` and the output's gradient `g`: against an upstream
/// gradient `u` of the weight's shape, `Σ u ⊙ dW = Σ g ⊙ conv2d(x, u)`. So d g is `conv2d(x, u)`, and d x is
/// `conv2d`'s input gradient for `g` by the weight `u`.
pub fn conv2d_weight_gradient<B: BaseBackend>(
    input: &AutodiffTensor<B>,
    gradient: &AutodiffTensor<B>,
    kernel: [usize; 2],
    options: Conv2dOptions,
) -> Result<AutodiffTensor<B>> {
    let output = B::conv2d_weight_gradient(input.primitive(), gradient.primitive(), kernel, options)?;
    let operands = [input, gradient];
    Ok(AutodiffTensor::binary("conv2d_weight_gradient", operands, output, |[input_tracked, gradient_tracked], _| {
        let (x, g) = (input.primitive().clone(), gradient.primitive().clone());
        move |upstream| {
            if let Some(zeros) = empty_gradients::<B>(&x, &g, &upstream, [input_tracked, gradient_tracked])? {
                return Ok(zeros);
            }
            let input_gradient = gradient_if(input_tracked, || conv2d_input_gradient::<B>(&x, &upstream, &g, options))?;
            let gradient_gradient = gradient_if(gradient_tracked, || B::conv2d(&x, &upstream, options))?;
            Ok([input_gradient, gradient_gradient])
        }
    }))
}

/// The base backend's `conv_transpose2d` (`[n, c, h, w]` by `[c, o / groups, kh, kw]`), the adjoint of `conv2d` by
/// its input. d input: the `conv2d` of the gradient by the same weight; d weight: `conv2d_weight_gradient` of the
/// convolution of the gradient's planes to the input's, whose adjoint this op is.
pub fn conv_transpose2d<B: BaseBackend>(
    input: &AutodiffTensor<B>,
    weight: &AutodiffTensor<B>,
    options: Conv2dOptions,
) -> Result<AutodiffTensor<B>> {
    let output = B::conv_transpose2d(input.primitive(), weight.primitive(), options)?;
    Ok(AutodiffTensor::binary("conv_transpose2d", [input, weight], output, |[input_tracked, weight_tracked], _| {
        let (x, w) = (input.primitive().clone(), weight.primitive().clone());
        move |gradient| {
            if let Some(zeros) = empty_gradients::<B>(&x, &w, &gradient, [input_tracked, weight_tracked])? {
                return Ok(zeros);
            }
            let plain = Conv2dOptions { output_padding: [0, 0], ..options };
            let input_gradient = gradient_if(input_tracked, || B::conv2d(&gradient, &w, plain))?;
            // The weight of the convolution of the gradient's planes to the input's, whose adjoint this is.
            let weight_gradient = gradient_if(weight_tracked, || {
                let [_, _, kh, kw] = dims4("conv_transpose2d backward", "a weight", &B::shape(&w))?;
                B::conv2d_weight_gradient(&gradient, &x, [kh, kw], plain)
            })?;
            Ok([input_gradient, weight_gradient])
        }
    }))
}

/// A convolution where the input, the weight or the output holds no element: every product is empty, so each
/// tracked operand's gradient is zeros of its shape (the kernels' size rules refuse some of these shapes, and there
/// is nothing to compute). `None` otherwise.
#[allow(clippy::type_complexity)]
fn empty_gradients<B: BaseBackend>(
    input: &B::FloatTensor,
    weight: &B::FloatTensor,
    gradient: &B::FloatTensor,
    tracked: [bool; 2],
) -> Result<Option<[Option<B::FloatTensor>; 2]>> {
    let empty = [input, weight, gradient].iter().any(|tensor| B::shape(tensor).num_elements() == 0);
    if !empty {
        return Ok(None);
    }
    let zeros = |tensor: &B::FloatTensor| B::full(B::shape(tensor), 0.0, B::dtype(gradient), &B::device(gradient));
    Ok(Some([gradient_if(tracked[0], || zeros(input))?, gradient_if(tracked[1], || zeros(weight))?]))
}

/// The error of a backward through a window of padding alone whose indices were refused in the forward and, against
/// every expectation, not when found again: the two calls see the same input.
fn no_maximum_found() -> Error {
    // A broken invariant of the backend, not the caller's input: no structured variant describes it.
    Error::invalid("max_pool2d backward", "a window of padding alone has no maximum to send its gradient to")
}
