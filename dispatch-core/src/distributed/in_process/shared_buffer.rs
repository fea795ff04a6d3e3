//! A rank's buffer, lent to the other ranks of its group for the length of one meeting.
//!
//! This is the one place with `unsafe` in the in-process engine. The ranks of a meeting read and write each
//! other's buffers directly, without locks or copies; that is sound because of how a meeting runs
//! (see `rendezvous.rs`):
//! - the owner publishes the buffer when it arrives and does not touch, move or free it until the meeting's leave
//!   barrier has passed, which is after every rank has finished with it. `Loan` (`loan.rs`) enforces this: it
//!   borrows the buffer for the whole time, and its `Drop` passes the barrier even when the owner unwinds;
//! - every slice of a buffer borrows the `SharedBuffer` it came from, which lives in a meeting reachable only
//!   through a borrow of the rank's own loan. The compiler therefore ends every slice before the rank gives its
//!   loan back and reaches the leave barrier. A `SharedBuffer` is neither `Copy` nor `Clone`, so none can be
//!   taken out of a meeting to slice it later;
//! - within a meeting, ranks access disjoint ranges mutably (rank `r` writes only its own part), or only read:
//!   the one promise the compiler cannot check, and what `slice` and `slice_mut` leave to their callers.

use std::ops::Range;

/// A pointer to a rank's `f32` values, shared with the other ranks of one meeting. Neither `Copy` nor `Clone`:
/// the loan publishes its one `SharedBuffer` by moving it into its arrival at the meeting.
#[derive(Debug)]
pub(crate) struct SharedBuffer {
    ptr: *mut f32,
    len: usize,
}

// SAFETY: the pointer is only dereferenced through `slice`/`slice_mut`, whose callers uphold the meeting
// protocol described above; the values are plain `f32`.
unsafe impl Send for SharedBuffer {}
// SAFETY: as for `Send`.
unsafe impl Sync for SharedBuffer {}

impl SharedBuffer {
    /// Lends `data`; only `Loan` calls it, and keeps `data` borrowed until the meeting's leave barrier.
    pub(super) fn lend(data: &mut [f32]) -> Self {
        Self { ptr: data.as_mut_ptr(), len: data.len() }
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// `range` of the buffer, read-only, for as long as this `SharedBuffer` (the meeting that holds it) is
    /// borrowed; `None` if it is out of bounds. The buffer is alive for that long (module comment).
    ///
    /// # Safety
    /// No rank writes `range` while the slice is alive.
    pub(crate) unsafe fn slice(&self, range: Range<usize>) -> Option<&[f32]> {
        if range.start > range.end || range.end > self.len {
            return None;
        }
        // SAFETY: in bounds (checked above); alive for the borrow of `self` (module comment); not written, by the
        // caller's contract.
        Some(unsafe { std::slice::from_raw_parts(self.ptr.add(range.start), range.len()) })
    }

    /// `range` of the buffer, writable, for as long as this `SharedBuffer` (the meeting that holds it) is
    /// borrowed; `None` if it is out of bounds. The buffer is alive for that long (module comment).
    ///
    /// # Safety
    /// No other reference to any element of `range` exists while the slice is alive.
    // A `&mut` from `&self`: the buffer is shared by every rank of the meeting, each writing its own part.
    #[allow(clippy::mut_from_ref)]
    pub(crate) unsafe fn slice_mut(&self, range: Range<usize>) -> Option<&mut [f32]> {
        if range.start > range.end || range.end > self.len {
            return None;
        }
        // SAFETY: in bounds (checked above); alive for the borrow of `self` (module comment); exclusively ours,
        // by the caller's contract.
        Some(unsafe { std::slice::from_raw_parts_mut(self.ptr.add(range.start), range.len()) })
    }
}
