use std::marker::PhantomData;

use dispatch_core::Backend;
use dispatch_nn::Module;

#[derive(Module)]
pub union Weights<B: Backend> {
    bits: u32,
    marker: PhantomData<B>,
}

fn main() {}
