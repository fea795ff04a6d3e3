//! Collectives through MPI. Before any data moves, the ranks exchange what they are about to do (one small
//! all-gather), so a disagreement is an `Err` on every rank rather than undefined behaviour inside MPI.

use std::sync::Arc;

use ::mpi::Count;
use ::mpi::collective::SystemOperation;
use ::mpi::datatype::PartitionMut;
use ::mpi::topology::SimpleCommunicator;
use ::mpi::traits::{Communicator as _, CommunicatorCollectives, Equivalence, Root};

use super::world::MpiWorld;
use crate::backend::{HostTensor, HostValues};
use crate::distributed::collective::{Call, Collective, Operand, ReduceOp, check_agreement};
use crate::distributed::element::Element;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::memory;
use crate::shape::Shape;

/// Dimensions sent inside the fixed header; tensors with more take a second, variable-size exchange.
const INLINE_DIMS: usize = 6;
/// kind, parameter, the tensor's element type (0 for none), rank (number of dimensions), then the inline
/// dimensions.
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

    /// Runs `call` on `input`'s values in their own element type, with the matching MPI datatype.
    pub(crate) fn execute(&self, call: Call, input: HostTensor) -> Result<HostTensor> {
        let world_size = self.world_size();
        let collective = call.collective;
        let mut guard = self.world.lock();
        let channels = &mut *guard;
        let calls = exchange_calls(&channels.collectives, &call, world_size)?;
        check_agreement(&call, &calls)?;
        // A barrier is done: the exchange completes only once every rank has joined it.
        let Some(operand) = &call.operand else {
            return Ok(input);
        };
        let output_shape = collective.output_shape(&operand.shape, world_size)?;
        check_counts(collective, &operand.shape, &output_shape)?;
        let comm = &channels.collectives;
        let output_len = output_shape.num_elements();
        let values = match input.values {
            HostValues::F32(data) => {
                HostValues::F32(run(comm, &mut channels.scratch_f32, collective, data, output_len, world_size)?)
            }
            HostValues::F64(data) => {
                HostValues::F64(run(comm, &mut channels.scratch_f64, collective, data, output_len, world_size)?)
            }
        };
        Ok(HostTensor { values, shape: output_shape })
    }
}

/// The data phase of a collective the ranks agreed on, in `T`: this rank's output of `output_len` elements.
/// `scratch` is the reused receive buffer of `all_reduce` for `T`.
fn run<T: Element + Equivalence>(
    comm: &SimpleCommunicator,
    scratch: &mut Vec<T>,
    collective: Collective,
    data: Vec<T>,
    output_len: usize,
    world_size: usize,
) -> Result<Vec<T>> {
    Ok(match collective {
        Collective::AllReduce(op) => {
            let mut output = std::mem::take(scratch);
            if output.capacity() < data.len() {
                output = memory::try_vec("all_reduce", data.len())?;
            }
            output.resize(data.len(), T::default());
            comm.all_reduce_into(&data[..], &mut output[..], SystemOperation::sum());
            op.finish_sums(&mut output, world_size);
            *scratch = data;
            output
        }
        Collective::Broadcast { root } => {
            let mut data = data;
            comm.process_at_rank(mpi_count(root)?).broadcast_into(&mut data[..]);
            data
        }
        Collective::AllGather => {
            let mut output = memory::try_filled("all_gather", output_len, T::default())?;
            comm.all_gather_into(&data[..], &mut output[..]);
            output
        }
        Collective::ReduceScatter(op) => {
            let mut output = memory::try_filled("reduce_scatter", output_len, T::default())?;
            comm.reduce_scatter_block_into(&data[..], &mut output[..], SystemOperation::sum());
            op.finish_sums(&mut output, world_size);
            output
        }
        Collective::Barrier => data,
    })
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
    let own: Vec<u64> = call.operand.iter().flat_map(|operand| operand.shape.dims()).map(|&dim| dim as u64).collect();
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
    let dims = call.operand.as_ref().map(|operand| operand.shape.dims()).unwrap_or_default();
    let element = call.operand.as_ref().map_or(0, |operand| element_code(operand.dtype));
    let mut header = [0; HEADER];
    header[..4].copy_from_slice(&[kind, parameter, element, dims.len() as u64]);
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
    let operand = match element_dtype(header[2])? {
        Some(dtype) => {
            let shape = Shape::new(dims.iter().map(|&dim| to_usize(dim)).collect::<Result<Vec<_>>>()?);
            Some(Operand { shape, dtype })
        }
        None => None,
    };
    Ok(Call { collective, operand })
}

/// The element type in a header: 0 for a call without a tensor. Every dtype has a code, so a header says what
/// the call says (host values are only ever `f32` or `f64`).
fn element_code(dtype: DType) -> u64 {
    match dtype {
        DType::F32 => 1,
        DType::F64 => 2,
        DType::F16 => 3,
        DType::BF16 => 4,
    }
}

fn element_dtype(code: u64) -> Result<Option<DType>> {
    match code {
        0 => Ok(None),
        1 => Ok(Some(DType::F32)),
        2 => Ok(Some(DType::F64)),
        3 => Ok(Some(DType::F16)),
        4 => Ok(Some(DType::BF16)),
        other => Err(corrupt(format!("unknown element type code {other}"))),
    }
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
        let (f32s, f64s) = (HostValues::F32(Vec::new()), HostValues::F64(Vec::new()));
        let calls = [
            Call::with_tensor(Collective::AllReduce(ReduceOp::Mean), Shape::new([3, 0, 2]), &f32s),
            Call::with_tensor(Collective::Broadcast { root: 7 }, Shape::new([1]), &f64s),
            Call::without_tensor(Collective::Barrier),
        ];
        for call in calls {
            let header = encode(&call);
            let rank = header[3] as usize;
            assert_eq!(decode(&header, &header[4..4 + rank]).unwrap(), call);
        }
    }
}
