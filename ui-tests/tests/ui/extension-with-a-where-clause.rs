use dispatch_core::{Backend, Result, extension};

/// A `where` clause on the trait is reported at the clause, not at the attribute.
#[extension]
pub trait Fused: Backend
where
    Self: Sized,
{
    fn twice(x: &Self::FloatTensor) -> Result<Self::FloatTensor>;
}

fn main() {}
