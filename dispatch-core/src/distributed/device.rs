//! The device a `#[distributed]` variant holds: its constructors, `run`, and its impls. The type itself is defined
//! in `device.rs`, beside `Dispatch`, which names it.

use std::fmt::{self, Debug, Display};
use std::ops::Range;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use crate::device::{Dispatch, DistributedDevice, EngineSpec, GroupSpec, ParseDeviceError};
use crate::device_name;
use crate::distributed::in_process;
#[cfg(feature = "mpi")]
use crate::distributed::mpi::MpiWorld;
use crate::distributed::rank::Rank;
use crate::distributed::results::RankResults;
use crate::error::{Error, Result};

/// How long a rank waits for the others to join a collective before the run fails, unless set with
/// [`DistributedDevice::with_timeout`].
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

impl<D: Dispatch> DistributedDevice<D> {
    /// Ranks that are threads of this process, one per device in `ranks`.
    pub fn in_process(ranks: Vec<D::Local>) -> Result<Self> {
        if ranks.is_empty() {
            let expected = "at least 1: a group needs a rank";
            return Err(Error::invalid_value("DistributedDevice::in_process", "ranks.len()", 0usize, expected));
        }
        Ok(Self::from_engine(EngineSpec::InProcess { ranks }))
    }

    /// This process's rank of the MPI world started by `mpirun`, computing on `local`. Initialises MPI on first
    /// use; MPI is finalised when the last MPI device of the process is dropped, and cannot be initialised again.
    #[cfg(feature = "mpi")]
    pub fn mpi(local: D::Local) -> Result<Self> {
        let world = MpiWorld::get()?;
        Ok(Self::from_engine(EngineSpec::Mpi { local, world }))
    }

    fn from_engine(engine: EngineSpec<D>) -> Self {
        Self { group: Arc::new(GroupSpec { engine, timeout: DEFAULT_TIMEOUT }) }
    }

    /// The same group, whose ranks wait at most `timeout` for each other in a collective (in-process), or at
    /// the end of a run (MPI, see [`DistributedDevice::run`]).
    pub fn with_timeout(&self, timeout: Duration) -> Self {
        let engine = match &self.group.engine {
            EngineSpec::InProcess { ranks } => EngineSpec::InProcess { ranks: ranks.clone() },
            #[cfg(feature = "mpi")]
            EngineSpec::Mpi { local, world } => EngineSpec::Mpi { local: local.clone(), world: Arc::clone(world) },
        };
        Self { group: Arc::new(GroupSpec { engine, timeout }) }
    }

    /// How long ranks wait for each other; [`DEFAULT_TIMEOUT`] unless set with [`DistributedDevice::with_timeout`].
    pub fn timeout(&self) -> Duration {
        self.group.timeout
    }

    /// The number of ranks in the group, counting those of other processes under MPI.
    pub fn world_size(&self) -> usize {
        match &self.group.engine {
            EngineSpec::InProcess { ranks } => ranks.len(),
            #[cfg(feature = "mpi")]
            EngineSpec::Mpi { world, .. } => world.size(),
        }
    }

    /// The ranks that run in this process: all of them in-process, this process's rank under MPI.
    pub fn local_ranks(&self) -> Range<usize> {
        match &self.group.engine {
            EngineSpec::InProcess { ranks } => 0..ranks.len(),
            #[cfg(feature = "mpi")]
            EngineSpec::Mpi { world, .. } => world.rank()..world.rank() + 1,
        }
    }

    /// The local device of every rank that runs in this process (see [`DistributedDevice::local_ranks`]).
    pub fn local_devices(&self) -> &[D::Local] {
        match &self.group.engine {
            EngineSpec::InProcess { ranks } => ranks,
            #[cfg(feature = "mpi")]
            EngineSpec::Mpi { local, .. } => std::slice::from_ref(local),
        }
    }

