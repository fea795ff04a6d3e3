//! Element-wise ops: arithmetic between tensors (broadcasting), with scalars, the functions of one tensor, and the
//! bounds (`clamp`, `maximum`, `minimum`).

use super::comparison::{ones_where, selected};
use crate::backends::BaseBackend;
use crate::backends::autodiff::broadcast::reduce_to_shape;
use crate::backends::autodiff::graph::{Inner, Node};
use crate::backends::autodiff::tensor::{AutodiffTensor, gradient_if};
use crate::error::Result;
use std::sync::Arc;

/// Each arithmetic op's rule twice: for the op that borrows its left operand and for the one given it (`add_into`),
/// each calling the base backend's op of its form; the rule itself is written once (`sum`, `difference`, `product`,
/// `quotient`). The borrowing form gives the rule a clone of the operand, which its caller still holds.
macro_rules! arithmetic_rules {
    ($($op:ident, $given:ident: $rule:ident($($arg:expr),*);)*) => {$(
        #[doc = concat!("`", stringify!($op), "`: see `", stringify!($rule), "`.")]
        pub fn $op<B: BaseBackend>(lhs: &AutodiffTensor<B>, rhs: &AutodiffTensor<B>) -> Result<AutodiffTensor<B>> {
            $rule(stringify!($op), lhs.clone(), rhs, |lhs, rhs| B::$op(&lhs, rhs) $(, $arg)*)
        }

        #[doc = concat!("`", stringify!($op), "`'s rule, the base backend's `", stringify!($given), "` given `lhs`.")]
        pub fn $given<B: BaseBackend>(lhs: AutodiffTensor<B>, rhs: &AutodiffTensor<B>) -> Result<AutodiffTensor<B>> {
            $rule(stringify!($given), lhs, rhs, B::$given $(, $arg)*)
        }
    )*};
}

arithmetic_rules! {
    add, add_into: sum(Sign::Plus);
    sub, sub_into: sum(Sign::Minus);
    mul, mul_into: product();
    div, div_into: quotient();
}

/// The graph nodes of a binary op's two inputs.
type InputNodes<B> = [Option<Arc<Node<B>>>; 2];

/// The base backend's binary op `op` on `lhs`'s tensor, given, and `rhs`'s; the inputs' graph nodes.
fn given_up<B: BaseBackend>(
    lhs: AutodiffTensor<B>,
    rhs: &AutodiffTensor<B>,
    op: impl FnOnce(Inner<B>, &Inner<B>) -> Result<Inner<B>>,
) -> Result<(Inner<B>, InputNodes<B>)> {
    let (primitive, lhs_node) = lhs.into_parts();
    let output = op(primitive, rhs.primitive())?;
    Ok((output, [lhs_node, rhs.node().cloned()]))
}

/// d(a ± b) = 1 and ±1 (`Sign`), summed back over the dimensions each was broadcast along.
fn sum<B: BaseBackend>(
    name: &'static str,
    lhs: AutodiffTensor<B>,
    rhs: &AutodiffTensor<B>,
    op: impl FnOnce(Inner<B>, &Inner<B>) -> Result<Inner<B>>,
    rhs_sign: Sign,
) -> Result<AutodiffTensor<B>> {
    let (lhs_shape, rhs_shape) = (B::shape(lhs.primitive()), B::shape(rhs.primitive()));
    let (output, nodes) = given_up(lhs, rhs, op)?;
    Ok(AutodiffTensor::binary_of(name, nodes, output, |[lhs_tracked, rhs_tracked], _| {
        move |gradient| {
            let lhs_gradient = gradient_if(lhs_tracked, || reduce_to_shape::<B>(gradient.clone(), &lhs_shape))?;
            let rhs_gradient = gradient_if(rhs_tracked, || {
                let gradient = match rhs_sign {
                    Sign::Plus => gradient,
                    Sign::Minus => B::neg(&gradient)?,
                };
                reduce_to_shape::<B>(gradient, &rhs_shape)
            })?;
            Ok([lhs_gradient, rhs_gradient])
        }
    }))
}

/// The sign of the right operand in a `sum`.
#[derive(Clone, Copy)]
enum Sign {
    Plus,
    Minus,
}

