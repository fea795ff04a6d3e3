//! Element-wise functions of one tensor. Where the derivative is a function of the output (exp, sigmoid, tanh), the
//! output is kept rather than the input, so no value is computed twice.

use crate::backend::BaseBackend;
use crate::backends::autodiff::ops::mask::ones_where;
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

/// d sqrt(x) = 1 / (2 sqrt(x)): from the output.
pub(crate) fn sqrt<B: BaseBackend>(input: &AutodiffTensor<B>) -> Result<AutodiffTensor<B>> {
    let output = B::sqrt(input.primitive())?;
    Ok(AutodiffTensor::unary("sqrt", input, output, |output| {
        let output = output.clone();
        move |gradient| B::div(&B::mul_scalar(&gradient, 0.5)?, &output)
    }))
}

/// d (1/x) = -1/x² = -(1/x)²: from the output.
pub(crate) fn recip<B: BaseBackend>(input: &AutodiffTensor<B>) -> Result<AutodiffTensor<B>> {
    let output = B::recip(input.primitive())?;
    Ok(AutodiffTensor::unary("recip", input, output, |output| {
        let output = output.clone();
        move |gradient| B::neg(&B::mul(&B::mul(&gradient, &output)?, &output)?)
    }))
}

/// d |x| = sign(x), with 0 at 0.
pub(crate) fn abs<B: BaseBackend>(input: &AutodiffTensor<B>) -> Result<AutodiffTensor<B>> {
    let output = B::abs(input.primitive())?;
    Ok(AutodiffTensor::unary("abs", input, output, |_| {
        let input = input.primitive().clone();
        move |gradient| {
            let positive = ones_where::<B>(&B::gt_scalar(&input, 0.0)?, &gradient)?;
            let negative = ones_where::<B>(&B::lt_scalar(&input, 0.0)?, &gradient)?;
            B::mul(&gradient, &B::sub(&positive, &negative)?)
        }
    }))
}

/// d sin(x) = cos(x).
pub(crate) fn sin<B: BaseBackend>(input: &AutodiffTensor<B>) -> Result<AutodiffTensor<B>> {
    let output = B::sin(input.primitive())?;
    Ok(AutodiffTensor::unary("sin", input, output, |_| {
        let input = input.primitive().clone();
        move |gradient| B::mul(&gradient, &B::cos(&input)?)
    }))
}

/// d cos(x) = -sin(x).
pub(crate) fn cos<B: BaseBackend>(input: &AutodiffTensor<B>) -> Result<AutodiffTensor<B>> {
    let output = B::cos(input.primitive())?;
    Ok(AutodiffTensor::unary("cos", input, output, |_| {
        let input = input.primitive().clone();
        move |gradient| B::neg(&B::mul(&gradient, &B::sin(&input)?)?)
    }))
}

/// `exp(-x²)`, the shape of the normal density that the derivatives of `erf` and `gelu` share, scaled by `scale`.
fn gaussian<B: BaseBackend>(x: &B::FloatTensor, squared_scale: f64, scale: f64) -> Result<B::FloatTensor> {
    B::mul_scalar(&B::exp(&B::mul_scalar(&B::mul(x, x)?, -squared_scale)?)?, scale)
}

/// d erf(x) = 2/√π · exp(-x²).
pub(crate) fn erf<B: BaseBackend>(input: &AutodiffTensor<B>) -> Result<AutodiffTensor<B>> {
    let output = B::erf(input.primitive())?;
    Ok(AutodiffTensor::unary("erf", input, output, |_| {
        let input = input.primitive().clone();
        move |gradient| B::mul(&gradient, &gaussian::<B>(&input, 1.0, std::f64::consts::FRAC_2_SQRT_PI)?)
    }))
}

/// d (x Φ(x)) = Φ(x) + x φ(x), with Φ the standard normal CDF and φ its density.
pub(crate) fn gelu<B: BaseBackend>(input: &AutodiffTensor<B>) -> Result<AutodiffTensor<B>> {
    let output = B::gelu(input.primitive())?;
    Ok(AutodiffTensor::unary("gelu", input, output, |_| {
        let input = input.primitive().clone();
        move |gradient| {
            let erf = B::erf(&B::mul_scalar(&input, std::f64::consts::FRAC_1_SQRT_2)?)?;
            let cdf = B::mul_scalar(&B::add_scalar(&erf, 1.0)?, 0.5)?;
            // 1/√(2π) = FRAC_1_SQRT_2 · FRAC_2_SQRT_PI / 2
            let density_scale = std::f64::consts::FRAC_1_SQRT_2 * std::f64::consts::FRAC_2_SQRT_PI * 0.5;
            let density = gaussian::<B>(&input, 0.5, density_scale)?;
            B::mul(&gradient, &B::add(&cdf, &B::mul(&input, &density)?)?)
        }
    }))
}

/// d (x σ(x)) = σ(x) (1 + x (1 - σ(x))).
pub(crate) fn silu<B: BaseBackend>(input: &AutodiffTensor<B>) -> Result<AutodiffTensor<B>> {
    let output = B::silu(input.primitive())?;
    Ok(AutodiffTensor::unary("silu", input, output, |_| {
        let input = input.primitive().clone();
        move |gradient| {
            let sigmoid = B::sigmoid(&input)?;
            let one_minus = B::add_scalar(&B::neg(&sigmoid)?, 1.0)?;
            let derivative = B::mul(&sigmoid, &B::add_scalar(&B::mul(&input, &one_minus)?, 1.0)?)?;
            B::mul(&gradient, &derivative)
        }
    }))
}

/// d clamp(x) = 1 where `min <= x <= max`, else 0.
pub(crate) fn clamp<B: BaseBackend>(input: &AutodiffTensor<B>, min: f64, max: f64) -> Result<AutodiffTensor<B>> {
    let output = B::clamp(input.primitive(), min, max)?;
    Ok(AutodiffTensor::unary("clamp", input, output, |_| {
        let input = input.primitive().clone();
        move |gradient| {
            let inside = B::bool_and(&B::ge_scalar(&input, min)?, &B::le_scalar(&input, max)?)?;
            B::mul(&gradient, &ones_where::<B>(&inside, &gradient)?)
        }
    }))
}
