//! `Loan`: a rank's buffer lent to its group for one collective, and taken back however the rank leaves.
//!
//! From the moment a rank publishes its buffer at a meeting until the meeting's leave barrier, the other ranks
//! read and write that buffer through raw pointers (`shared_buffer.rs`). The buffer must therefore outlive
//! every other rank's use of it, even if this rank panics in between: unwinding would otherwise free it while
//! they still work on it. A `Loan` enforces that:
//! - it mutably borrows the buffer, so the owner cannot touch, move or free it while the loan exists;
//! - the meeting's arrivals (the other ranks' pointers) are only reachable through a borrow of the loan, so no
//!   rank uses them after giving its loan back;
//! - giving the loan back, or dropping it (also while unwinding), withdraws a buffer that no meeting took yet,
//!   or waits at the leave barrier until every rank has finished with the buffers of the meeting that did.

use std::marker::PhantomData;
use std::sync::Arc;

use crate::distributed::collective::Call;
use crate::distributed::element::Element;
use crate::distributed::in_process::rendezvous::{Arrival, Group, Meeting, Part};
use crate::distributed::in_process::shared_buffer::SharedBuffer;
use crate::error::{Error, Result};

/// This rank's buffer, lent to its group for one collective.
pub(crate) struct Loan<'a> {
    group: &'a Group,
    rank: usize,
    op: &'static str,
    /// Until `meet` moves it into this rank's arrival.
    buffer: Option<SharedBuffer>,
    /// Whether the group may hold or use the buffer: from publishing it until it is taken back.
    lent: bool,
    meeting: Option<Arc<Meeting>>,
    /// The buffer (of whatever element type) stays mutably borrowed for as long as the loan lives.
    _buffer: PhantomData<&'a mut [()]>,
}

impl<'a> Loan<'a> {
    pub(crate) fn new<T: Element>(group: &'a Group, rank: usize, op: &'static str, data: &'a mut [T]) -> Self {
        let buffer = Some(SharedBuffer::lend(data));
        Self { group, rank, op, buffer, lent: false, meeting: None, _buffer: PhantomData }
    }

    /// Publishes the buffer with `call` and waits for the meeting, which stays borrowed from the loan (and with it
    /// every slice of its buffers) until the loan is given back. On `Err` the buffer is no longer lent: the group
    /// withdrew it before any other rank could see it. A loan meets once.
    pub(crate) fn meet(&mut self, call: Call) -> Result<&Meeting> {
        let Some(buffer) = self.buffer.take() else {
            // A bug of the engine, not of its caller's input: no structured variant names it.
            return Err(Error::invalid(self.op, "a loaned buffer goes to one meeting only"));
        };
        // Set before publishing: if `meet` unwound after publishing, `drop` would still take the buffer back.
        self.lent = true;
        let arrival = Arrival { call, buffer };
        match self.group.meet(self.rank, arrival, self.op) {
            Ok(meeting) => Ok(self.meeting.insert(meeting)),
            Err(error) => {
                self.lent = false;
                Err(error)
            }
        }
    }

    /// Takes the buffer back once this rank has done its part of the meeting: waits until every rank has done
    /// theirs, and reports whether they all did.
    pub(crate) fn give_back(mut self) -> Result<()> {
        self.take_back(Part::Done)
    }

    fn take_back(&mut self, part: Part) -> Result<()> {
        if !std::mem::take(&mut self.lent) {
            return Ok(());
        }
        self.meeting = None;
        self.group.take_back(self.rank, self.op, part)
    }
}

/// Reached with the buffer still lent only if the rank unwinds between meeting and giving back (no code path
/// returns there). Its part of the data phase may be undone, so the meeting fails on every rank; and the buffer
/// is freed only after every other rank has left the meeting.
impl Drop for Loan<'_> {
    fn drop(&mut self) {
        // The error is what the other ranks get; this rank is already failing.
        let _ = self.take_back(Part::Abandoned);
    }
}

#[cfg(test)]
mod tests {
    use std::panic::{AssertUnwindSafe, catch_unwind};
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::thread;
    use std::time::Duration;

    use super::*;
    use crate::distributed::collective::{Collective, ReduceOp};
    use crate::shape::Shape;