/// d(l*r)/dl = r and d(l*r)/dr = l: each operand is kept only when the *other* one needs a gradient (a kept left
/// operand given to the op is then shared, and the backend writes new memory).
fn product<B: BaseBackend>(
    name: &'static str,
    lhs: AutodiffTensor<B>,
    rhs: &AutodiffTensor<B>,
    op: impl FnOnce(Inner<B>, &Inner<B>) -> Result<Inner<B>>,
) -> Result<AutodiffTensor<B>> {
    let (lhs_shape, rhs_shape) = (B::shape(lhs.primitive()), B::shape(rhs.primitive()));
    let rhs_value = lhs.is_tracked().then(|| rhs.primitive().clone());
    let lhs_value = rhs.is_tracked().then(|| lhs.primitive().clone());
    let (output, nodes) = given_up(lhs, rhs, op)?;
    Ok(AutodiffTensor::binary_of(name, nodes, output, |_, _| {
        move |gradient| {
            // The gradient's last use takes it by value, so its memory can take the product.
            let (lhs_gradient, rhs_gradient) = match (&rhs_value, &lhs_value) {
                (Some(rhs), Some(lhs)) => (Some(B::mul(&gradient, rhs)?), Some(B::mul_into(gradient, lhs)?)),
                (Some(rhs), None) => (Some(B::mul_into(gradient, rhs)?), None),
                (None, Some(lhs)) => (None, Some(B::mul_into(gradient, lhs)?)),
                (None, None) => (None, None),
            };
            Ok([
                lhs_gradient.map(|gradient| reduce_to_shape::<B>(gradient, &lhs_shape)).transpose()?,
                rhs_gradient.map(|gradient| reduce_to_shape::<B>(gradient, &rhs_shape)).transpose()?,
            ])
        }
    }))
}

/// d(l/r)/dl = 1/r and d(l/r)/dr = -l/r² = -(l/r)/r: both share `gradient / r`, and the right one reuses the
/// output instead of squaring `r`.
fn quotient<B: BaseBackend>(
    name: &'static str,
    lhs: AutodiffTensor<B>,
    rhs: &AutodiffTensor<B>,
    op: impl FnOnce(Inner<B>, &Inner<B>) -> Result<Inner<B>>,
) -> Result<AutodiffTensor<B>> {
    let (lhs_shape, rhs_shape) = (B::shape(lhs.primitive()), B::shape(rhs.primitive()));
    let rhs_value = rhs.primitive().clone();
    let (output, nodes) = given_up(lhs, rhs, op)?;
    Ok(AutodiffTensor::binary_of(name, nodes, output, |[lhs_tracked, rhs_tracked], output| {
        let quotient = rhs_tracked.then(|| output.clone());
        move |gradient| {
            let over_rhs = B::div_into(gradient, &rhs_value)?;
            let rhs_gradient = match &quotient {
                Some(quotient) => Some(reduce_to_shape::<B>(B::neg(&B::mul(&over_rhs, quotient)?)?, &rhs_shape)?),
                None => None,
            };
            let lhs_gradient = gradient_if(lhs_tracked, || reduce_to_shape::<B>(over_rhs, &lhs_shape))?;
            Ok([lhs_gradient, rhs_gradient])
        }
    }))
}

/// The gradient goes to the larger operand, to `lhs` on ties.
pub fn maximum<B: BaseBackend>(lhs: &AutodiffTensor<B>, rhs: &AutodiffTensor<B>) -> Result<AutodiffTensor<B>> {
    let output = B::maximum(lhs.primitive(), rhs.primitive())?;
    let picked_lhs = B::ge(lhs.primitive(), rhs.primitive())?;
    Ok(selected("maximum", picked_lhs, [lhs, rhs], output))
}

/// The gradient goes to the smaller operand, to `lhs` on ties.
pub fn minimum<B: BaseBackend>(lhs: &AutodiffTensor<B>, rhs: &AutodiffTensor<B>) -> Result<AutodiffTensor<B>> {
    let output = B::minimum(lhs.primitive(), rhs.primitive())?;
    let picked_lhs = B::le(lhs.primitive(), rhs.primitive())?;
    Ok(selected("minimum", picked_lhs, [lhs, rhs], output))
}

/// d(x + c) = 1: the gradient passes through untouched.
pub fn add_scalar<B: BaseBackend>(input: &AutodiffTensor<B>, scalar: f64) -> Result<AutodiffTensor<B>> {
    let output = B::add_scalar(input.primitive(), scalar)?;
    Ok(AutodiffTensor::unary("add_scalar", input, output, |_| Ok))
}

/// `add_scalar`'s rule, the base backend's `add_scalar_into` given the input's tensor.
pub fn add_scalar_into<B: BaseBackend>(input: AutodiffTensor<B>, scalar: f64) -> Result<AutodiffTensor<B>> {
    let (primitive, node) = input.into_parts();
    let output = B::add_scalar_into(primitive, scalar)?;
    Ok(AutodiffTensor::unary_of("add_scalar_into", node, output, |_| Ok))
}

/// d(x c) = c.
pub fn mul_scalar<B: BaseBackend>(input: &AutodiffTensor<B>, scalar: f64) -> Result<AutodiffTensor<B>> {
    let output = B::mul_scalar(input.primitive(), scalar)?;
    Ok(AutodiffTensor::unary("mul_scalar", input, output, |_| scaled_by::<B>(scalar)))
}

