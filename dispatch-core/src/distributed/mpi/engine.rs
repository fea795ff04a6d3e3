//! Collectives through MPI. Before any data moves, the ranks exchange what they are about to do (one small
//! all-gather), so a disagreement is an `Err` on every rank rather than undefined behaviour inside MPI.

use std::sync::Arc;

use ::mpi::Count;
use ::mpi::collective::SystemOperation;
use ::mpi::datatype::PartitionMut;
use ::mpi::topology::SimpleCommunicator;
use ::mpi::traits::{Communicator as _, CommunicatorCollectives, Root};

use crate::backend::HostTensor;
use crate::distributed::collective::{Call, Collective, ReduceOp, check_agreement};
use crate::distributed::mpi::world::MpiWorld;
use crate::error::{Error, Result};
use crate::memory;
use crate::shape::Shape;

/// Dimensions sent inside the fixed header; tensors with more take a second, variable-size exchange.
const INLINE_DIMS: usize = 6;
/// kind, parameter, has a tensor, rank (number of dimensions), then the inline dimensions.
const HEADER: usize = 4 + INLINE_DIMS;
/// More dimensions than any real tensor has: a header claiming more is corrupt.
const MAX_DIMS: usize = 1024;

pub(crate) struct MpiEngine {
    world: Arc<MpiWorld>,
}

impl MpiEngine {
    pub(crate) fn new(world: Arc<MpiWorld>) -> Self {
        Self { world }
    }

    pub(crate) fn rank(&self) -> usize {
        self.world.rank()
    }

    pub(crate) fn world_size(&self) -> usize {
        self.world.size()
    }

    pub(crate) fn execute(
        &self,
        collective: Collective,
        shape: Option<Shape>,
        input: HostTensor,
    ) -> Result<HostTensor> {
        let world_size = self.world_size();
        let call = Call { collective, shape };
        let mut guard = self.world.lock();
        let channels = &mut *guard;
        let calls = exchange_calls(&channels.collectives, &call, world_size)?;
        check_agreement(&call, &calls)?;
        // A barrier is done: the exchange completes only once every rank has joined it.
        let Some(shape) = &call.shape else {
            return Ok(input);
        };
        let output_shape = collective.output_shape(shape, world_size)?;
        check_counts(collective, shape, &output_shape)?;
        let comm = &channels.collectives;
        let data = match collective {
            Collective::AllReduce(op) => {
                let mut output = std::mem::take(&mut channels.scratch);
                if output.capacity() < input.data.len() {
                    output = memory::try_vec("all_reduce", input.data.len())?;
                }
                output.resize(input.data.len(), 0.0);
                comm.all_reduce_into(&input.data[..], &mut output[..], SystemOperation::sum());
                op.finish_sums(&mut output, world_size);
                channels.scratch = input.data;
                output
            }
            Collective::Broadcast { root } => {
                let mut data = input.data;
                comm.process_at_rank(mpi_count(root)?).broadcast_into(&mut data[..]);
                data
            }
            Collective::AllGather => {
                let mut output = memory::try_filled("all_gather", output_shape.num_elements(), 0.0)?;
                comm.all_gather_into(&input.data[..], &mut output[..]);
                output
            }
            Collective::ReduceScatter(op) => {
                let mut output = memory::try_filled("reduce_scatter", output_shape.num_elements(), 0.0)?;
                comm.reduce_scatter_block_into(&input.data[..], &mut output[..], SystemOperation::sum());
                op.finish_sums(&mut output, world_size);
                output
            }
            Collective::Barrier => input.data,
        };
        Ok(HostTensor { data, shape: output_shape })
    }
}

/// Every rank's call, by rank.
fn exchange_calls(comm: &SimpleCommunicator, call: &Call, world_size: usize) -> Result<Vec<Call>> {
    let header = encode(call);
    let mut headers = vec![0_u64; HEADER * world_size];
    comm.all_gather_into(&header[..], &mut headers[..]);
    let ranks: Vec<usize> = headers.chunks(HEADER).map(|header| to_usize(header[3])).collect::<Result<_>>()?;
    if ranks.iter().any(|&rank| rank > MAX_DIMS) {
        let details = "a rank sent a corrupt collective header".to_owned();
        return Err(Error::CollectiveMismatch { op: call.collective.name(), details });
    }
    // Every rank sees the same headers, so all of them take the same branch.
    let dims: Vec<Vec<u64>> = if ranks.iter().all(|&rank| rank <= INLINE_DIMS) {
        headers.chunks(HEADER).zip(&ranks).map(|(header, &rank)| header[4..4 + rank].to_vec()).collect()
    } else {
        exchange_long_dims(comm, call, &ranks)?
    };
    headers.chunks(HEADER).zip(dims).map(|(header, dims)| decode(header, &dims)).collect()
}