    fn all_reduce(len: usize) -> Call {
        let values = crate::backend::HostValues::F32(Vec::new());
        Call::with_tensor(Collective::AllReduce(ReduceOp::Sum), Shape::new([len]), &values)
    }

    /// Sets its flag when dropped: declared before a buffer, it is dropped after the buffer is freed.
    struct SetOnDrop<'a>(&'a AtomicBool);

    impl Drop for SetOnDrop<'_> {
        fn drop(&mut self) {
            self.0.store(true, Ordering::SeqCst);
        }
    }

    #[test]
    fn a_rank_unwinding_mid_collective_frees_its_buffer_only_after_the_others_are_done() {
        let group = Group::new(2, Duration::MAX);
        let freed = AtomicBool::new(false);
        thread::scope(|scope| {
            let unwinding = scope.spawn(|| {
                catch_unwind(AssertUnwindSafe(|| {
                    let _freed = SetOnDrop(&freed);
                    let mut data = vec![1.0f32, 2.0, 3.0, 4.0];
                    let mut loan = Loan::new(&group, 0, "all_reduce", &mut data);
                    loan.meet(all_reduce(4)).map(drop).unwrap();
                    panic!("rank 0 fails between meeting and leaving");
                }))
            });
            let mut own = vec![0.0f32; 4];
            let mut loan = Loan::new(&group, 1, "all_reduce", &mut own);
            let meeting = loan.meet(all_reduce(4)).unwrap();
            // Rank 0 either waits at the leave barrier (the loan's drop) or has freed its buffer: wait for one.
            while !freed.load(Ordering::SeqCst) && group.ranks_leaving() == 0 {
                thread::yield_now();
            }
            assert!(!freed.load(Ordering::SeqCst), "rank 0 freed its buffer while rank 1 could still use it");
            // SAFETY: nobody writes during this check (rank 0 is unwinding, rank 1 is here).
            let values = unsafe { meeting.arrivals[0].buffer.slice::<f32>(0..4) }.unwrap().to_vec();
            assert_eq!(values, [1.0, 2.0, 3.0, 4.0]);
            let error = loan.give_back().unwrap_err();
            assert!(matches!(&error, Error::PeerFailed { rank: 1, .. }), "{error}");
            assert!(error.to_string().contains("rank 0 abandoned `all_reduce`"), "{error}");
            assert!(unwinding.join().unwrap().is_err(), "rank 0 panicked");
            assert!(freed.load(Ordering::SeqCst));
        });
    }

    #[test]
    fn a_rank_still_in_a_meeting_cannot_lend_a_second_buffer() {
        let group = Group::new(1, Duration::MAX);
        let (mut first, mut second) = (vec![1.0f32], vec![2.0f32]);
        let mut lent = Loan::new(&group, 0, "all_reduce", &mut first);
        lent.meet(all_reduce(1)).unwrap();
        let mut again = Loan::new(&group, 0, "all_reduce", &mut second);
        let error = again.meet(all_reduce(1)).map(drop).unwrap_err();
        assert!(matches!(error, Error::RankBusy { op: "all_reduce", rank: 0 }), "{error}");
        assert_eq!(
            error.to_string(),
            "rank 0 joined collective `all_reduce` while still in another; a rank takes part in one collective at a time"
        );
        drop(again);
        assert!(lent.give_back().is_ok(), "the rejected loan left the first one alone");
    }

    #[test]
    fn a_buffer_withdrawn_by_a_failed_meeting_is_not_lent_any_more() {
        let group = Group::new(2, Duration::ZERO);
        let mut data = vec![1.0f32];
        let mut loan = Loan::new(&group, 0, "all_reduce", &mut data);
        let error = loan.meet(all_reduce(1)).map(drop).unwrap_err();
        assert!(matches!(error, Error::CollectiveTimeout { .. }), "{error}");
        let again = loan.meet(all_reduce(1)).map(drop).unwrap_err();
        assert!(again.to_string().contains("one meeting only"), "{again}");
        assert!(loan.give_back().is_ok());
        assert_eq!(group.ranks_leaving(), 0, "nothing waits at a leave barrier for a meeting that never was");
    }
}
