//! Running SPMD work on an in-process group: one thread per rank, rank 0 on the caller's thread.

use std::any::Any;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use super::engine::InProcessEngine;
use crate::distributed::communicator::Communicator;
use crate::distributed::in_process::rendezvous::{Ending, Group};
use crate::error::{Error, Result};

/// Runs `work` once per rank, each on its own thread with a fresh group (so a failed run leaves nothing behind
/// for the next), and returns every rank's result by rank.
pub(crate) fn run<T, F>(world_size: usize, timeout: Duration, work: F) -> Vec<Result<T>>
where
    F: Fn(Communicator) -> Result<T> + Sync,
    T: Send,
{
    let group = Arc::new(Group::new(world_size, timeout));
    let (group, work) = (&group, &work);
    thread::scope(|scope| {
        let spawned: Vec<_> = (1..world_size)
            .map(|rank| {
                let spawned = thread::Builder::new()
                    .name(format!("dispatch-rank-{rank}"))
                    .spawn_scoped(scope, move || run_rank(group, rank, work));
                if let Err(error) = &spawned {
                    group.end(rank, Ending::Failed(format!("could not start its thread: {error}")));
                }
                (rank, spawned)
            })
            .collect();
        let mut results = Vec::with_capacity(world_size);
        results.push(run_rank(group, 0, work));
        for (rank, spawned) in spawned {
            results.push(match spawned {
                // `run_rank` catches panics, so joining fails only if the runtime itself does.
                Ok(handle) => handle.join().unwrap_or_else(|payload| Err(panicked(rank, payload.as_ref()))),
                Err(error) => Err(Error::EngineUnavailable {
                    engine: "in-process",
                    reason: format!("could not start the thread of rank {rank}: {error}"),
                }),
            });
        }
        results
    })
}

fn run_rank<T, F>(group: &Arc<Group>, rank: usize, work: &F) -> Result<T>
where
    F: Fn(Communicator) -> Result<T>,
{
    let communicator = Communicator::in_process(InProcessEngine::new(Arc::clone(group), rank));
    let result =
        catch_unwind(AssertUnwindSafe(|| work(communicator))).unwrap_or_else(|payload| Err(panicked(rank, &*payload)));
    let ending = match &result {
        Ok(_) => Ending::Finished,
        Err(Error::RankPanicked { message, .. }) => Ending::Failed(format!("panicked: {message}")),
        Err(error) => Ending::Failed(format!("returned an error: {error}")),
    };
    group.end(rank, ending);
    result
}

fn panicked(rank: usize, payload: &(dyn Any + Send)) -> Error {
    let message = payload
        .downcast_ref::<&str>()
        .map(|message| (*message).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic with a non-string payload".to_owned());
    Error::RankPanicked { rank, message }
}
