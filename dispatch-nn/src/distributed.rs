//! Data-parallel training: each rank's gradients of a module, reduced over the ranks of a group.

use dispatch_core::distributed::{Communicator, ReduceOp};
use dispatch_core::{AutodiffBackend, Gradients, Result};

use crate::ModuleExt;

/// The gradient of every parameter of `module` in `gradients`, reduced by `op` over every rank of `communicator`
/// (which every rank calls alike, with the same module): with `ReduceOp::Mean` over equal shards of a batch, the
/// gradients of the whole batch, so every rank takes the same optimizer step. Parameters without a gradient are
/// left out on every rank alike.
pub fn all_reduce_gradients<B: AutodiffBackend, M: ModuleExt<B>>(
    module: &M,
    gradients: &Gradients<B>,
    communicator: &Communicator,
    op: ReduceOp,
) -> Result<Gradients<B>> {
    let mut reduced = Gradients::new();
    for (_, param) in module.params()? {
        let (Some(id), Some(gradient)) = (param.id(), param.grad(gradients)) else { continue };
        reduced.insert(id, communicator.all_reduce(&gradient, op)?.into_primitive());
    }
    Ok(reduced)
}
