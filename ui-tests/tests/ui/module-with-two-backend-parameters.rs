use dispatch_core::{Backend, Tensor};
use dispatch_nn::Module;

#[derive(Clone, Module)]
pub struct Bridge<B: Backend, C: Backend> {
    near: Tensor<B>,
    far: Tensor<C>,
}

fn main() {}
