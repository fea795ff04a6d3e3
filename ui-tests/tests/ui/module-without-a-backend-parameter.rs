use dispatch_core::backends::NdArray;
use dispatch_core::Tensor;
use dispatch_nn::Module;

#[derive(Clone, Module)]
pub struct Regressor {
    weight: Tensor<NdArray>,
}

fn main() {}
