//! `Rank<D>`: what SPMD work receives, one per rank: its local device and its collectives.

use std::fmt;
use std::ops::Range;

use crate::backend::Backend;
use crate::device::Dispatch;
use crate::distributed::collective::ReduceOp;
use crate::distributed::communicator::Communicator;
use crate::error::Result;
use crate::tensor::Tensor;

/// One rank of a run: its local device (single-backend work runs on it) and the collectives of its group.
pub struct Rank<D: Dispatch> {
    device: D::Local,
    communicator: Communicator,
}

impl<D: Dispatch> Rank<D> {
    pub(crate) fn new(device: D::Local, communicator: Communicator) -> Self {
        Self { device, communicator }
    }

    /// This rank's index, `0..world_size()`.
    pub fn index(&self) -> usize {
        self.communicator.rank()
    }

    /// The number of ranks in the group, in every process.
    pub fn world_size(&self) -> usize {
        self.communicator.world_size()
    }

    /// Rank 0, the conventional place to print or save from.
    pub fn is_root(&self) -> bool {
        self.index() == 0
    }

    /// The local device this rank computes on.
    pub fn device(&self) -> &D::Local {
        &self.device
    }

    /// The collectives without the device, e.g. to hand to code that works on host buffers.
    pub fn communicator(&self) -> &Communicator {
        &self.communicator
    }

    /// The part of `len` items (e.g. the rows of a batch) this rank handles; see [`Communicator::shard_range`].
    pub fn shard_range(&self, len: usize) -> Range<usize> {
        self.communicator.shard_range(len)
    }

    /// See [`Communicator::all_reduce`].
    pub fn all_reduce<B: Backend>(&self, tensor: &Tensor<B>, op: ReduceOp) -> Result<Tensor<B>> {
        self.communicator.all_reduce(tensor, op)
    }

    /// See [`Communicator::broadcast`].
    pub fn broadcast<B: Backend>(&self, tensor: &Tensor<B>, root: usize) -> Result<Tensor<B>> {
        self.communicator.broadcast(tensor, root)
    }

    /// See [`Communicator::all_gather`].
    pub fn all_gather<B: Backend>(&self, tensor: &Tensor<B>) -> Result<Tensor<B>> {
        self.communicator.all_gather(tensor)
    }

    /// See [`Communicator::reduce_scatter`].
    pub fn reduce_scatter<B: Backend>(&self, tensor: &Tensor<B>, op: ReduceOp) -> Result<Tensor<B>> {
        self.communicator.reduce_scatter(tensor, op)
    }

    /// See [`Communicator::barrier`].
    pub fn barrier(&self) -> Result<()> {
        self.communicator.barrier()
    }
}

impl<D: Dispatch> fmt::Debug for Rank<D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Rank")
            .field("index", &self.index())
            .field("world_size", &self.world_size())
            .field("device", &self.device)
            .finish()
    }
}