/// `mul_scalar`'s rule, the base backend's `mul_scalar_into` given the input's tensor.
pub fn mul_scalar_into<B: BaseBackend>(input: AutodiffTensor<B>, scalar: f64) -> Result<AutodiffTensor<B>> {
    let (primitive, node) = input.into_parts();
    let output = B::mul_scalar_into(primitive, scalar)?;
    Ok(AutodiffTensor::unary_of("mul_scalar_into", node, output, |_| scaled_by::<B>(scalar)))
}

/// The backward rule of a product with `scalar`.
fn scaled_by<B: BaseBackend>(scalar: f64) -> impl Fn(Inner<B>) -> Result<Inner<B>> + Send + Sync + 'static {
    move |gradient| B::mul_scalar_into(gradient, scalar)
}

/// d x^p = p x^(p-1). The exponents 0 and 1 are taken apart: `x^-1` at `x = 0` would turn the exact zero
/// gradient of `x^0` into NaN, and `x^1` needs no work at all.
pub fn powf_scalar<B: BaseBackend>(input: &AutodiffTensor<B>, exponent: f64) -> Result<AutodiffTensor<B>> {
    let output = B::powf_scalar(input.primitive(), exponent)?;
    Ok(AutodiffTensor::unary("powf_scalar", input, output, |_| {
        let input = input.primitive().clone();
        move |gradient| {
            if exponent == 0.0 {
                B::full(B::shape(&gradient), 0.0, B::dtype(&gradient), &B::device(&gradient))
            } else if exponent == 1.0 {
                Ok(gradient)
            } else {
                let slope = B::mul_scalar_into(B::powf_scalar(&input, exponent - 1.0)?, exponent)?;
                B::mul_into(gradient, &slope)
            }
        }
    }))
}

/// d(-x) = -1.
pub fn neg<B: BaseBackend>(input: &AutodiffTensor<B>) -> Result<AutodiffTensor<B>> {
    let output = B::neg(input.primitive())?;
    Ok(AutodiffTensor::unary("neg", input, output, |_| |gradient| B::neg(&gradient)))
}

/// d exp(x) = exp(x).
pub fn exp<B: BaseBackend>(input: &AutodiffTensor<B>) -> Result<AutodiffTensor<B>> {
    let output = B::exp(input.primitive())?;
    Ok(AutodiffTensor::unary("exp", input, output, |output| {
        let output = output.clone();
        move |gradient| B::mul_into(gradient, &output)
    }))
}

/// d log(x) = 1/x.
pub fn log<B: BaseBackend>(input: &AutodiffTensor<B>) -> Result<AutodiffTensor<B>> {
    let output = B::log(input.primitive())?;
    Ok(AutodiffTensor::unary("log", input, output, |_| {
        let input = input.primitive().clone();
        move |gradient| B::div_into(gradient, &input)
    }))
}

/// d relu(x) = 1 where x > 0, else 0 (the subgradient 0 at the kink, as candle and PyTorch pick). `x > 0` exactly
/// where `relu(x) > 0`, so the output serves as the mask's source.
pub fn relu<B: BaseBackend>(input: &AutodiffTensor<B>) -> Result<AutodiffTensor<B>> {
    let output = B::relu(input.primitive())?;
    Ok(AutodiffTensor::unary("relu", input, output, |output| {
        let output = output.clone();
        move |gradient| B::mask_fill(&gradient, &B::le_scalar(&output, 0.0)?, 0.0)
    }))
}

/// d sigmoid(x) = s (1 - s), with s the output.
pub fn sigmoid<B: BaseBackend>(input: &AutodiffTensor<B>) -> Result<AutodiffTensor<B>> {
    let output = B::sigmoid(input.primitive())?;
    Ok(AutodiffTensor::unary("sigmoid", input, output, |output| {
        let output = output.clone();
        move |gradient| {
            let one_minus = B::add_scalar_into(B::neg(&output)?, 1.0)?;
            B::mul_into(gradient, &B::mul_into(one_minus, &output)?)
        }
    }))
}

/// d tanh(x) = 1 - t², with t the output.
pub fn tanh<B: BaseBackend>(input: &AutodiffTensor<B>) -> Result<AutodiffTensor<B>> {
    let output = B::tanh(input.primitive())?;
    Ok(AutodiffTensor::unary("tanh", input, output, |output| {
        let output = output.clone();
        move |gradient| {
            let one_minus_square = B::add_scalar_into(B::neg(&B::mul(&output, &output)?)?, 1.0)?;
            B::mul_into(gradient, &one_minus_square)
        }
    }))
}

