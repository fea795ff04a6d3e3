use dispatch_core::{Backend, Result, extension};

/// Every way an op can fail to be dispatchable, each reported at once, at its own tokens.
#[extension]
pub trait Broken: Backend {
    type Scratch;

    fn with_receiver(&self, x: &Self::FloatTensor) -> Result<Self::FloatTensor>;

    fn without_a_result(x: &Self::FloatTensor) -> Self::FloatTensor;

    fn without_an_operand(count: usize) -> Result<usize>;

    fn generic<T: Clone>(x: &Self::FloatTensor, extra: T) -> Result<Self::FloatTensor>;

    fn borrowing(x: &Self::FloatTensor, axes: &[usize]) -> Result<Self::FloatTensor>;

    fn device_first(device: &Self::Device, x: &Self::FloatTensor) -> Result<Self::FloatTensor>;

    fn other_self_type(x: &Self::FloatTensor, gradients: Vec<Self::FloatTensor>) -> Result<Self::FloatTensor>;

    fn slice_after_a_tensor(x: &Self::FloatTensor, parts: &[Self::FloatTensor]) -> Result<Self::FloatTensor>;
}

fn main() {}
