//! Ops that move elements without changing them: their backward moves the gradient back.

use crate::backends::BaseBackend;
use crate::backends::autodiff::graph::Inner;
use crate::backends::autodiff::tensor::{AutodiffTensor, gradient_if};
use crate::error::Result;
use crate::shape::Shape;

/// A swap is its own inverse.
pub fn swap_dims<B: BaseBackend>(input: &AutodiffTensor<B>, dim0: usize, dim1: usize) -> Result<AutodiffTensor<B>> {
    let output = B::swap_dims(input.primitive(), dim0, dim1)?;
    Ok(AutodiffTensor::unary("swap_dims", input, output, |_| move |gradient| B::swap_dims(&gradient, dim0, dim1)))
}

/// The gradient reshaped back to the input's shape.
pub fn reshape<B: BaseBackend>(input: &AutodiffTensor<B>, shape: Shape) -> Result<AutodiffTensor<B>> {
    let output = B::reshape(input.primitive(), shape)?;
    Ok(AutodiffTensor::unary("reshape", input, output, |_| {
        let input_shape = B::shape(input.primitive());
        move |gradient| B::reshape(&gradient, input_shape.clone())
    }))
}

/// The gradient of a slice is the output's gradient at its place along `axis` and zero elsewhere.
pub fn narrow<B: BaseBackend>(
    input: &AutodiffTensor<B>,
    axis: usize,
    start: usize,
    len: usize,
) -> Result<AutodiffTensor<B>> {
    let output = B::narrow(input.primitive(), axis, start, len)?;
    Ok(AutodiffTensor::unary("narrow", input, output, |_| {
        let input_shape = B::shape(input.primitive());
        move |gradient| pad_with_zeros::<B>(gradient, &input_shape, axis, start, len)
    }))
}

/// `gradient` placed at `start..start + len` along `axis` of a zero tensor of `shape`.
fn pad_with_zeros<B: BaseBackend>(
    gradient: Inner<B>,
    shape: &Shape,
    axis: usize,
    start: usize,
    len: usize,
) -> Result<Inner<B>> {
    // The forward `narrow` succeeded, so this holds; checked anyway, as no path here may panic.
    shape.check_narrow(axis, start, len)?;
    let after = shape.dims()[axis] - start - len;
    if start == 0 && after == 0 {
        return Ok(gradient);
    }
    let device = B::device(&gradient);
    let dtype = B::dtype(&gradient);
    let zeros = |size: usize| B::full(shape.with_dim("backward of narrow", axis, size)?, 0.0, dtype, &device);
    let mut parts = Vec::with_capacity(3);
    if start > 0 {
        parts.push(zeros(start)?);
    }
    parts.push(gradient);
    if after > 0 {
        parts.push(zeros(after)?);
    }
    B::cat(&parts, axis)
}

/// Each input's gradient is its own stretch of the output's gradient along `axis`.
pub fn cat<B: BaseBackend>(inputs: &[AutodiffTensor<B>], axis: usize) -> Result<AutodiffTensor<B>> {
    let primitives: Vec<Inner<B>> = inputs.iter().map(|input| input.primitive().clone()).collect();
    let output = B::cat(&primitives, axis)?;
    Ok(AutodiffTensor::many("cat", inputs, output, |tracked| {
        // The forward `cat` succeeded, so `axis` exists in every input (a missing one would only shorten a slice).
        let lengths: Vec<usize> =
            primitives.iter().map(|input| B::shape(input).dims().get(axis).copied().unwrap_or(0)).collect();
        move |gradient| {
            let mut start = 0;
            let mut gradients = Vec::with_capacity(lengths.len());
            for (&len, &tracked) in lengths.iter().zip(&tracked) {
                gradients.push(gradient_if(tracked, || B::narrow(&gradient, axis, start, len))?);
                start += len;
            }
            Ok(gradients)
        }
    }))
}

/// The gradient goes back through the inverse permutation.
pub fn permute<B: BaseBackend>(input: &AutodiffTensor<B>, axes: Vec<usize>) -> Result<AutodiffTensor<B>> {
    let output = B::permute(input.primitive(), axes.clone())?;
    Ok(AutodiffTensor::unary("permute", input, output, |_| {
        let mut inverse = vec![0; axes.len()];
        for (position, &axis) in axes.iter().enumerate() {
            inverse[axis] = position;
        }
        move |gradient| B::permute(&gradient, inverse.clone())
    }))
}

/// The gradient is flipped back.
pub fn flip<B: BaseBackend>(input: &AutodiffTensor<B>, axes: Vec<usize>) -> Result<AutodiffTensor<B>> {
    let output = B::flip(input.primitive(), axes.clone())?;
    Ok(AutodiffTensor::unary("flip", input, output, |_| move |gradient| B::flip(&gradient, axes.clone())))
}
