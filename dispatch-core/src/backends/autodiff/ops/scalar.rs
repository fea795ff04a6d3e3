//! Element-wise ops of a tensor and a constant.

use crate::backend::BaseBackend;
use crate::backends::autodiff::tensor::AutodiffTensor;
use crate::error::Result;

/// d(x + c) = 1: the gradient passes through untouched.
pub(crate) fn add_scalar<B: BaseBackend>(input: &AutodiffTensor<B>, scalar: f64) -> Result<AutodiffTensor<B>> {
    let output = B::add_scalar(input.primitive(), scalar)?;
    Ok(AutodiffTensor::unary("add_scalar", input, output, |_| Ok))
}

pub(crate) fn mul_scalar<B: BaseBackend>(input: &AutodiffTensor<B>, scalar: f64) -> Result<AutodiffTensor<B>> {
    let output = B::mul_scalar(input.primitive(), scalar)?;
    Ok(AutodiffTensor::unary("mul_scalar", input, output, |_| move |gradient| B::mul_scalar(&gradient, scalar)))
}

/// d x^p = p x^(p-1). The exponents 0 and 1 are taken apart: `x^-1` at `x = 0` would turn the exact zero
/// gradient of `x^0` into NaN, and `x^1` needs no work at all.
pub(crate) fn powf_scalar<B: BaseBackend>(input: &AutodiffTensor<B>, exponent: f64) -> Result<AutodiffTensor<B>> {
    let output = B::powf_scalar(input.primitive(), exponent)?;
    Ok(AutodiffTensor::unary("powf_scalar", input, output, |_| {
        let input = input.primitive().clone();
        move |gradient| {
            if exponent == 0.0 {
                B::full(B::shape(&gradient), 0.0, B::dtype(&gradient), &B::device(&gradient))
            } else if exponent == 1.0 {
                Ok(gradient)
            } else {
                let slope = B::mul_scalar(&B::powf_scalar(&input, exponent - 1.0)?, exponent)?;
                B::mul(&gradient, &slope)
            }
        }
    }))
}
