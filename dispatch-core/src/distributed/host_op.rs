//! Collectives as [`HostOp`]s, so `Autodiff` records their backward and gradients flow across ranks, and the
//! tensor collectives of [`Communicator`] that run them.

use std::sync::Arc;

use crate::backend::{Backend, HostOp, HostTensor};
use crate::distributed::collective::{Collective, ReduceOp};
use crate::distributed::communicator::Communicator;
use crate::error::Result;
use crate::tensor::Tensor;

/// The tensor collectives: each runs on the tensor's values in host memory through [`Tensor::host_op`], in the
/// element type that holds the tensor's dtype exactly (`f64` for `F64`, `f32` for the others), and the result is
/// rounded once, to the tensor's dtype: an `F64` tensor is reduced in `f64`, an `F32` one moves only `f32`. Every
/// rank passes tensors of one element type, as of one shape.
impl Communicator {
    /// Every rank gets the sum (or mean) of every rank's tensor. Backward: the gradient is all-reduced with the
    /// same op.
    pub fn all_reduce<B: Backend>(&self, tensor: &Tensor<B>, op: ReduceOp) -> Result<Tensor<B>> {
        self.tensor_collective(tensor, Collective::AllReduce(op))
    }

    /// Every rank gets rank `root`'s tensor (every rank passes a tensor of the same shape). Backward: the
    /// gradients of all ranks are summed onto the root; the others get zero.
    pub fn broadcast<B: Backend>(&self, tensor: &Tensor<B>, root: usize) -> Result<Tensor<B>> {
        self.tensor_collective(tensor, Collective::Broadcast { root })
    }

    /// Every rank gets the ranks' tensors concatenated along axis 0, in rank order. Backward: a reduce-scatter
    /// (sum) of the gradients.
    pub fn all_gather<B: Backend>(&self, tensor: &Tensor<B>) -> Result<Tensor<B>> {
        self.tensor_collective(tensor, Collective::AllGather)
    }

    /// The sum (or mean) of every rank's tensor, split along axis 0 into equal parts; this rank gets its part.
    /// Backward: an all-gather of the gradients (divided by the world size for `Mean`).
    pub fn reduce_scatter<B: Backend>(&self, tensor: &Tensor<B>, op: ReduceOp) -> Result<Tensor<B>> {
        self.tensor_collective(tensor, Collective::ReduceScatter(op))
    }

    fn tensor_collective<B: Backend>(&self, tensor: &Tensor<B>, collective: Collective) -> Result<Tensor<B>> {
        tensor.host_op(Arc::new(CollectiveOp::new(self.clone(), collective)))
    }
}

struct CollectiveOp {
    communicator: Communicator,
    collective: Collective,
}

impl CollectiveOp {
    fn new(communicator: Communicator, collective: Collective) -> Self {
        Self { communicator, collective }
    }
}

impl HostOp for CollectiveOp {
    fn name(&self) -> &'static str {
        self.collective.name()
    }

    fn forward(&self, input: HostTensor) -> Result<HostTensor> {
        self.communicator.execute(self.collective, input)
    }

    /// The vector-Jacobian product of the collective, taking the global objective to be the sum of every rank's
    /// loss. Each one is itself a collective, so every rank runs it in the same order during `backward()`.
    fn backward(&self, grad_output: HostTensor) -> Result<HostTensor> {
        let communicator = &self.communicator;
        match self.collective {
            // y = op(x_0, .., x_n) on every rank, so dL/dx_r = op(dL_0/dy, .., dL_n/dy).
            Collective::AllReduce(op) => communicator.execute(Collective::AllReduce(op), grad_output),
            // Only the root's input reaches the outputs, each of them once.
            Collective::Broadcast { root } => {
                let summed = communicator.execute(Collective::AllReduce(ReduceOp::Sum), grad_output)?;
                if communicator.rank() == root { Ok(summed) } else { Ok(summed.map(|_| 0.0)) }
            }
            // Rank r's input is part r of every rank's output.
            Collective::AllGather => communicator.execute(Collective::ReduceScatter(ReduceOp::Sum), grad_output),
            // Part r of the reduction is rank r's output, so every rank's input gets every part's gradient,
            // scaled as the forward scaled the sum.
            Collective::ReduceScatter(op) => {
                let mut gathered = communicator.execute(Collective::AllGather, grad_output)?;
                op.finish_values(&mut gathered.values, communicator.world_size());
                Ok(gathered)
            }
            // Carries no tensor; never recorded, but the identity is its honest derivative.
            Collective::Barrier => Ok(grad_output),
        }
    }
}
