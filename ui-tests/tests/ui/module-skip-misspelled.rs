use dispatch_core::{Backend, Tensor};
use dispatch_nn::Module;

#[derive(Clone, Module)]
pub struct Regressor<B: Backend> {
    weight: Tensor<B>,
    #[module(skp)]
    width: usize,
}

fn main() {}