fn exchange_long_dims(comm: &SimpleCommunicator, call: &Call, ranks: &[usize]) -> Result<Vec<Vec<u64>>> {
    let own: Vec<u64> = call.shape.iter().flat_map(|shape| shape.dims()).map(|&dim| dim as u64).collect();
    let counts: Vec<Count> = ranks.iter().map(|&rank| mpi_count(rank)).collect::<Result<_>>()?;
    let mut displacements = Vec::with_capacity(counts.len());
    let mut total: Count = 0;
    for &count in &counts {
        displacements.push(total);
        total = total.checked_add(count).ok_or_else(|| corrupt("the ranks' shapes have too many dimensions".into()))?;
    }
    let mut all = vec![0_u64; ranks.iter().sum()];
    comm.all_gather_varcount_into(&own[..], &mut PartitionMut::new(&mut all[..], counts, &displacements[..]));
    let mut rest = &all[..];
    Ok(ranks
        .iter()
        .map(|&rank| {
            let (dims, tail) = rest.split_at(rank);
            rest = tail;
            dims.to_vec()
        })
        .collect())
}

fn encode(call: &Call) -> [u64; HEADER] {
    let (kind, parameter) = match call.collective {
        Collective::AllReduce(op) => (1, reduce_code(op)),
        Collective::Broadcast { root } => (2, root as u64),
        Collective::AllGather => (3, 0),
        Collective::ReduceScatter(op) => (4, reduce_code(op)),
        Collective::Barrier => (5, 0),
    };
    let dims = call.shape.as_ref().map(Shape::dims).unwrap_or_default();
    let mut header = [0; HEADER];
    header[..4].copy_from_slice(&[kind, parameter, u64::from(call.shape.is_some()), dims.len() as u64]);
    for (slot, &dim) in header[4..].iter_mut().zip(dims) {
        *slot = dim as u64;
    }
    header
}

fn decode(header: &[u64], dims: &[u64]) -> Result<Call> {
    let parameter = header[1];
    let collective = match header[0] {
        1 => Collective::AllReduce(reduce_op(parameter)?),
        2 => Collective::Broadcast { root: to_usize(parameter)? },
        3 => Collective::AllGather,
        4 => Collective::ReduceScatter(reduce_op(parameter)?),
        5 => Collective::Barrier,
        other => return Err(corrupt(format!("unknown collective code {other}"))),
    };
    let shape = if header[2] == 1 {
        Some(Shape::new(dims.iter().map(|&dim| to_usize(dim)).collect::<Result<Vec<_>>>()?))
    } else {
        None
    };
    Ok(Call { collective, shape })
}

fn reduce_code(op: ReduceOp) -> u64 {
    match op {
        ReduceOp::Sum => 0,
        ReduceOp::Mean => 1,
    }
}

fn reduce_op(code: u64) -> Result<ReduceOp> {
    match code {
        0 => Ok(ReduceOp::Sum),
        1 => Ok(ReduceOp::Mean),
        other => Err(corrupt(format!("unknown reduce op code {other}"))),
    }
}

/// MPI counts are C `int`s; larger buffers are an error on every rank (they all see the same shapes).
fn check_counts(collective: Collective, input: &Shape, output: &Shape) -> Result<()> {
    let largest = if output.num_elements() > input.num_elements() { output } else { input };
    mpi_count(largest.num_elements()).map(drop).map_err(|_| Error::ShapeTooLarge {
        op: collective.name(),
        shape: largest.clone(),
        // A positive `i32`: lossless.
        max: Count::MAX as usize,
    })
}

fn mpi_count(value: usize) -> Result<Count> {
    Count::try_from(value).map_err(|_| corrupt(format!("{value} does not fit an MPI count")))
}

fn to_usize(value: u64) -> Result<usize> {
    usize::try_from(value).map_err(|_| corrupt(format!("{value} does not fit this machine's usize")))
}

fn corrupt(reason: String) -> Error {
    // What another rank sent, in no form this engine writes: no argument of the caller, so no structured variant.
    Error::invalid("mpi", reason)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_round_trip() {
        let calls = [
            Call { collective: Collective::AllReduce(ReduceOp::Mean), shape: Some(Shape::new([3, 0, 2])) },
            Call { collective: Collective::Broadcast { root: 7 }, shape: Some(Shape::new([1])) },
            Call { collective: Collective::Barrier, shape: None },
        ];
        for call in calls {
            let header = encode(&call);
            let rank = header[3] as usize;
            assert_eq!(decode(&header, &header[4..4 + rank]).unwrap(), call);
        }
    }
}
