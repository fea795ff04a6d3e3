use dispatch_core::{Backend, Tensor};
use dispatch_nn::Module;

/// The backends this model trains on; the derive cannot see that it implies `Backend`.
pub trait Trainable: Backend {}

#[derive(Clone, Module)]
pub struct Stack<B: Trainable, M> {
    parts: Vec<M>,
    head: Tensor<B>,
}

fn main() {}
