//! What every optimizer is, and the bookkeeping they share: one update per parameter, moment buffers, and the
//! step count kept in their saved state.

use std::collections::BTreeMap;

use dispatch_core::{AutodiffBackend, Error, Gradients, Result, Tensor};

use crate::Module;

/// One step of an optimizer over every parameter that has a gradient.
pub trait Optimizer<B: AutodiffBackend> {
    /// `module` one step on: each parameter with a gradient in `gradients` updated and made a leaf again, the
    /// others (frozen, or not reached by the loss) unchanged.
    fn step<M: Module<B>>(&mut self, module: M, gradients: &Gradients<B>) -> Result<M>;

    /// The optimizer's state as named tensors (moments by parameter name, the step count), for saving.
    fn state(&self) -> Result<Vec<(String, Tensor<B>)>>;

    /// Restores a state that [`Optimizer::state`] gave (saved and loaded, on any device).
    fn load_state(&mut self, state: Vec<(String, Tensor<B>)>) -> Result<()>;
}

/// Runs `update(name, parameter, gradient)` for every parameter of `module` with a gradient, on detached values,
/// and makes each result a leaf.
pub(crate) fn update_each<B: AutodiffBackend, M: Module<B>>(
    module: M,
    gradients: &Gradients<B>,
    mut update: impl FnMut(&str, Tensor<B>, Tensor<B>) -> Result<Tensor<B>>,
) -> Result<M> {
    module.map_params("", &mut |name: &str, param: Tensor<B>| {
        let Some(gradient) = param.grad(gradients) else { return Ok(param) };
        if gradient.shape() != param.shape() {
            return Err(Error::shape_mismatch("optimizer step", &param.shape(), &gradient.shape()));
        }
        Tensor::require_grad(&update(name, Tensor::detach(&param)?, gradient)?)
    })
}

/// Named moment tensors, with the names they are saved under (`<param>.<moment>`).
#[derive(Clone, Debug)]
pub(crate) struct Moments<B: AutodiffBackend> {
    moment: &'static str,
    by_param: BTreeMap<String, Tensor<B>>,
}

impl<B: AutodiffBackend> Moments<B> {
    pub(crate) fn new(moment: &'static str) -> Self {
        Self { moment, by_param: BTreeMap::new() }
    }

    pub(crate) fn get(&self, param: &str) -> Option<&Tensor<B>> {
        self.by_param.get(param)
    }

    pub(crate) fn set(&mut self, param: &str, value: Tensor<B>) {
        self.by_param.insert(param.to_owned(), value);
    }

    pub(crate) fn into_by_param(self) -> BTreeMap<String, Tensor<B>> {
        self.by_param
    }

    pub(crate) fn named(&self) -> impl Iterator<Item = (String, Tensor<B>)> + '_ {
        self.by_param.iter().map(|(param, value)| (format!("{param}.{}", self.moment), value.clone()))
    }

    /// Takes the entries of `state` named `<param>.<moment>`; leaves the others.
    pub(crate) fn load(&mut self, state: &mut Vec<(String, Tensor<B>)>) {
        let suffix = format!(".{}", self.moment);
        self.by_param.clear();
        state.retain(|(name, value)| match name.strip_suffix(&suffix) {
            Some(param) => {
                self.by_param.insert(param.to_owned(), value.clone());
                false
            }
            None => true,
        });
    }
}

/// The step count as a state entry, and back.
pub(crate) fn step_entry<B: AutodiffBackend>(steps: u64, device: &B::Device) -> Result<(String, Tensor<B>)> {
    Ok(("step".to_owned(), Tensor::full([1], steps as f64, dispatch_core::DType::F64, device)?))
}

/// The entries `load_state` did not take: an error naming them, since nothing may be dropped silently.
pub(crate) fn no_leftovers<B: AutodiffBackend>(left: &[(String, Tensor<B>)]) -> Result<()> {
    if left.is_empty() {
        return Ok(());
    }
    let unexpected = left.iter().map(|(name, _)| name.clone()).collect();
    Err(Error::RecordMismatch { op: "load_state", missing: Vec::new(), unexpected })
}

/// The `step` entry of a state, removed from it.
pub(crate) fn take_steps<B: AutodiffBackend>(state: &mut Vec<(String, Tensor<B>)>) -> Result<u64> {
    let Some(at) = state.iter().position(|(name, _)| name == "step") else { return Ok(0) };
    let (_, steps) = state.remove(at);
    let value = steps.to_f64_vec()?.first().copied().unwrap_or(0.0);
    if value < 0.0 || value.fract() != 0.0 {
        return Err(Error::invalid_value("load_state", "step", value, "a whole number >= 0"));
    }
    Ok(value as u64)
}
