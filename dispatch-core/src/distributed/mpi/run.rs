//! Running one rank's work under MPI, and ending the job rather than hanging when ranks cannot finish together.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use ::mpi::traits::{Communicator as _, CommunicatorCollectives};

use super::engine::MpiEngine;
use super::world::MpiWorld;
use crate::distributed::communicator::Communicator;
use crate::distributed::results::RankResults;
use crate::error::Result;

/// Exit code passed to `MPI_Abort`, so a job ended by dispatch is recognisable.
const ABORT_CODE: i32 = 86;
/// How often a finished rank checks whether its peers have finished too.
const POLL: Duration = Duration::from_millis(1);

impl MpiWorld {
    /// Runs `work` once, for this process's rank, with its [`crate::distributed::Communicator`]: the engine
    /// under MPI devices, for code that holds no derived device. Failure handling as in
    /// [`crate::DistributedDevice::run`].
    pub fn run<T>(self: &Arc<Self>, timeout: Duration, work: impl FnOnce(Communicator) -> Result<T>) -> RankResults<T> {
        RankResults::new(vec![(self.rank(), run_rank(self, timeout, work))])
    }
}

/// Runs `work` for this process's rank, then waits (up to `timeout`) for every rank to finish its work.
///
/// MPI cannot cancel a collective, so a peer blocked in one can only be released by ending the job: if this
/// rank's work panics, or the others do not all finish within `timeout`, the job is aborted with a message.
pub(crate) fn run_rank<T>(
    world: &Arc<MpiWorld>,
    timeout: Duration,
    work: impl FnOnce(Communicator) -> Result<T>,
) -> Result<T> {
    let rank = world.rank();
    let communicator = Communicator::mpi(MpiEngine::new(Arc::clone(world)));
    let result = match catch_unwind(AssertUnwindSafe(|| work(communicator))) {
        Ok(result) => result,
        Err(_) => abort(world, &format!("rank {rank} panicked (message above)")),
    };
    if !finish_together(world, timeout) {
        let outcome = match &result {
            Ok(_) => "finished its work".to_owned(),
            Err(error) => format!("failed: {error}"),
        };
        abort(world, &format!("rank {rank} {outcome}, but the other ranks did not finish theirs within {timeout:?}"));
    }
    result
}

/// Whether every rank reached the end of its work within `timeout`, waited for with a non-blocking barrier on a
/// communicator of its own (a peer may still be blocked in a collective on the main one).
fn finish_together(world: &MpiWorld, timeout: Duration) -> bool {
    // A timeout too long to represent (e.g. `Duration::MAX`) means waiting without one.
    let deadline = Instant::now().checked_add(timeout);
    let mut request = world.lock().epilogue.immediate_barrier();
    loop {
        // Locked per test, so the process's other threads are not shut out of MPI while this rank waits.
        let tested = {
            let _serialised = world.lock();
            request.test()
        };
        request = match tested {
            Ok(_) => return true,
            Err(pending) => pending,
        };
        if deadline.is_some_and(|deadline| Instant::now() >= deadline) {
            // The request cannot be completed or dropped (rsmpi panics on dropping a pending request); the job
            // is about to be aborted, so it is left to the process's end.
            std::mem::forget(request);
            return false;
        }
        thread::sleep(POLL);
    }
}

fn abort(world: &MpiWorld, why: &str) -> ! {
    eprintln!("dispatch: {why}; aborting the MPI job so that no rank waits forever");
    world.lock().epilogue.abort(ABORT_CODE)
}