/// d sqrt(x) = 1 / (2 sqrt(x)): from the output.
pub fn sqrt<B: BaseBackend>(input: &AutodiffTensor<B>) -> Result<AutodiffTensor<B>> {
    let output = B::sqrt(input.primitive())?;
    Ok(AutodiffTensor::unary("sqrt", input, output, |output| {
        let output = output.clone();
        move |gradient| B::div_into(B::mul_scalar_into(gradient, 0.5)?, &output)
    }))
}

/// d (1/x) = -1/x² = -(1/x)²: from the output.
pub fn recip<B: BaseBackend>(input: &AutodiffTensor<B>) -> Result<AutodiffTensor<B>> {
    let output = B::recip(input.primitive())?;
    Ok(AutodiffTensor::unary("recip", input, output, |output| {
        let output = output.clone();
        move |gradient| B::neg(&B::mul_into(B::mul_into(gradient, &output)?, &output)?)
    }))
}

/// d |x| = sign(x), with 0 at 0.
pub fn abs<B: BaseBackend>(input: &AutodiffTensor<B>) -> Result<AutodiffTensor<B>> {
    let output = B::abs(input.primitive())?;
    Ok(AutodiffTensor::unary("abs", input, output, |_| {
        let input = input.primitive().clone();
        move |gradient| {
            let positive = ones_where::<B>(&B::gt_scalar(&input, 0.0)?, &gradient)?;
            let negative = ones_where::<B>(&B::lt_scalar(&input, 0.0)?, &gradient)?;
            B::mul_into(gradient, &B::sub(&positive, &negative)?)
        }
    }))
}

/// d sin(x) = cos(x).
pub fn sin<B: BaseBackend>(input: &AutodiffTensor<B>) -> Result<AutodiffTensor<B>> {
    let output = B::sin(input.primitive())?;
    Ok(AutodiffTensor::unary("sin", input, output, |_| {
        let input = input.primitive().clone();
        move |gradient| B::mul_into(gradient, &B::cos(&input)?)
    }))
}

/// d cos(x) = -sin(x).
pub fn cos<B: BaseBackend>(input: &AutodiffTensor<B>) -> Result<AutodiffTensor<B>> {
    let output = B::cos(input.primitive())?;
    Ok(AutodiffTensor::unary("cos", input, output, |_| {
        let input = input.primitive().clone();
        move |gradient| B::neg(&B::mul_into(gradient, &B::sin(&input)?)?)
    }))
}

/// d erf(x) = 2/√π · exp(-x²).
pub fn erf<B: BaseBackend>(input: &AutodiffTensor<B>) -> Result<AutodiffTensor<B>> {
    let output = B::erf(input.primitive())?;
    Ok(AutodiffTensor::unary("erf", input, output, |_| {
        let input = input.primitive().clone();
        move |gradient| {
            let gaussian = B::exp(&B::neg(&B::mul(&input, &input)?)?)?;
            B::mul_into(gradient, &B::mul_scalar(&gaussian, std::f64::consts::FRAC_2_SQRT_PI)?)
        }
    }))
}

/// d (x Φ(x)) = Φ(x) + x φ(x), with Φ the standard normal CDF and φ its density: `B`'s `gelu_backward`.
pub fn gelu<B: BaseBackend>(input: &AutodiffTensor<B>) -> Result<AutodiffTensor<B>> {
    let output = B::gelu(input.primitive())?;
    Ok(AutodiffTensor::unary("gelu", input, output, |_| {
        let input = input.primitive().clone();
        move |gradient| B::gelu_backward(&input, &gradient)
    }))
}

/// d (x σ(x)) = σ(x) (1 + x (1 - σ(x))).
pub fn silu<B: BaseBackend>(input: &AutodiffTensor<B>) -> Result<AutodiffTensor<B>> {
    let output = B::silu(input.primitive())?;
    Ok(AutodiffTensor::unary("silu", input, output, |_| {
        let input = input.primitive().clone();
        move |gradient| {
            let sigmoid = B::sigmoid(&input)?;
            let one_minus = B::add_scalar(&B::neg(&sigmoid)?, 1.0)?;
            let derivative = B::mul(&sigmoid, &B::add_scalar(&B::mul(&input, &one_minus)?, 1.0)?)?;
            B::mul_into(gradient, &derivative)
        }
    }))
}

/// d clamp(x) = 1 where `min <= x <= max`, else 0.
pub fn clamp<B: BaseBackend>(input: &AutodiffTensor<B>, min: f64, max: f64) -> Result<AutodiffTensor<B>> {
    let output = B::clamp(input.primitive(), min, max)?;
    Ok(AutodiffTensor::unary("clamp", input, output, |_| {
        let input = input.primitive().clone();
        move |gradient| {
            let inside = B::bool_and(&B::ge_scalar(&input, min)?, &B::le_scalar(&input, max)?)?;
            B::mul(&gradient, &ones_where::<B>(&inside, &gradient)?)
        }
    }))
}
