//! Element-wise functions of one tensor. Where the derivative is a function of the output (exp, sigmoid, tanh), the
//! output is kept rather than the input, so no value is computed twice.

use crate::backend::BaseBackend;
use crate::backends::autodiff::tensor::AutodiffTensor;
use crate::error::Result;

pub(crate) fn neg<B: BaseBackend>(input: &AutodiffTensor<B>) -> Result<AutodiffTensor<B>> {
    let output = B::neg(input.primitive())?;
    Ok(AutodiffTensor::unary("neg", input, output, |_| |gradient| B::neg(&gradient)))
}

/// d exp(x) = exp(x).
pub(crate) fn exp<B: BaseBackend>(input: &AutodiffTensor<B>) -> Result<AutodiffTensor<B>> {
    let output = B::exp(input.primitive())?;
    Ok(AutodiffTensor::unary("exp", input, output, |output| {
        let output = output.clone();
        move |gradient| B::mul(&gradient, &output)
    }))
}

/// d log(x) = 1/x.
pub(crate) fn log<B: BaseBackend>(input: &AutodiffTensor<B>) -> Result<AutodiffTensor<B>> {
    let output = B::log(input.primitive())?;
    Ok(AutodiffTensor::unary("log", input, output, |_| {
        let input = input.primitive().clone();
        move |gradient| B::div(&gradient, &input)
    }))
}

/// d relu(x) = 1 where x > 0, else 0 (the subgradient 0 at the kink, as candle and PyTorch pick). `x > 0` exactly
/// where `relu(x) > 0`, so the output serves as the mask's source.
pub(crate) fn relu<B: BaseBackend>(input: &AutodiffTensor<B>) -> Result<AutodiffTensor<B>> {
    let output = B::relu(input.primitive())?;
    Ok(AutodiffTensor::unary("relu", input, output, |output| {
        let output = output.clone();
        move |gradient| B::mul(&gradient, &B::greater_scalar(&output, 0.0)?)
    }))
}

/// d sigmoid(x) = s (1 - s), with s the output.
pub(crate) fn sigmoid<B: BaseBackend>(input: &AutodiffTensor<B>) -> Result<AutodiffTensor<B>> {
    let output = B::sigmoid(input.primitive())?;
    Ok(AutodiffTensor::unary("sigmoid", input, output, |output| {
        let output = output.clone();
        move |gradient| {
            let one_minus = B::add_scalar(&B::neg(&output)?, 1.0)?;
            B::mul(&gradient, &B::mul(&output, &one_minus)?)
        }
    }))
}

/// d tanh(x) = 1 - t², with t the output.
pub(crate) fn tanh<B: BaseBackend>(input: &AutodiffTensor<B>) -> Result<AutodiffTensor<B>> {
    let output = B::tanh(input.primitive())?;
    Ok(AutodiffTensor::unary("tanh", input, output, |output| {
        let output = output.clone();
        move |gradient| {
            let one_minus_square = B::add_scalar(&B::neg(&B::mul(&output, &output)?)?, 1.0)?;
            B::mul(&gradient, &one_minus_square)
        }
    }))
}
