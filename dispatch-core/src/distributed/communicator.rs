//! `Communicator`: one rank's handle on its group, the same API over every engine.

use std::fmt;
use std::ops::Range;
use std::sync::Arc;

use crate::backend::HostTensor;
use crate::distributed::collective::{Call, Collective, split_range};
use crate::distributed::in_process::InProcessEngine;
#[cfg(feature = "mpi")]
use crate::distributed::mpi::MpiEngine;
use crate::error::Result;

/// One rank's handle on its group: its index, the group's size, and the collectives.
///
/// Tensor collectives (in `host_op.rs`) go through [`Tensor::host_op`](crate::Tensor::host_op), so under an
/// autodiff backend they are differentiable:
/// their backward is itself a collective, run during `backward()`, so every rank must call `backward()` on
/// graphs of the same structure.
#[derive(Clone)]
pub struct Communicator {
    engine: Engine,
}

#[derive(Clone)]
enum Engine {
    /// A world of one: every collective is the identity (after the same argument checks as a real group).
    Solo,
    InProcess(Arc<InProcessEngine>),
    #[cfg(feature = "mpi")]
    Mpi(Arc<MpiEngine>),
}

impl Communicator {
    pub(crate) fn solo() -> Self {
        Self { engine: Engine::Solo }
    }

    pub(crate) fn in_process(engine: InProcessEngine) -> Self {
        Self { engine: Engine::InProcess(Arc::new(engine)) }
    }

    #[cfg(feature = "mpi")]
    pub(crate) fn mpi(engine: MpiEngine) -> Self {
        Self { engine: Engine::Mpi(Arc::new(engine)) }
    }

    /// This rank's index, `0..world_size()`.
    pub fn rank(&self) -> usize {
        match &self.engine {
            Engine::Solo => 0,
            Engine::InProcess(engine) => engine.rank(),
            #[cfg(feature = "mpi")]
            Engine::Mpi(engine) => engine.rank(),
        }
    }

    /// The number of ranks in the group.
    pub fn world_size(&self) -> usize {
        match &self.engine {
            Engine::Solo => 1,
            Engine::InProcess(engine) => engine.world_size(),
            #[cfg(feature = "mpi")]
            Engine::Mpi(engine) => engine.world_size(),
        }
    }

    /// The part of `len` items (e.g. the rows of a batch) this rank handles: contiguous, in rank order, sizes
    /// differing by at most one.
    pub fn shard_range(&self, len: usize) -> Range<usize> {
        split_range(len, self.world_size(), self.rank())
    }

    /// Returns once every rank has called it.
    pub fn barrier(&self) -> Result<()> {
        let nothing = HostTensor::new(Vec::<f32>::new(), [0]);
        self.run_collective(Call::without_tensor(Collective::Barrier), nothing).map(drop)
    }

    // ---- host memory --------------------------------------------------------------------------------------------

    /// Runs a collective on values in host memory: what the tensor collectives do after copying the tensor to
    /// the host, for code that holds plain buffers. The collective runs in the values' element type (`f64`
    /// values are summed in `f64`), which every rank must share, as it shares the shape.
    pub fn execute(&self, collective: Collective, input: HostTensor) -> Result<HostTensor> {
        // Rejects host data that does not fill its shape, before any rank waits on it.
        input.shape.check_data_len(collective.name(), input.values.len())?;
        let call = Call::with_tensor(collective, input.shape.clone(), &input.values);
        self.run_collective(call, input)
    }

    fn run_collective(&self, call: Call, input: HostTensor) -> Result<HostTensor> {
        match &self.engine {
            Engine::Solo => {
                // The same argument checks as a real group, so code that passes here passes on a cluster.
                let output_shape = match &call.operand {
                    Some(operand) => call.collective.output_shape(&operand.shape, 1)?,
                    None => input.shape,
                };
                Ok(HostTensor { values: input.values, shape: output_shape })
            }
            Engine::InProcess(engine) => engine.execute(call, input),
            #[cfg(feature = "mpi")]
            Engine::Mpi(engine) => engine.execute(call, input),
        }
    }
}

impl fmt::Debug for Communicator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let engine = match &self.engine {
            Engine::Solo => "solo",
            Engine::InProcess(_) => "in-process",
            #[cfg(feature = "mpi")]
            Engine::Mpi(_) => "mpi",
        };
        f.debug_struct("Communicator")
            .field("engine", &engine)
            .field("rank", &self.rank())
            .field("world_size", &self.world_size())
            .finish()
    }
}
