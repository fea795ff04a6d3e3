use dispatch_core::{Backend, Tensor};
use dispatch_nn::Module;

#[derive(Clone, Module)]
pub struct Regressor<B: Backend> {
    weight: Tensor<B>,
    #[module(skip, skip)]
    width: usize,
}

fn main() {}
