//! Distributed devices: a group of ranks, each a local device of a derived enum, and the collectives that
//! data-parallel training needs (`all_reduce`, `broadcast`, `all_gather`, `reduce_scatter`, `barrier`).
//!
//! Two engines run one API. By default ranks are threads of this process reducing through shared memory; with
//! the cargo feature `mpi`, each rank is a process started by `mpirun` and collectives go through Open MPI.

mod collective;
mod communicator;
mod device;
mod host_op;
mod in_process;
pub mod mpi;
mod rank;
mod results;
mod spmd;

pub use collective::{Collective, ReduceOp};
pub use communicator::Communicator;
pub use device::{DEFAULT_TIMEOUT, DistributedDevice, DistributedOf};
pub use rank::Rank;
pub use results::RankResults;
pub use spmd::{run, run_in_process};
