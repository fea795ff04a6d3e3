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
//!
//! The ranks of one meeting may have lent buffers of different element types (they disagree, and the meeting
//! fails before its data phase), so a buffer keeps its element type beside the pointer, and a slice of another
//! type is refused.

use std::ops::Range;

use crate::distributed::element::Element;
use crate::dtype::DType;

/// A pointer to a rank's values (`f32` or `f64`, as `dtype` says), shared with the other ranks of one meeting.
/// Neither `Copy` nor `Clone`: the loan publishes its one `SharedBuffer` by moving it into its arrival at the
/// meeting.
#[derive(Debug)]
pub(crate) struct SharedBuffer {
    /// The first element, of type `dtype`'s `Element`, so aligned for it.
    ptr: *mut u8,
    len: usize,
    dtype: DType,
}

// SAFETY: the pointer is only dereferenced through `slice`/`slice_mut`, whose callers uphold the meeting
// protocol described above; the values are plain `f32` or `f64`.
unsafe impl Send for SharedBuffer {}
// SAFETY: as for `Send`.
unsafe impl Sync for SharedBuffer {}

impl SharedBuffer {
    /// Lends `data`; only `Loan` calls it, and keeps `data` borrowed until the meeting's leave barrier.
    pub(super) fn lend<T: Element>(data: &mut [T]) -> Self {
        Self { ptr: data.as_mut_ptr().cast(), len: data.len(), dtype: T::DTYPE }
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// `range` of the buffer, read-only, for as long as this `SharedBuffer` (the meeting that holds it) is
    /// borrowed; `None` if it is out of bounds or the buffer does not hold `T`. The buffer is alive for that long
    /// (module comment).
    ///
    /// # Safety
    /// No rank writes `range` while the slice is alive.
    pub(crate) unsafe fn slice<T: Element>(&self, range: Range<usize>) -> Option<&[T]> {
        let first = self.first::<T>(&range)?;
        // SAFETY: in bounds and of `T` (checked by `first`); alive for the borrow of `self` (module comment); not
        // written, by the caller's contract.
        Some(unsafe { std::slice::from_raw_parts(first, range.len()) })
    }

    /// `range` of the buffer, writable, for as long as this `SharedBuffer` (the meeting that holds it) is
    /// borrowed; `None` if it is out of bounds. The buffer is alive for that long (module comment).
    ///
    /// # Safety
    /// No other reference to any element of `range` exists while the slice is alive.
    // A `&mut` from `&self`: the buffer is shared by every rank of the meeting, each writing its own part.
    #[allow(clippy::mut_from_ref)]
    pub(crate) unsafe fn slice_mut<T: Element>(&self, range: Range<usize>) -> Option<&mut [T]> {
        let first = self.first::<T>(&range)?;
        // SAFETY: in bounds and of `T` (checked by `first`); alive for the borrow of `self` (module comment);
        // exclusively ours, by the caller's contract.
        Some(unsafe { std::slice::from_raw_parts_mut(first, range.len()) })
    }

    /// The first element of `range` as a `T`, if the buffer holds `T` and `range` lies within it.
    fn first<T: Element>(&self, range: &Range<usize>) -> Option<*mut T> {
        if T::DTYPE != self.dtype || range.start > range.end || range.end > self.len {
            return None;
        }
        // SAFETY: `ptr` came from a `&mut [T]` of `len` elements (`lend`, and `T` is that type: `dtype` names one
        // `Element` type each), and `range.start <= len`, so the offset stays within (or one past) that slice.
        Some(unsafe { self.ptr.cast::<T>().add(range.start) })
    }
}