    /// Runs `work` once per rank (SPMD) and returns the result of every rank that ran in this process.
    ///
    /// In-process, each rank is a thread of this process, and the group lives for this run only. Under MPI,
    /// `work` runs once, for this process's rank. On both engines, ranks that call one collective with arguments
    /// that do not agree (shapes, element types, collectives, roots, reduce ops) all get
    /// [`Error::CollectiveMismatch`] for that call, and the group stays usable.
    ///
    /// # When a rank fails: in-process
    ///
    /// - **Its work returns `Err`**: that is its result. Every other rank's pending and later collectives of this
    ///   run return [`Error::PeerFailed`] naming the rank and its error, so their work can end too; a rank that
    ///   makes no further collective keeps its own result. A rank that returns `Ok` while others wait for it in
    ///   a collective fails them the same way. [`RankResults::into_values`] gives the error that started it.
    /// - **Its work panics**: the panic is caught; its result is [`Error::RankPanicked`] with the message, and the
    ///   others fail as for an error. (In a program built with `panic = "abort"`, the process ends instead.)
    /// - **A collective times out**: a rank that waits longer than [`timeout`](Self::timeout) for the others to
    ///   join a collective gets [`Error::CollectiveTimeout`] naming the missing ranks, and every other rank's
    ///   pending and later collectives of the run return [`Error::PeerFailed`].
    /// - **A rank is stuck in user code** (an endless loop, a deadlock, a blocking read): a thread cannot be
    ///   stopped from outside. The other ranks get an error from their next collective, after the timeout at the
    ///   latest, but `run` returns only once every rank's work has returned: a rank that never returns keeps `run`
    ///   from returning.
    ///
    /// The next run starts with a fresh group, whatever happened to this one.
    ///
    /// # When a rank fails: MPI
    ///
    /// MPI cannot cancel a collective, nor tell a rank blocked in one that a peer has stopped. So:
    ///
    /// - **Its work returns `Err`**: the rank then waits, up to the timeout, for every rank to finish its work.
    ///   If they all do (e.g. every rank got the same error), `run` returns the `Err` on this rank. If they do not
    ///   (a peer waits for this rank in a collective), this rank prints why and aborts the whole job
    ///   (`MPI_Abort` with error code 86): every process of the job ends, and no `run` returns.
    /// - **Its work panics**: the rank prints the panic and aborts the whole job at once, as above. A panic is
    ///   never an `Err` under MPI.
    /// - **A collective times out**: collectives themselves have no timeout; a rank waits in one as long as its
    ///   peers are alive. The timeout applies at the end of the run: a rank whose work has returned waits at most
    ///   that long for the others to return theirs, then aborts the job as above. A rank left waiting in a
    ///   collective by a peer that returned, failed or panicked is thereby released, by the end of the job.
    /// - **A rank is stuck in user code**: its peers wait in their next collective, with no timeout. If some
    ///   rank's work returns, the job is aborted after the timeout, as above; if every other rank waits in a
    ///   collective, the job waits until the stuck rank moves on or the launcher ends it (e.g.
    ///   `mpirun --timeout`, a batch system's time limit).
    /// - **A process dies** (killed, crashed): `mpirun` ends the job.
    pub fn run<T, F>(&self, work: F) -> RankResults<T>
    where
        F: Fn(Rank<D>) -> Result<T> + Sync,
        T: Send,
    {
        let timeout = self.group.timeout;
        match &self.group.engine {
            EngineSpec::InProcess { ranks } => {
                let results = in_process::run(ranks.len(), timeout, |communicator| {
                    let (rank, len) = (communicator.rank(), ranks.len());
                    let outside = || Error::IndexOutOfRange {
                        op: "DistributedDevice::run",
                        index: i64::try_from(rank).unwrap_or(i64::MAX),
                        len,
                    };
                    let device = ranks.get(rank).cloned().ok_or_else(outside)?;
                    work(Rank::new(device, communicator))
                });
                RankResults::new(results.into_iter().enumerate().collect())
            }
            #[cfg(feature = "mpi")]
            EngineSpec::Mpi { local, world } => {
                let result = crate::distributed::mpi::run_rank(world, timeout, |communicator| {
                    work(Rank::new(local.clone(), communicator))
                });
                RankResults::new(vec![(world.rank(), result)])
            }
        }
    }
}

impl<D: Dispatch> Clone for DistributedDevice<D> {
    fn clone(&self) -> Self {
        Self { group: Arc::clone(&self.group) }
    }
}

impl<D: Dispatch> Debug for DistributedDevice<D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut debug = f.debug_struct("DistributedDevice");
        match &self.group.engine {
            EngineSpec::InProcess { ranks } => debug.field("engine", &"in-process").field("ranks", ranks),
            #[cfg(feature = "mpi")]
            EngineSpec::Mpi { local, world } => debug
                .field("engine", &"mpi")
                .field("rank", &world.rank())
                .field("world_size", &world.size())
                .field("local", local),
        };
        debug.field("timeout", &self.group.timeout).finish()
    }
}

