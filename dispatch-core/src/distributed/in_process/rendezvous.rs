//! Where the threads of one in-process run meet for each collective.
//!
//! A collective is a *meeting*: every rank arrives with its call and its buffer, the last to arrive completes
//! the meeting, and every rank gets the same list of arrivals. The ranks then work on each other's buffers and
//! pass the *leave barrier*, after which each owner has its buffer back. Ranks go through a `Loan`
//! (`loan.rs`), which guarantees they take their buffer back this way even when they unwind.
//!
//! Failures never leave a rank waiting: a rank whose work ends (returns, errors or panics) or that times out
//! marks the group as failed, which wakes every waiting rank with an error and fails every later meeting of the
//! same run. A group lives for one run, so the next run starts clean.

use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use crate::distributed::collective::Call;
use crate::distributed::in_process::shared_buffer::SharedBuffer;
use crate::error::{Error, Result};

/// What a rank brings to a meeting. Not `Clone`: its buffer exists once, in the meeting.
#[derive(Debug)]
pub(crate) struct Arrival {
    pub call: Call,
    pub buffer: SharedBuffer,
}

/// A completed meeting: every rank's arrival, by rank.
#[derive(Debug, Default)]
pub(crate) struct Meeting {
    pub arrivals: Vec<Arrival>,
}

/// Whether a rank taking its buffer back did its part of the meeting's data phase.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Part {
    Done,
    /// The rank is unwinding: its part may be unwritten, so no rank may trust the meeting's result.
    Abandoned,
}

/// How a rank's work ended, as the other ranks will be told.
pub(crate) enum Ending {
    Finished,
    Failed(String),
}

pub(crate) struct Group {
    world_size: usize,
    timeout: Duration,
    state: Mutex<State>,
    changed: Condvar,
}

struct State {
    /// Meetings completed so far.
    generation: u64,
    arrivals: Vec<Option<Arrival>>,
    arrived: usize,
    last_meeting: Arc<Meeting>,
    /// Leave barriers completed so far, and whether the last one saw every rank finish its part.
    left_generation: u64,
    leaving: usize,
    last_leave_complete: bool,
    /// Ranks between a completed meeting and its leave barrier; one that ends there died mid-collective.
    in_meeting: Vec<bool>,
    died_in_meeting: bool,
    running: usize,
    /// Why no further meeting of this run can complete.
    failure: Option<Failure>,
}

#[derive(Clone)]
struct Failure {
    rank: usize,
    reason: String,
}

impl Group {
    pub(crate) fn new(world_size: usize, timeout: Duration) -> Self {
        let state = State {
            generation: 0,
            arrivals: (0..world_size).map(|_| None).collect(),
            arrived: 0,
            last_meeting: Arc::default(),
            left_generation: 0,
            leaving: 0,
            last_leave_complete: true,
            in_meeting: vec![false; world_size],
            died_in_meeting: false,
            running: world_size,
            failure: None,
        };
        Self { world_size, timeout, state: Mutex::new(state), changed: Condvar::new() }
    }

