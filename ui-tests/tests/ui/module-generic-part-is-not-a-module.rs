use dispatch_core::backends::NdArray;
use dispatch_core::{Backend, Result, Tensor};
use dispatch_nn::{Module, record};

#[derive(Clone, Module)]
pub struct Stack<B: Backend, M> {
    parts: Vec<M>,
    head: Tensor<B>,
}

fn save(stack: &Stack<NdArray, usize>) -> Result<()> {
    record::save(stack, "stack.safetensors")
}

fn main() {}
