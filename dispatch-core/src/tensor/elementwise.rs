//! The element-wise float functions of `Tensor<B>` beyond arithmetic: roots, trigonometry, activations, bounds.

use super::{IntTensor, Tensor};
use crate::backend::Backend;
use crate::error::Result;

/// Declares `Tensor` methods that call the backend op of the same name on this tensor alone.
macro_rules! unary_methods {
    ($($(#[$doc:meta])* $op:ident;)*) => {
        impl<B: Backend> Tensor<B> {
            $(
                $(#[$doc])*
                pub fn $op(&self) -> Result<Self> {
                    Self::wrap(B::$op(self.primitive()))
                }
            )*
        }
    };
}

unary_methods! {
    /// The square root, element-wise (NaN below zero).
    sqrt;
    /// `1 / self`, element-wise.
    recip;
    /// `|self|`, element-wise.
    abs;
    /// The sine, element-wise.
    sin;
    /// The cosine, element-wise.
    cos;
    /// The error function, element-wise.
    erf;
    /// The exact GELU, `x * Φ(x)`, element-wise.
    gelu;
    /// `x * sigmoid(x)`, element-wise.
    silu;
}

impl<B: Backend> Tensor<B> {
    /// Every element clamped to `[min, max]`; `min <= max` is required.
    pub fn clamp(&self, min: f64, max: f64) -> Result<Self> {
        Self::wrap(B::clamp(self.primitive(), min, max))
    }

    /// The larger of `self` and `other`, element-wise, broadcasting; NaN if either is NaN.
    pub fn maximum(&self, other: &Self) -> Result<Self> {
        Self::wrap(B::maximum(self.primitive(), other.primitive()))
    }

    /// The smaller of `self` and `other`, element-wise, broadcasting; NaN if either is NaN.
    pub fn minimum(&self, other: &Self) -> Result<Self> {
        Self::wrap(B::minimum(self.primitive(), other.primitive()))
    }

    /// The index of the smallest entry along `axis` (the first on ties, skipping NaN), keeping the axis with size 1.
    pub fn argmin(&self, axis: usize) -> Result<IntTensor<B>> {
        IntTensor::wrap(B::argmin(self.primitive(), axis))
    }
}