    pub(crate) fn world_size(&self) -> usize {
        self.world_size
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // No code panics while holding the lock, so a poisoned lock still holds a consistent state.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Arrives at the next meeting and waits, up to the group's timeout, for every other rank.
    pub(crate) fn meet(&self, rank: usize, arrival: Arrival, op: &'static str) -> Result<Arc<Meeting>> {
        // A timeout too long to represent (e.g. `Duration::MAX`) means waiting without one.
        let deadline = Instant::now().checked_add(self.timeout);
        let mut state = self.lock();
        if let Some(failure) = &state.failure {
            return Err(failure.to_error(op, rank));
        }
        if state.arrivals[rank].is_some() || state.in_meeting[rank] {
            // Clones of one rank's communicator used at once.
            return Err(Error::RankBusy { op, rank });
        }
        let generation = state.generation;
        state.arrivals[rank] = Some(arrival);
        state.arrived += 1;
        if state.arrived == self.world_size {
            return Ok(self.complete_meeting(&mut state));
        }
        loop {
            if state.generation != generation {
                return Ok(Arc::clone(&state.last_meeting));
            }
            if let Some(failure) = &state.failure {
                let error = failure.to_error(op, rank);
                state.withdraw(rank);
                return Err(error);
            }
            let now = Instant::now();
            let Some(deadline) = deadline else {
                state = self.changed.wait(state).unwrap_or_else(PoisonError::into_inner);
                continue;
            };
            if now >= deadline {
                let missing: Vec<usize> =
                    (0..self.world_size).filter(|&other| state.arrivals[other].is_none()).collect();
                let reason = format!("timed out after {:?} waiting for rank(s) {missing:?} in `{op}`", self.timeout);
                state.failure = Some(Failure { rank, reason });
                state.withdraw(rank);
                self.changed.notify_all();
                return Err(Error::CollectiveTimeout { op, rank, timeout: self.timeout, missing });
            }
            state = self.changed.wait_timeout(state, deadline - now).unwrap_or_else(PoisonError::into_inner).0;
        }
    }

    fn complete_meeting(&self, state: &mut State) -> Arc<Meeting> {
        let arrivals = state.arrivals.iter_mut().filter_map(Option::take).collect();
        let meeting = Arc::new(Meeting { arrivals });
        state.arrived = 0;
        state.generation += 1;
        state.in_meeting.iter_mut().for_each(|flag| *flag = true);
        state.last_meeting = Arc::clone(&meeting);
        self.changed.notify_all();
        meeting
    }

    /// Takes `rank`'s buffer back: withdraws it from a meeting that has not completed, or waits at the leave
    /// barrier until every rank has finished with the last meeting's buffers. No timeout: the other ranks are
    /// running panic-free engine code on this rank's buffer, which must outlive their work. A rank that
    /// abandoned its part fails the meeting, and the run, for every rank.
    pub(crate) fn take_back(&self, rank: usize, op: &'static str, part: Part) -> Result<()> {
        let mut state = self.lock();
        if state.arrivals[rank].is_some() {
            // Published, but no meeting took it: no other rank has seen the pointer.
            state.withdraw(rank);
            return Ok(());
        }
        if !state.in_meeting[rank] {
            return Ok(());
        }
        if part == Part::Abandoned {
            state.died_in_meeting = true;
            if state.failure.is_none() {
                let reason = format!("abandoned `{op}` before finishing its part of the data (it is unwinding)");
                state.failure = Some(Failure { rank, reason });
            }
        }
        let generation = state.left_generation;
        state.in_meeting[rank] = false;
        state.leaving += 1;
        self.complete_leave_if_done(&mut state);
        while state.left_generation == generation {
            state = self.changed.wait(state).unwrap_or_else(PoisonError::into_inner);
        }
        if state.last_leave_complete {
            Ok(())
        } else {
            let failure = state.failure.clone().unwrap_or(Failure { rank, reason: "died mid-collective".into() });
            Err(failure.to_error(op, rank))
        }
    }

    /// How many ranks wait at the current leave barrier.
    #[cfg(test)]
    pub(crate) fn ranks_leaving(&self) -> usize {
        self.lock().leaving
    }

    fn complete_leave_if_done(&self, state: &mut State) {
        if state.leaving > 0 && state.leaving >= state.running {
            state.leaving = 0;
            state.left_generation += 1;
            state.last_leave_complete = !state.died_in_meeting;
            state.died_in_meeting = false;
            self.changed.notify_all();
        }
    }

    /// Records that a rank's work has ended, failing every meeting it can no longer join.
    pub(crate) fn end(&self, rank: usize, ending: Ending) {
        let mut state = self.lock();
        let reason = match ending {
            Ending::Finished => "finished its work without making this call (every rank must make the same \
                                 collective calls in the same order)"
                .to_owned(),
            Ending::Failed(reason) => reason,
        };
        if state.failure.is_none() {
            state.failure = Some(Failure { rank, reason });
        }
        state.running = state.running.saturating_sub(1);
        if std::mem::take(&mut state.in_meeting[rank]) {
            state.died_in_meeting = true;
        }
        self.complete_leave_if_done(&mut state);
        self.changed.notify_all();
    }
}

impl State {
    fn withdraw(&mut self, rank: usize) {
        if self.arrivals[rank].take().is_some() {
            self.arrived -= 1;
        }
    }
}

impl Failure {
    fn to_error(&self, op: &'static str, rank: usize) -> Error {
        if self.rank == rank {
            // This rank's own earlier timeout (or a late call after its work ended).
            Error::PeerFailed { op, rank, reason: format!("this rank {}", self.reason) }
        } else {
            Error::PeerFailed { op, rank, reason: format!("rank {} {}", self.rank, self.reason) }
        }
    }
}
