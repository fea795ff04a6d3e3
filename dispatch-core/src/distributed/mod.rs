//! Distributed devices: a group of ranks, each a local device of a derived enum, and the collectives that
//! data-parallel training needs (`all_reduce`, `broadcast`, `all_gather`, `reduce_scatter`, `barrier`).
//!
//! Two engines run one API. By default ranks are threads of this process reducing through shared memory; with
//! the cargo feature `mpi`, each rank is a process started by `mpirun` and collectives go through Open MPI
//! ([`mpi::ENABLED`] tells whether it is compiled in).
//!
//! Faults are not handled alike, because MPI cannot cancel a collective. In-process, a rank that fails (an `Err`,
//! a panic, a collective timeout) is an `Err` in its result and in every other rank's pending and later
//! collectives, and `run` returns every rank's result, unless some rank's work never returns. Under MPI,
//! disagreeing calls are an `Err` on every rank, but a panic, or a failure that leaves a peer waiting in a
//! collective, aborts the whole job, and a rank stuck in user code can hold the job until the launcher ends it.
//! [`DistributedDevice::run`] gives the exact rules for each engine.

mod collective;
mod communicator;
mod device;
mod element;
mod host_op;
mod in_process;
pub mod mpi;
mod rank;
mod results;
mod spmd;

pub use crate::device::{DistributedDevice, DistributedOf};
pub use collective::{Collective, ReduceOp};
pub use communicator::Communicator;
pub use device::DEFAULT_TIMEOUT;
pub use rank::Rank;
pub use results::RankResults;
pub use spmd::{run, run_in_process};
