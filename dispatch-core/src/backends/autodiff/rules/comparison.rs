//! Masked selection: each float operand gets the gradient where it was picked, zero elsewhere.

use crate::backends::BaseBackend;
use crate::backends::autodiff::broadcast::reduce_to_shape;
use crate::backends::autodiff::tensor::{AutodiffTensor, gradient_if};
use crate::error::Result;
use crate::shape::Shape;

/// 1 where `mask` holds, else 0, in `like`'s dtype: a factor a gradient of that dtype can be multiplied by.
pub fn ones_where<B: BaseBackend>(mask: &B::BoolTensor, like: &B::FloatTensor) -> Result<B::FloatTensor> {
    B::bool_to_float(mask, B::dtype(like))
}

/// d/d(on_true) = the gradient where `mask` holds, d/d(on_false) = where it does not; each reduced back to its
/// operand's shape, since the three broadcast together.
pub fn mask_where<B: BaseBackend>(
    mask: &B::BoolTensor,
    on_true: &AutodiffTensor<B>,
    on_false: &AutodiffTensor<B>,
) -> Result<AutodiffTensor<B>> {
    let output = B::mask_where(mask, on_true.primitive(), on_false.primitive())?;
    Ok(selected("mask_where", mask.clone(), [on_true, on_false], output))
}

/// The backward of any op whose `output` takes each entry from `on_true` where `mask` holds and from `on_false`
/// elsewhere: `mask_where`, and `maximum` and `minimum` with the mask of where they picked their left operand.
pub fn selected<B: BaseBackend>(
    op: &'static str,
    mask: B::BoolTensor,
    [on_true, on_false]: [&AutodiffTensor<B>; 2],
    output: B::FloatTensor,
) -> AutodiffTensor<B> {
    AutodiffTensor::binary(op, [on_true, on_false], output, |[true_tracked, false_tracked], _| {
        let (true_shape, false_shape) = (B::shape(on_true.primitive()), B::shape(on_false.primitive()));
        let device = B::device(on_true.primitive());
        move |gradient| {
            let zero = B::full(Shape::new([1]), 0.0, B::dtype(&gradient), &device)?;
            Ok([
                gradient_if(true_tracked, || {
                    reduce_to_shape::<B>(B::mask_where(&mask, &gradient, &zero)?, &true_shape)
                })?,
                gradient_if(false_tracked, || {
                    reduce_to_shape::<B>(B::mask_where(&mask, &zero, &gradient)?, &false_shape)
                })?,
            ])
        }
    })
}

/// d/d(tensor) = the gradient where `mask` does not hold; the filled places do not depend on `tensor`.
pub fn mask_fill<B: BaseBackend>(
    tensor: &AutodiffTensor<B>,
    mask: &B::BoolTensor,
    value: f64,
) -> Result<AutodiffTensor<B>> {
    let output = B::mask_fill(tensor.primitive(), mask, value)?;
    Ok(AutodiffTensor::unary("mask_fill", tensor, output, |_| {
        let mask = mask.clone();
        move |gradient| B::mask_fill(&gradient, &mask, 0.0)
    }))
}
