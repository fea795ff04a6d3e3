//! The options of the element-wise ops that take more than scalars: one step of Adam or AdamW.

use crate::error::{Error, Result};
use crate::shape::Shape;

/// One step of Adam or AdamW, as PyTorch's `Adam` and `AdamW` take it, for `Backend::adam_step`: with `g` the
/// gradient, `m = β1 m + (1 - β1) g`, `v = β2 v + (1 - β2) g²` and
/// `p -= lr / (1 - β1^t) · m / (sqrt(v / (1 - β2^t)) + eps)`. A weight decay first shrinks the parameter,
/// `p *= 1 - lr · weight_decay` (decoupled: AdamW), or adds `weight_decay · p` to the gradient (Adam's L2 penalty).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AdamStep {
    /// The learning rate, at least 0.
    pub lr: f64,
    /// The decay rates of the first and second moments, each in `[0, 1)`.
    pub betas: (f64, f64),
    /// Added to the denominator, at least 0.
    pub eps: f64,
    /// The weight decay, at least 0 (0: none).
    pub weight_decay: f64,
    /// Whether the decay shrinks the parameter (AdamW) rather than entering the gradient (Adam).
    pub decoupled: bool,
    /// The step's number `t`, from 1: the bias corrections are `1 - β1^t` and `1 - β2^t`.
    pub step: u64,
}

impl Default for AdamStep {
    /// PyTorch's `Adam` defaults (lr 1e-3, betas 0.9 and 0.999, eps 1e-8, no weight decay), at the first step.
    fn default() -> Self {
        Self { lr: 1e-3, betas: (0.9, 0.999), eps: 1e-8, weight_decay: 0.0, decoupled: false, step: 1 }
    }
}

/// The scalars of one step as the composed default's ops take them, in `f64` (each op rounds its scalar to the
/// tensor's dtype; a fused kernel rounds them alike).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct AdamScalars {
    /// `1 - lr · weight_decay`, which scales AdamW's parameter (`None` for Adam, or without decay).
    pub(crate) decay: Option<f64>,
    /// `weight_decay`, which scales Adam's parameter into its gradient (`None` for AdamW, or without decay).
    pub(crate) penalty: Option<f64>,
    /// `β1` and `1 - β1`.
    pub(crate) first: (f64, f64),
    /// `β2` and `1 - β2`.
    pub(crate) second: (f64, f64),
    /// `1 / (1 - β2^t)`, which scales the second moment under the square root.
    pub(crate) second_correction: f64,
    pub(crate) eps: f64,
    /// `lr / (1 - β1^t)`, which scales the first moment.
    pub(crate) step_size: f64,
}

impl AdamStep {
    /// The step's scalars, once each option is in its range (NaN is in none): an `Error::InvalidValue` naming the
    /// first that is not.
    pub(crate) fn scalars(&self, op: &'static str) -> Result<AdamScalars> {
        let (beta1, beta2) = self.betas;
        let at_least_0 = |parameter, value: f64| match value >= 0.0 {
            true => Ok(()),
            false => Err(Error::invalid_value(op, parameter, value, "at least 0")),
        };
        let a_rate = |parameter, value: f64| match (0.0..1.0).contains(&value) {
            true => Ok(()),
            false => Err(Error::invalid_value(op, parameter, value, "in [0, 1)")),
        };
        at_least_0("lr", self.lr)?;
        a_rate("betas.0", beta1)?;
        a_rate("betas.1", beta2)?;
        at_least_0("eps", self.eps)?;
        at_least_0("weight_decay", self.weight_decay)?;
        if self.step == 0 {
            return Err(Error::invalid_value(op, "step", 0usize, "at least 1 (the first step is 1)"));
        }
        // β^t underflows to 0 long before `t` reaches `i32::MAX`, so the clamp changes no value.
        let t = i32::try_from(self.step).unwrap_or(i32::MAX);
        let decays = self.weight_decay != 0.0;
        Ok(AdamScalars {
            decay: (decays && self.decoupled).then_some(1.0 - self.lr * self.weight_decay),
            penalty: (decays && !self.decoupled).then_some(self.weight_decay),
            first: (beta1, 1.0 - beta1),
            second: (beta2, 1.0 - beta2),
            second_correction: 1.0 / (1.0 - beta2.powi(t)),
            eps: self.eps,
            step_size: self.lr / (1.0 - beta1.powi(t)),
        })
    }
}

/// Checks `adam_step`'s operands (the gradient of the parameter's shape, the moments `[2, ...]` of it) and gives
/// the output's shape, `[3, ...]`. The dtypes are the caller's to check.
pub(crate) fn adam_output_shape(parameter: &Shape, gradient: &Shape, moments: &Shape) -> Result<Shape> {
    let op = "adam_step";
    if gradient != parameter {
        return Err(Error::shape_mismatch(op, parameter, gradient));
    }
    if moments.dims().split_first() != Some((&2, parameter.dims())) {
        return Err(Error::unexpected_shape(
            op,
            "moments of shape [2, ...] (the parameter's shape after the 2)",
            moments,
        ));
    }
    if parameter.num_elements().checked_mul(3).is_none() {
        return Err(Error::SizeOverflow { op, what: "the output's elements" });
    }
    Ok(Shape::new([&[3], parameter.dims()].concat()))
}
