//! A check of the backward rules themselves. Devices that record gradients share every rule, so comparing them
//! with each other cannot catch a wrong one; a finite difference of the loss, which takes no rule at all, can.

use std::collections::BTreeMap;

use dispatch_core::{AutodiffBackend, Error, Result, Tensor};
use dispatch_nn::ModuleExt;

use crate::random::splitmix64;

/// The derivative of a loss along one direction of parameter space, two ways.
pub struct DirectionalDerivative {
    /// The gradient by autodiff, dotted with the direction.
    pub autodiff: f64,
    /// `(loss(θ + εd) - loss(θ - εd)) / 2ε`.
    pub finite_difference: f64,
}

impl DirectionalDerivative {
    /// `|autodiff - finite difference|`, relative to the finite difference.
    pub fn relative_gap(&self) -> f64 {
        (self.autodiff - self.finite_difference).abs() / self.finite_difference.abs().max(f64::MIN_POSITIVE)
    }
}

/// The derivative of `loss` at `model` (tracked, in F64 for the difference to be exact enough) along a direction of
/// unit length drawn from `seed` across every parameter, so that every parameter's gradient enters it. A
/// parameter the loss does not reach by autodiff (a cut graph) is an `Err` naming it.
pub fn directional_derivative<B: AutodiffBackend, M: ModuleExt<B>>(
    model: &M,
    loss: impl Fn(&M) -> Result<Tensor<B>>,
    seed: u64,
    epsilon: f64,
) -> Result<DirectionalDerivative> {
    let gradients = loss(model)?.backward_once()?;
    let mut state = seed;
    let mut directions = BTreeMap::new();
    let mut squared_length = 0.0;
    for (name, param) in model.params()? {
        let direction: Vec<f64> = (0..param.shape().num_elements())
            .map(|_| {
                state = splitmix64(state);
                (state >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0
            })
            .collect();
        squared_length += direction.iter().map(|d| d * d).sum::<f64>();
        let gradient = param.grad(&gradients).ok_or_else(|| {
            Error::invalid("gradient check", format!("the loss has no gradient for `{name}`: the graph is cut"))
        })?;
        directions.insert(name, (direction, gradient.to_f64_vec()?));
    }
    let scale = 1.0 / squared_length.sqrt();
    let autodiff = directions
        .values()
        .flat_map(|(direction, gradient)| direction.iter().zip(gradient).map(|(d, g)| d * scale * g))
        .sum();
    let shifted_loss = |step: f64| -> Result<f64> {
        let shifted = model.clone().map_params("", &mut |name: &str, param: Tensor<B>| {
            let (direction, _) = directions
                .get(name)
                .ok_or_else(|| Error::invalid("gradient check", format!("`{name}` is not among the parameters")))?;
            let values = param.to_f64_vec()?.iter().zip(direction).map(|(p, d)| p + step * scale * d).collect();
            Tensor::from_f64_vec(values, param.shape(), param.dtype(), &param.device())
        })?;
        let values = loss(&shifted)?.to_f64_vec()?;
        values.first().copied().ok_or_else(|| Error::invalid("gradient check", "the loss has no value"))
    };
    let finite_difference = (shifted_loss(epsilon)? - shifted_loss(-epsilon)?) / (2.0 * epsilon);
    Ok(DirectionalDerivative { autodiff, finite_difference })
}

#[cfg(all(test, feature = "ndarray"))]
mod tests {
    use dispatch_core::DType;
    use dispatch_core::backends::{Autodiff, NdArray, NdArrayDevice};

    use super::*;

    type B = Autodiff<NdArray>;

    fn tracked(values: Vec<f64>) -> Tensor<B> {
        let len = values.len();
        Tensor::<B>::from_f64_vec(values, [len], DType::F64, &NdArrayDevice).unwrap().require_grad().unwrap()
    }

    #[test]
    fn autodiff_and_the_finite_difference_agree_on_a_smooth_loss() {
        let model = vec![tracked(vec![0.5, -1.0, 2.0]), tracked(vec![0.25, 3.0])];
        // Σ x³ + Σ y²
        let loss = |model: &Vec<Tensor<B>>| {
            model[0].mul(&model[0])?.mul(&model[0])?.sum()?.add(&model[1].mul(&model[1])?.sum()?)
        };
        let derivative = directional_derivative(&model, loss, 3, 1e-4).unwrap();
        assert!(derivative.autodiff.abs() > 0.1, "{}", derivative.autodiff);
        assert!(derivative.relative_gap() < 1e-8, "{}", derivative.relative_gap());
    }

    /// A rule that drops a term, as a wrong backward rule would: `x · x` with one factor cut from the graph has
    /// half the derivative of `x²`, which the finite difference does not miss.
    #[test]
    fn a_gradient_missing_a_term_is_far_from_the_finite_difference() {
        let model = vec![tracked(vec![0.5, -1.0, 2.0])];
        let loss = |model: &Vec<Tensor<B>>| model[0].detach()?.mul(&model[0])?.sum();
        let derivative = directional_derivative(&model, loss, 3, 1e-4).unwrap();
        assert!((derivative.relative_gap() - 0.5).abs() < 1e-6, "{}", derivative.relative_gap());
    }

    #[test]
    fn a_parameter_the_loss_does_not_reach_is_an_error_naming_it() {
        let model = vec![tracked(vec![1.0]), tracked(vec![2.0])];
        let error = directional_derivative(&model, |model| model[0].sum(), 3, 1e-4).err().unwrap();
        assert!(error.to_string().contains("no gradient for `1`"), "{error}");
    }
}
