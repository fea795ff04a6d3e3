use dispatch_core::{Backend, Result, extension};

/// A `where` clause on an op is reported at the clause, not at the attribute.
#[extension]
pub trait Fused: Backend {
    fn twice(x: &Self::FloatTensor) -> Result<Self::FloatTensor>
    where
        Self: Sized;
}

fn main() {}
