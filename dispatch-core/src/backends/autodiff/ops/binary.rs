//! Element-wise ops of two tensors, with numpy broadcasting: each operand's gradient is reduced back to its shape.

use super::mask::selected;
use crate::backend::BaseBackend;
use crate::backends::autodiff::broadcast::reduce_to_shape;
use crate::backends::autodiff::tensor::{AutodiffTensor, gradient_if};
use crate::error::Result;

pub(crate) fn add<B: BaseBackend>(lhs: &AutodiffTensor<B>, rhs: &AutodiffTensor<B>) -> Result<AutodiffTensor<B>> {
    let output = B::add(lhs.primitive(), rhs.primitive())?;
    Ok(AutodiffTensor::binary("add", [lhs, rhs], output, |[lhs_tracked, rhs_tracked], _| {
        let lhs_shape = B::shape(lhs.primitive());
        let rhs_shape = B::shape(rhs.primitive());
        move |gradient| {
            Ok([
                gradient_if(lhs_tracked, || reduce_to_shape::<B>(gradient.clone(), &lhs_shape))?,
                gradient_if(rhs_tracked, || reduce_to_shape::<B>(gradient, &rhs_shape))?,
            ])
        }
    }))
}

pub(crate) fn sub<B: BaseBackend>(lhs: &AutodiffTensor<B>, rhs: &AutodiffTensor<B>) -> Result<AutodiffTensor<B>> {
    let output = B::sub(lhs.primitive(), rhs.primitive())?;
    Ok(AutodiffTensor::binary("sub", [lhs, rhs], output, |[lhs_tracked, rhs_tracked], _| {
        let lhs_shape = B::shape(lhs.primitive());
        let rhs_shape = B::shape(rhs.primitive());
        move |gradient| {
            Ok([
                gradient_if(lhs_tracked, || reduce_to_shape::<B>(gradient.clone(), &lhs_shape))?,
                gradient_if(rhs_tracked, || reduce_to_shape::<B>(B::neg(&gradient)?, &rhs_shape))?,
            ])
        }
    }))
}

/// d(l*r)/dl = r and d(l*r)/dr = l: each operand is kept only when the *other* one needs a gradient.
pub(crate) fn mul<B: BaseBackend>(lhs: &AutodiffTensor<B>, rhs: &AutodiffTensor<B>) -> Result<AutodiffTensor<B>> {
    let output = B::mul(lhs.primitive(), rhs.primitive())?;
    Ok(AutodiffTensor::binary("mul", [lhs, rhs], output, |[lhs_tracked, rhs_tracked], _| {
        let lhs_shape = B::shape(lhs.primitive());
        let rhs_shape = B::shape(rhs.primitive());
        let rhs_value = lhs_tracked.then(|| rhs.primitive().clone());
        let lhs_value = rhs_tracked.then(|| lhs.primitive().clone());
        move |gradient| {
            let lhs_gradient = match &rhs_value {
                Some(rhs) => Some(reduce_to_shape::<B>(B::mul(&gradient, rhs)?, &lhs_shape)?),
                None => None,
            };
            let rhs_gradient = match &lhs_value {
                Some(lhs) => Some(reduce_to_shape::<B>(B::mul(&gradient, lhs)?, &rhs_shape)?),
                None => None,
            };
            Ok([lhs_gradient, rhs_gradient])
        }
    }))
}

/// d(l/r)/dl = 1/r and d(l/r)/dr = -l/r² = -(l/r)/r: both share `gradient / r`, and the right one reuses the
/// output instead of squaring `r`.
pub(crate) fn div<B: BaseBackend>(lhs: &AutodiffTensor<B>, rhs: &AutodiffTensor<B>) -> Result<AutodiffTensor<B>> {
    let output = B::div(lhs.primitive(), rhs.primitive())?;
    Ok(AutodiffTensor::binary("div", [lhs, rhs], output, |[lhs_tracked, rhs_tracked], output| {
        let lhs_shape = B::shape(lhs.primitive());
        let rhs_shape = B::shape(rhs.primitive());
        let rhs_value = rhs.primitive().clone();
        let quotient = rhs_tracked.then(|| output.clone());
        move |gradient| {
            let over_rhs = B::div(&gradient, &rhs_value)?;
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
pub(crate) fn maximum<B: BaseBackend>(lhs: &AutodiffTensor<B>, rhs: &AutodiffTensor<B>) -> Result<AutodiffTensor<B>> {
    let output = B::maximum(lhs.primitive(), rhs.primitive())?;
    let picked_lhs = B::ge(lhs.primitive(), rhs.primitive())?;
    Ok(selected("maximum", picked_lhs, [lhs, rhs], output))
}

/// The gradient goes to the smaller operand, to `lhs` on ties.
pub(crate) fn minimum<B: BaseBackend>(lhs: &AutodiffTensor<B>, rhs: &AutodiffTensor<B>) -> Result<AutodiffTensor<B>> {
    let output = B::minimum(lhs.primitive(), rhs.primitive())?;
    let picked_lhs = B::le(lhs.primitive(), rhs.primitive())?;
    Ok(selected("minimum", picked_lhs, [lhs, rhs], output))
}
