//! Entry points for SPMD work: any derived device, or a bare group of communicators.

use std::time::Duration;

use crate::device::{Dispatch, DistributedOf, Route};
use crate::distributed::communicator::Communicator;
use crate::distributed::in_process;
use crate::distributed::rank::Rank;
use crate::distributed::results::RankResults;
use crate::error::{Error, Result};

/// Runs `work` on any device of a derived enum: on every rank of a distributed device (see
/// [`crate::DistributedDevice::run`]), or once on a local device, as a world of one where every collective is
/// the identity. The same training code thus runs on one device or on a cluster.
pub fn run<D, T, F>(device: &D, work: F) -> RankResults<T>
where
    D: Dispatch,
    F: Fn(Rank<D>) -> Result<T> + Sync,
    T: Send,
{
    match device.route() {
        Route::Local(local) => RankResults::new(vec![(0, work(Rank::new(local, Communicator::solo())))]),
        Route::Distributed(cluster) => cluster.as_distributed().run(work),
    }
}

/// Runs `work` on `world_size` in-process ranks (threads), handing each its [`Communicator`]: the engine under
/// [`crate::DistributedDevice`], for code that holds no derived device (host buffers, a single backend).
pub fn run_in_process<T, F>(world_size: usize, timeout: Duration, work: F) -> Result<RankResults<T>>
where
    F: Fn(Communicator) -> Result<T> + Sync,
    T: Send,
{
    if world_size == 0 {
        return Err(Error::invalid_value(
            "run_in_process",
            "world_size",
            world_size,
            "at least 1: a group needs a rank",
        ));
    }
    let results = in_process::run(world_size, timeout, work);
    Ok(RankResults::new(results.into_iter().enumerate().collect()))
}
