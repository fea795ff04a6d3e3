//! Comparisons of float tensors, giving bool tensors, and masks: float tensors picked by bool ones.

use super::float::Tensor;
use super::int_bool::BoolTensor;
use crate::backend::Backend;
use crate::error::Result;

/// Declares the comparisons of float tensors, tensor and scalar, as `Tensor` methods.
macro_rules! comparisons {
    ($($(#[$doc:meta])* $op:ident, $(#[$scalar_doc:meta])* $scalar_op:ident;)*) => {
        impl<B: Backend> Tensor<B> {
            $(
                $(#[$doc])*
                pub fn $op(&self, other: &Self) -> Result<BoolTensor<B>> {
                    BoolTensor::wrap(B::$op(self.primitive(), other.primitive()))
                }

                $(#[$scalar_doc])*
                pub fn $scalar_op(&self, scalar: f64) -> Result<BoolTensor<B>> {
                    BoolTensor::wrap(B::$scalar_op(self.primitive(), scalar))
                }
            )*
        }
    };
}

comparisons! {
    /// `self == other`, element-wise, broadcasting.
    eq, /// `self == scalar`, element-wise.
    eq_scalar;
    /// `self != other`, element-wise, broadcasting.
    ne, /// `self != scalar`, element-wise.
    ne_scalar;
    /// `self < other`, element-wise, broadcasting.
    lt, /// `self < scalar`, element-wise.
    lt_scalar;
    /// `self <= other`, element-wise, broadcasting.
    le, /// `self <= scalar`, element-wise.
    le_scalar;
    /// `self > other`, element-wise, broadcasting.
    gt, /// `self > scalar`, element-wise.
    gt_scalar;
    /// `self >= other`, element-wise, broadcasting.
    ge, /// `self >= scalar`, element-wise.
    ge_scalar;
}

impl<B: Backend> Tensor<B> {
    /// `on_true` where `mask` holds, else `on_false`; the three broadcast to one shape. Differentiable in both
    /// branches.
    pub fn mask_where(mask: &BoolTensor<B>, on_true: &Self, on_false: &Self) -> Result<Self> {
        Self::wrap(B::mask_where(mask.primitive(), on_true.primitive(), on_false.primitive()))
    }

    /// `value` where `mask` holds, else this tensor's value; `mask` broadcasts to this tensor's shape.
    /// Differentiable (zero gradient where filled).
    pub fn mask_fill(&self, mask: &BoolTensor<B>, value: f64) -> Result<Self> {
        Self::wrap(B::mask_fill(self.primitive(), mask.primitive(), value))
    }
}
