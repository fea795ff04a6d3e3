use dispatch_core::{Backend, Tensor};
use dispatch_nn::Module;

#[derive(Clone, Module)]
#[module(skip)]
pub struct Regressor<B: Backend> {
    weight: Tensor<B>,
}

fn main() {}
