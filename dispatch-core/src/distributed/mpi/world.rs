//! The MPI world of this process: initialised once, finalised when the last handle goes away.

use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};

use ::mpi::Threading;
use ::mpi::environment::Universe;
use ::mpi::topology::SimpleCommunicator;
use ::mpi::traits::Communicator as _;

use crate::error::{Error, Result};

/// The MPI world of this process. Get it with [`MpiWorld::get`]; MPI is finalised when the last `Arc` to it
/// (including those inside MPI devices) is dropped, and MPI cannot be initialised twice in one process.
pub struct MpiWorld {
    rank: usize,
    size: usize,
    channels: Mutex<Channels>,
    // Declared last so it drops last: finalising MPI must come after freeing the communicators above.
    _universe: Universe,
}

/// The MPI state every call goes through, one call at a time.
pub(crate) struct Channels {
    /// A duplicate of the world communicator, so user code that also uses MPI cannot interleave with ours.
    pub collectives: SimpleCommunicator,
    /// A second duplicate for the end-of-run check, which may overlap a peer's blocked collective.
    pub epilogue: SimpleCommunicator,
    /// Reused as the receive buffer of `all_reduce` of `f32` values, so steady-state training allocates nothing.
    pub scratch_f32: Vec<f32>,
    /// As `scratch_f32`, for `f64` values.
    pub scratch_f64: Vec<f64>,
}

// SAFETY: `SimpleCommunicator` holds an MPI handle (an opaque pointer in Open MPI) that MPI lets any thread use
// as long as calls are serialised; MPI is initialised with at least `Threading::Serialized`, and every use goes
// through the `Mutex` in `MpiWorld`.
unsafe impl Send for Channels {}

static WORLD: Mutex<Weak<MpiWorld>> = Mutex::new(Weak::new());

impl MpiWorld {
    /// The MPI world of this process, initialising MPI on first use.
    pub fn get() -> Result<Arc<Self>> {
        let mut slot = WORLD.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(world) = slot.upgrade() {
            return Ok(world);
        }
        if ::mpi::environment::is_finalized() {
            return Err(unavailable(
                "MPI was finalised when the last MPI handle of this process was dropped, and MPI cannot be \
                 initialised twice; keep an MPI device (or `MpiWorld`) alive while the program uses MPI",
            ));
        }
        let Some((universe, threading)) = ::mpi::initialize_with_threading(Threading::Serialized) else {
            return Err(unavailable("MPI was already initialised by other code in this process"));
        };
        if matches!(threading, Threading::Single | Threading::Funneled) {
            return Err(unavailable(format!(
                "this MPI library supports only {threading:?} threading; dispatch needs Serialized or Multiple"
            )));
        }
        let world = universe.world();
        let (rank, size) = (usize::try_from(world.rank()), usize::try_from(world.size()));
        let (Ok(rank), Ok(size)) = (rank, size) else {
            return Err(unavailable("MPI reported a negative rank or size"));
        };
        let channels = Channels {
            collectives: world.duplicate(),
            epilogue: world.duplicate(),
            scratch_f32: Vec::new(),
            scratch_f64: Vec::new(),
        };
        let world = Arc::new(Self { rank, size, channels: Mutex::new(channels), _universe: universe });
        *slot = Arc::downgrade(&world);
        Ok(world)
    }

    /// This process's rank.
    pub fn rank(&self) -> usize {
        self.rank
    }

    /// The number of processes in the world.
    pub fn size(&self) -> usize {
        self.size
    }

    pub(crate) fn lock(&self) -> MutexGuard<'_, Channels> {
        // A panic while the lock was held happened outside MPI calls (they do not unwind), so the state is whole.
        self.channels.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

fn unavailable(reason: impl Into<String>) -> Error {
    Error::EngineUnavailable { engine: "mpi", reason: reason.into() }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Run by `.ci/mpi` in a process of its own (MPI starts once per process); skipped when not started by
    /// `mpirun`, or a failure if `DISPATCH_REQUIRE_MPI` is set.
    #[test]
    fn mpi_started_by_the_program_itself_is_unavailable_to_dispatch() {
        if !crate::distributed::mpi::launched_by_mpirun() {
            assert!(
                std::env::var_os("DISPATCH_REQUIRE_MPI").is_none(),
                "DISPATCH_REQUIRE_MPI is set: run under mpirun"
            );
            eprintln!("mpi_started_by_the_program_itself_is_unavailable_to_dispatch: SKIPPED, not started by mpirun");
            return;
        }
        // The program's own MPI set-up, made before dispatch asks for the world.
        let Some(_programs_own) = ::mpi::initialize() else {
            panic!("MPI was already initialised in this test process; run this test on its own");
        };
        let Err(error) = MpiWorld::get() else {
            panic!("dispatch took over an MPI world that the program itself had initialised");
        };
        assert!(matches!(error, Error::EngineUnavailable { engine: "mpi", .. }), "{error}");
        assert!(error.to_string().contains("already initialised by other code"), "{error}");
    }
}
