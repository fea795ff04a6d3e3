use dispatch_core::{Backend, Tensor};
use dispatch_nn::Module;

#[derive(Clone, Module)]
pub enum Head<B: Backend> {
    Linear(Tensor<B>),
    Identity,
}

fn main() {}
