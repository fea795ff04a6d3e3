//! Element-wise float ops of `Tensor<B>`: arithmetic (broadcasting), scalars, functions, bounds.

use super::float::Tensor;
use super::int_bool::IntTensor;
use crate::backend::{AdamStep, Backend};
use crate::error::{Error, Result};

impl<B: Backend> Tensor<B> {
    /// Element-wise sum, broadcasting with numpy rules (a `[n]` row over a `[m, n]` matrix is a bias add).
    pub fn add(&self, other: &Self) -> Result<Self> {
        Self::wrap(B::add(&self.primitive, &other.primitive))
    }

    /// Element-wise `self - other`, broadcasting as [`Tensor::add`] does.
    pub fn sub(&self, other: &Self) -> Result<Self> {
        Self::wrap(B::sub(&self.primitive, &other.primitive))
    }

    /// Element-wise `self * other`, broadcasting as [`Tensor::add`] does.
    pub fn mul(&self, other: &Self) -> Result<Self> {
        Self::wrap(B::mul(&self.primitive, &other.primitive))
    }

    /// Element-wise `self / other`, broadcasting as [`Tensor::add`] does; division by zero gives IEEE infinities.
    pub fn div(&self, other: &Self) -> Result<Self> {
        Self::wrap(B::div(&self.primitive, &other.primitive))
    }

    /// `self + other` as [`Tensor::add`], giving `self` up: where nothing else shares its memory (no clone of it, no
    /// view, no graph that keeps it) and `other` broadcasts into its shape, a backend may write the sums there
    /// instead of in new memory (ndarray does; candle, which cannot tell whether its memory is shared, writes new
    /// memory). On an `Err`, `self` is dropped unchanged: keep a clone to read it after a failure.
    pub fn add_into(self, other: &Self) -> Result<Self> {
        Self::wrap(B::add_into(self.primitive, &other.primitive))
    }

    /// `self - other` as [`Tensor::sub`], giving `self` up as [`Tensor::add_into`] does.
    pub fn sub_into(self, other: &Self) -> Result<Self> {
        Self::wrap(B::sub_into(self.primitive, &other.primitive))
    }

    /// `self * other` as [`Tensor::mul`], giving `self` up as [`Tensor::add_into`] does.
    pub fn mul_into(self, other: &Self) -> Result<Self> {
        Self::wrap(B::mul_into(self.primitive, &other.primitive))
    }

    /// `self / other` as [`Tensor::div`], giving `self` up as [`Tensor::add_into`] does.
    pub fn div_into(self, other: &Self) -> Result<Self> {
        Self::wrap(B::div_into(self.primitive, &other.primitive))
    }

    /// `self + scalar` as [`Tensor::add_scalar`], giving `self` up as [`Tensor::add_into`] does.
    pub fn add_scalar_into(self, scalar: f64) -> Result<Self> {
        Self::wrap(B::add_scalar_into(self.primitive, scalar))
    }

    /// `self * scalar` as [`Tensor::mul_scalar`], giving `self` up as [`Tensor::add_into`] does.
    pub fn mul_scalar_into(self, scalar: f64) -> Result<Self> {
        Self::wrap(B::mul_scalar_into(self.primitive, scalar))
    }

    /// `self + scalar`, element-wise (`scalar` rounded once to the tensor's dtype, as every scalar argument is).
    pub fn add_scalar(&self, scalar: f64) -> Result<Self> {
        Self::wrap(B::add_scalar(&self.primitive, scalar))
    }

    /// `self - scalar`, element-wise.
    pub fn sub_scalar(&self, scalar: f64) -> Result<Self> {
        self.add_scalar(-scalar)
    }

    /// `self * scalar`, element-wise.
    pub fn mul_scalar(&self, scalar: f64) -> Result<Self> {
        Self::wrap(B::mul_scalar(&self.primitive, scalar))
    }

    /// `self / scalar`, element-wise, as a product with `1 / scalar` computed in `f64`; a zero divisor is an `Err`
    /// (almost always a bug).
    pub fn div_scalar(&self, scalar: f64) -> Result<Self> {
        if scalar == 0.0 {
            return Err(Error::invalid_value("div_scalar", "scalar", scalar, "non-zero"));
        }
        let reciprocal = 1.0 / scalar;
        if self.dtype().round(reciprocal).is_finite() {
            return self.mul_scalar(reciprocal);
        }
        // The reciprocal of a tiny divisor overflows the dtype to infinity, which would turn 0 / s into NaN.
        self.div(&Self::full([1], scalar, self.dtype(), &self.device())?)
    }

    /// `self ^ exponent`, element-wise.
    pub fn powf_scalar(&self, exponent: f64) -> Result<Self> {
        Self::wrap(B::powf_scalar(&self.primitive, exponent))
    }

    /// `self * self`, element-wise.
    pub fn square(&self) -> Result<Self> {
        self.mul(self)
    }

    /// `-self`, element-wise.
    pub fn neg(&self) -> Result<Self> {
        Self::wrap(B::neg(&self.primitive))
    }

    /// `e ^ self`, element-wise.
    pub fn exp(&self) -> Result<Self> {
        Self::wrap(B::exp(&self.primitive))
    }

    /// The natural logarithm, element-wise.
    pub fn log(&self) -> Result<Self> {
        Self::wrap(B::log(&self.primitive))
    }

    /// `max(self, 0)`, element-wise.
    pub fn relu(&self) -> Result<Self> {
        Self::wrap(B::relu(&self.primitive))
    }

    /// `1 / (1 + e ^ -self)`, element-wise.
    pub fn sigmoid(&self) -> Result<Self> {
        Self::wrap(B::sigmoid(&self.primitive))
    }

    /// The hyperbolic tangent, element-wise.
    pub fn tanh(&self) -> Result<Self> {
        Self::wrap(B::tanh(&self.primitive))
    }
}

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

    /// `gradient * gelu'(self)`, element-wise, broadcasting: the gradient of [`Tensor::gelu`] at `self` given the
    /// gradient of its output, in one op where the backend fuses it (as `gelu`'s backward rule uses it).
    pub fn gelu_backward(&self, gradient: &Self) -> Result<Self> {
        Self::wrap(B::gelu_backward(self.primitive(), gradient.primitive()))
    }

    /// One step of Adam or AdamW on the parameter `self`, given its gradient (of its shape) and its `moments` (the
    /// first and second moments as the rows of a `[2, ...]` tensor, zeros before the first step): the new
    /// parameter and moments as the rows of a `[3, ...]` tensor, in one pass where the backend fuses it. Records no
    /// gradient. dispatch-nn's `Adam` and `AdamW` take their steps with it.
    pub fn adam_step(&self, gradient: &Self, moments: &Self, options: AdamStep) -> Result<Self> {
        Self::wrap(B::adam_step(self.primitive(), gradient.primitive(), moments.primitive(), options))
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