/// Two devices are equal when they describe the same ranks on the same engine; the timeout is a setting of
/// the runs, not part of the device's identity.
impl<D: Dispatch> PartialEq for DistributedDevice<D> {
    fn eq(&self, other: &Self) -> bool {
        if Arc::ptr_eq(&self.group, &other.group) {
            return true;
        }
        match (&self.group.engine, &other.group.engine) {
            (EngineSpec::InProcess { ranks }, EngineSpec::InProcess { ranks: others }) => ranks == others,
            #[cfg(feature = "mpi")]
            (EngineSpec::Mpi { local, .. }, EngineSpec::Mpi { local: other, .. }) => local == other,
            #[cfg(feature = "mpi")]
            _ => false,
        }
    }
}

/// In-process: the rank devices separated by commas (`ndarray,candle`). MPI: `mpi:` and this process's
/// device (`mpi:ndarray`). The enum's `Display` puts the variant's name in front (`cluster:ndarray,candle`).
impl<D: Dispatch> Display for DistributedDevice<D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.group.engine {
            EngineSpec::InProcess { ranks } => device_name::write_ranks(f, ranks),
            #[cfg(feature = "mpi")]
            EngineSpec::Mpi { local, .. } => device_name::write_qualified(f, MPI_PREFIX, local),
        }
    }
}

const MPI_PREFIX: &str = "mpi";

/// Reads what follows the variant's name:
/// - nothing: two in-process ranks on the first compiled-in local device;
/// - a comma-separated list of rank devices (`ndarray,candle`): one in-process rank per device;
/// - `mpi` or `mpi:<device>`, without a comma: this process's rank of the MPI world (feature `mpi`), on
///   `<device>` or the first compiled-in local device.
///
/// A local device of the enum may itself be named `mpi` (`mpi:<device>` for a backend variant named `mpi`,
/// `mpi:<base>` for an autodiff variant named `mpi`). In a list of ranks it is read as that device (device names
/// never contain a comma); a spec of the MPI form that is also a name of such a device could mean either, and is an
/// error rather than a guess.
impl<D: Dispatch> FromStr for DistributedDevice<D> {
    type Err = ParseDeviceError;

    fn from_str(spec: &str) -> Result<Self, Self::Err> {
        if let Some(local) = mpi_form(spec) {
            if names_a_local_device::<D>(spec) {
                return Err(ParseDeviceError::invalid(
                    spec,
                    format!(
                        "`{spec}` is ambiguous: `{MPI_PREFIX}` selects the MPI engine, and `{spec}` is also the name of \
                         a local device of this enum; rename that device with `#[dispatch(name = \"...\")]`, or list \
                         it with other ranks (`{spec},{spec}`) for an in-process cluster"
                    ),
                ));
            }
            return parse_mpi(spec, local);
        }
        let ranks = if spec.is_empty() {
            let device = first_local_device::<D>(spec)?;
            vec![device.clone(), device]
        } else {
            device_name::ranks(spec).map(str::parse).collect::<Result<Vec<_>, _>>()?
        };
        Self::in_process(ranks).map_err(|error| ParseDeviceError::invalid(spec, error.to_string()))
    }
}

/// The device part of a spec of the MPI form: `mpi` (an empty part) or `mpi:<device>`. One device, so a spec
/// with a comma is a list of in-process ranks, even if its first rank's name starts with `mpi`.
fn mpi_form(spec: &str) -> Option<&str> {
    if device_name::lists_ranks(spec) {
        return None;
    }
    if spec == MPI_PREFIX { Some("") } else { device_name::qualified(spec, MPI_PREFIX) }
}

/// Whether `spec` is, or starts, the name of a local device: one of the bare names, alone or followed by
/// `:<device>`.
fn names_a_local_device<D: Dispatch>(spec: &str) -> bool {
    D::Local::names().iter().any(|name| device_name::names(spec, name))
}

fn first_local_device<D: Dispatch>(spec: &str) -> Result<D::Local, ParseDeviceError> {
    match D::Local::names().first() {
        Some(first) => first.parse(),
        None => Err(ParseDeviceError::invalid(spec, "the enum has no local device to run ranks on")),
    }
}

#[cfg(feature = "mpi")]
fn parse_mpi<D: Dispatch>(spec: &str, local: &str) -> Result<DistributedDevice<D>, ParseDeviceError> {
    let local = if local.is_empty() { first_local_device::<D>(spec)? } else { local.parse()? };
    DistributedDevice::mpi(local).map_err(|error| ParseDeviceError::invalid(spec, error.to_string()))
}

#[cfg(not(feature = "mpi"))]
fn parse_mpi<D: Dispatch>(spec: &str, _local: &str) -> Result<DistributedDevice<D>, ParseDeviceError> {
    Err(ParseDeviceError::invalid(spec, "dispatch-core was built without its `mpi` feature"))
}
