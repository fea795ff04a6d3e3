//! A rank's buffer, lent to the other ranks of its group for the length of one meeting.
//!
//! This is the one place with `unsafe` in the in-process engine. The ranks of a meeting read and write each
//! other's buffers directly, without locks or copies; that is sound because of how a meeting runs
//! (see `rendezvous.rs`):
//! - the owner publishes the buffer when it arrives and does not touch, move or free it until the meeting's leave
//!   barrier has passed, which is after every rank has finished with it. `Loan` (`loan.rs`) enforces this: it
//!   borrows the buffer for the whole time, and its `Drop` passes the barrier even when the owner unwinds;
//! - within a meeting, ranks access disjoint ranges mutably (rank `r` writes only its own part), or only read.

use std::ops::Range;

/// A pointer to a rank's `f32` values, shared with the other ranks of one meeting.
#[derive(Clone, Copy, Debug)]
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

    /// `range` of the buffer, read-only; `None` if it is out of bounds.
    ///
    /// # Safety
    /// The owner keeps the buffer alive and unmoved for the returned lifetime, and no rank writes `range`
    /// during it.
    pub(crate) unsafe fn slice<'a>(&self, range: Range<usize>) -> Option<&'a [f32]> {
        if range.start > range.end || range.end > self.len {
            return None;
        }
        // SAFETY: in bounds (checked above); alive and not written, by the caller's contract.
        Some(unsafe { std::slice::from_raw_parts(self.ptr.add(range.start), range.len()) })
    }

    /// `range` of the buffer, writable; `None` if it is out of bounds.
    ///
    /// # Safety
    /// The owner keeps the buffer alive and unmoved for the returned lifetime, and no other reference to any
    /// element of `range` exists during it.
    pub(crate) unsafe fn slice_mut<'a>(&self, range: Range<usize>) -> Option<&'a mut [f32]> {
        if range.start > range.end || range.end > self.len {
            return None;
        }
        // SAFETY: in bounds (checked above); alive and exclusively ours, by the caller's contract.
        Some(unsafe { std::slice::from_raw_parts_mut(self.ptr.add(range.start), range.len()) })
    }
}
