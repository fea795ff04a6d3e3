//! The multi-machine engine: one process per rank, started by `mpirun`, collectives through Open MPI (the `mpi`
//! crate). Behind the cargo feature `mpi`; what is here without it only tells whether MPI is usable.

#[cfg(feature = "mpi")]
mod engine;
#[cfg(feature = "mpi")]
mod run;
#[cfg(feature = "mpi")]
mod world;

#[cfg(feature = "mpi")]
pub(crate) use engine::MpiEngine;
#[cfg(feature = "mpi")]
pub(crate) use run::run_rank;
#[cfg(feature = "mpi")]
pub use world::MpiWorld;

/// Whether dispatch-core was built with its `mpi` feature, i.e. whether the MPI engine (`DistributedDevice::mpi`,
/// `mpi` cluster specs) is compiled in.
///
/// Ask this rather than a feature of your own crate: Cargo unifies features across a build, so dispatch-core may
/// have MPI because another crate (or `--features dispatch-core/mpi`) asked for it while your feature is off.
/// Without MPI, a cluster spec of the `mpi` form is a parse error that names the missing feature.
pub const ENABLED: bool = cfg!(feature = "mpi");

/// Whether this process was started by an MPI launcher (`mpirun`/`mpiexec` of Open MPI, or a PMI launcher such
/// as Hydra or Slurm). Tests and examples use it to run the MPI engine only when a launcher set up the world.
pub fn launched_by_mpirun() -> bool {
    ["OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_SIZE", "PMI_RANK"].iter().any(|name| std::env::var_os(name).is_some())
}
