//! The two primitives every convolution and pooling op is composed from, `unfold2d` and `fold2d`, each the
//! other's adjoint, so each one's backward is the other; and `max_pool2d`, whose gradient goes where its indices
//! point.

use crate::backend::window::{dims4, product};
use crate::backend::{BaseBackend, Window2d};
use crate::backends::autodiff::tensor::AutodiffTensor;
use crate::error::Result;
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

/// d max_pool2d: each window's gradient added at its first maximum (`max_pool2d_indices`), so overlapping windows
/// that pick one input add up there and ties do not share.
pub fn max_pool2d<B: BaseBackend>(input: &AutodiffTensor<B>, window: Window2d) -> Result<AutodiffTensor<B>> {
    let output = B::max_pool2d(input.primitive(), window)?;
    Ok(AutodiffTensor::unary("max_pool2d", input, output, |_| {
        let input = input.primitive().clone();
        move |gradient| {
            let (op, shape) = ("max_pool2d", B::shape(&input));
            let ([n, c, h, w], [_, _, oh, ow]) =
                (dims4(op, "an input", &shape)?, dims4(op, "a gradient", &B::shape(&gradient))?);
            let (plane, positions) = (product(op, "a plane", &[h, w])?, product(op, "the positions", &[oh, ow])?);
            let indices = B::int_reshape(&B::max_pool2d_indices(&input, window)?, Shape::new([n, c, positions]))?;
            let gradient = B::reshape(&gradient, Shape::new([n, c, positions]))?;
            let zeros = B::full(Shape::new([n, c, plane]), 0.0, B::dtype(&gradient), &B::device(&gradient))?;
            B::reshape(&B::scatter_add(&zeros, 2, &indices, &gradient)?, shape)
        }
    }))
}
