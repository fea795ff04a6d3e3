//! The result of a backward pass: one gradient per tracked leaf.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};

use crate::backend::Backend;
use crate::error::Result;

/// The identity of a node of an autodiff graph; unique within the process.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TensorId(u64);

impl TensorId {
    /// An identity never given out before in this process.
    pub fn new() -> Self {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        Self(NEXT.fetch_add(1, Ordering::Relaxed))
    }
}

impl Default for TensorId {
    fn default() -> Self {
        Self::new()
    }
}

/// Gradients of a loss with respect to the leaves marked with `require_grad`, keyed by their [`TensorId`].
pub struct Gradients<B: Backend> {
    by_id: HashMap<TensorId, B::FloatTensor>,
}

impl<B: Backend> Gradients<B> {
    /// No gradients yet.
    pub fn new() -> Self {
        Self { by_id: HashMap::new() }
    }

    /// Records `gradient` as the gradient of the tensor `id`, replacing any earlier one.
    pub fn insert(&mut self, id: TensorId, gradient: B::FloatTensor) {
        self.by_id.insert(id, gradient);
    }

    /// The gradient of the tensor `id`, if the backward pass reached it.
    pub fn get(&self, id: TensorId) -> Option<&B::FloatTensor> {
        self.by_id.get(&id)
    }

    /// Takes the gradient of the tensor `id` out, if there is one.
    pub fn remove(&mut self, id: TensorId) -> Option<B::FloatTensor> {
        self.by_id.remove(&id)
    }

    /// The number of tensors with a gradient.
    pub fn len(&self) -> usize {
        self.by_id.len()
    }

    /// Whether no tensor has a gradient.
    pub fn is_empty(&self) -> bool {
        self.by_id.is_empty()
    }

    /// The same gradients as tensors of another backend, e.g. a dispatch backend wrapping `B`.
    pub fn map_backend<C: Backend>(self, mut convert: impl FnMut(B::FloatTensor) -> C::FloatTensor) -> Gradients<C> {
        Gradients { by_id: self.by_id.into_iter().map(|(id, gradient)| (id, convert(gradient))).collect() }
    }
}

impl<B: Backend> Default for Gradients<B> {
    fn default() -> Self {
        Self::new()
    }
}

impl<B: Backend> std::fmt::Debug for Gradients<B> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map().entries(self.by_id.iter()).finish()
    }
}

/// A backend whose tensors can record a computation graph and run reverse-mode differentiation.
#[diagnostic::on_unimplemented(
    message = "`{Self}` records no gradients: it is not an autodiff backend",
    label = "not an autodiff backend",
    note = "for a derived enum's backend, add an `#[autodiff]` variant to the device enum \
            (`#[autodiff] Autodiff(AutodiffDevice<Self>)`); for a backend `B` of its own, use `Autodiff<B>`"
)]
pub trait AutodiffBackend: Backend {
    /// Marks a tensor as a leaf whose gradient `backward` reports; returns the tracked tensor.
    fn require_grad(tensor: &Self::FloatTensor) -> Result<Self::FloatTensor>;
    /// The same values, cut from the graph.
    fn detach(tensor: &Self::FloatTensor) -> Result<Self::FloatTensor>;
    /// The identity under which `backward` reports this tensor's gradient; `None` if it records no graph.
    fn tensor_id(tensor: &Self::FloatTensor) -> Option<TensorId>;
    /// Reverse-mode differentiation of a one-element loss: the gradient of every leaf marked with
    /// `require_grad` that the loss depends on. The gradients are detached tensors of this backend.
    fn backward(loss: &Self::FloatTensor) -> Result<Gradients<Self>>;
    /// [`backward`](Self::backward), consuming the loss, so that what each op saved for its rule can be released
    /// as soon as the rule has run (on a backend that can; by default, when the loss is dropped at the end). The
    /// part of the graph another tensor still reaches is kept whole.
    fn backward_once(loss: Self::FloatTensor) -> Result<Gradients<Self>> {
        Self::backward(&loss)
    }
}
