use dispatch_core::{Backend, Tensor};
use dispatch_nn::Module;

#[derive(Clone, Module)]
pub struct Regressor<B: Backend> {
    weight: Tensor<B>,
    width: usize,
}

fn main() {}
