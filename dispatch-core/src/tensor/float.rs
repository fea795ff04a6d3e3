//! `Tensor<B>` itself: the float tensor's handle, how it wraps and hands out the backend's primitive, and its
//! gradient.

use std::fmt;

use crate::backend::Backend;
use crate::error::Result;
use crate::gradients::{AutodiffBackend, Gradients, TensorId};

/// A float tensor of backend `B`. Cloning is cheap: backends share storage.
pub struct Tensor<B: Backend> {
    pub(super) primitive: B::FloatTensor,
}

impl<B: Backend> Clone for Tensor<B> {
    fn clone(&self) -> Self {
        Self { primitive: self.primitive.clone() }
    }
}

impl<B: Backend> fmt::Debug for Tensor<B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Tensor")
            .field("backend", &B::name())
            .field("shape", &self.shape())
            .field("primitive", &self.primitive)
            .finish()
    }
}

impl<B: Backend> Tensor<B> {
    /// Wraps a backend's own tensor.
    pub fn from_primitive(primitive: B::FloatTensor) -> Self {
        Self { primitive }
    }

    /// The backend's own tensor.
    pub fn primitive(&self) -> &B::FloatTensor {
        &self.primitive
    }

    /// Unwraps the backend's own tensor.
    pub fn into_primitive(self) -> B::FloatTensor {
        self.primitive
    }

    pub(crate) fn wrap(primitive: Result<B::FloatTensor>) -> Result<Self> {
        primitive.map(Self::from_primitive)
    }
}

/// Gradients, for backends that record them. Each method carries its `AutodiffBackend` bound itself, rather than
/// the `impl` block, so calling one on a backend that records no gradients is the bound's own error (saying to add
/// an `#[autodiff]` variant or use `Autodiff<B>`), not "no method named `backward`".
impl<B: Backend> Tensor<B> {
    /// This tensor as a leaf whose gradient `backward` reports.
    pub fn require_grad(&self) -> Result<Self>
    where
        B: AutodiffBackend,
    {
        Self::wrap(B::require_grad(&self.primitive))
    }

    /// The same values, cut from the graph.
    pub fn detach(&self) -> Result<Self>
    where
        B: AutodiffBackend,
    {
        Self::wrap(B::detach(&self.primitive))
    }

    /// The identity under which `backward` reports this tensor's gradient; `None` if it records no graph.
    pub fn id(&self) -> Option<TensorId>
    where
        B: AutodiffBackend,
    {
        B::tensor_id(&self.primitive)
    }

    /// Reverse-mode differentiation of this one-element loss. The graph stays whole while the loss lives, so
    /// `backward` can run again; [`backward_once`](Self::backward_once) frees it during the pass.
    pub fn backward(&self) -> Result<Gradients<B>>
    where
        B: AutodiffBackend,
    {
        B::backward(&self.primitive)
    }

    /// [`backward`](Self::backward), consuming the loss: what each op saved for its backward rule (activations,
    /// outputs) is released as soon as the rule has run, so the pass's peak memory holds the gradients and only the
    /// part of the graph still ahead of it. An op that another live tensor still depends on is kept, with all it
    /// reaches. Read the loss's value before: `let value = loss.to_scalar()?; let gradients = loss.backward_once()?;`.
    pub fn backward_once(self) -> Result<Gradients<B>>
    where
        B: AutodiffBackend,
    {
        B::backward_once(self.primitive)
    }

    /// This tensor's gradient in `gradients`, if it is a tracked leaf the loss depends on.
    pub fn grad(&self, gradients: &Gradients<B>) -> Option<Self>
    where
        B: AutodiffBackend,
    {
        self.id().and_then(|id| gradients.get(id)).cloned().map(Self::from_primitive)
    }
}
