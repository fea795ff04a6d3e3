//! Buffer reuse: element-wise ops write into the storage of tensors dropped earlier on the same thread, instead of
//! asking the allocator for fresh memory. glibc hands large freed blocks back to the system and gives the next op new
//! pages, which the kernel must fault in and zero: a training step repeats the same sizes, so a quarter of the GPT
//! step went to those pages (BENCHMARKS.md, group 6).
//!
//! When the allocator keeps freed memory itself (`memory::keep_freed_memory`), a request that no kept buffer fits
//! hands back the oldest kept ones, as many bytes as it asks for: the allocator serves it from them without new
//! pages, and buffers of sizes the step no longer asks for stop adding to its peak (a GPT step's peak, 21.9 MiB
//! before, 16.3 MiB after, at the same speed; without the allocator keeping freed memory the same policy faulted in
//! 30 times the pages and took 1.25x the time, so it is not used then).

use std::cell::RefCell;
use std::thread::LocalKey;

use ndarray::{ArcArrayD, ArrayD, ArrayViewD, Dimension, IxDyn, ShapeError};
use num_traits::Zero;

use crate::memory;

/// Smaller buffers come cheaply from malloc's own free lists; only larger ones are kept.
const KEEP_FROM: usize = 1 << 12;

/// The most bytes one thread keeps for each element type, so that a thread which stops computing holds little.
const KEEP_AT_MOST: usize = 64 << 20;

/// The most buffers one thread keeps for each element type: finding one that fits is a walk over them all. A GPT
/// step's backward frees more than 32 large tensors before the next forward asks for them again: keeping 32, the
/// step faulted in 82k pages over 110 steps, keeping 64, 9k (`perf stat`). Keeping 128 gave the GPT step no more
/// and made LeNet's first 30 steps about 1.15x slower, while the kept buffers of mismatched sizes settled.
const KEEP_COUNT: usize = 64;

/// The buffers one thread keeps, of one element type.
pub(super) struct KeptBuffers<E> {
    buffers: Vec<Vec<E>>,
    bytes: usize,
}

impl<E> Default for KeptBuffers<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E> KeptBuffers<E> {
    pub(super) const fn new() -> Self {
        Self { buffers: Vec::new(), bytes: 0 }
    }

    /// The smallest kept buffer with room for `len` elements and at most twice that, holding what its tensor left.
    fn take(&mut self, len: usize) -> Option<Vec<E>> {
        if !reused(len) {
            return None;
        }
        let fits = |buffer: &&Vec<E>| buffer.capacity() >= len && buffer.capacity() / 2 <= len;
        let (position, _) =
            self.buffers.iter().enumerate().filter(|(_, buffer)| fits(buffer)).min_by_key(|(_, b)| b.capacity())?;
        let buffer = self.buffers.swap_remove(position);
        self.bytes = self.bytes.saturating_sub(bytes_of(&buffer));
        Some(buffer)
    }

    /// Frees the oldest kept buffers until they held at least `bytes`, or none is left.
    fn release_oldest(&mut self, bytes: usize) {
        let mut owed = bytes;
        while owed > 0
            && let Some(freed) = self.free_oldest()
        {
            owed = owed.saturating_sub(freed);
        }
    }

    /// Frees the oldest kept buffer; the bytes it held, or `None` when none is kept.
    fn free_oldest(&mut self) -> Option<usize> {
        if self.buffers.is_empty() {
            return None;
        }
        let freed = bytes_of(&self.buffers.remove(0));
        self.bytes = self.bytes.saturating_sub(freed);
        Some(freed)
    }

    /// Keeps `buffer`, letting the oldest kept ones go (to the allocator) while there are too many or too large.
    fn keep(&mut self, buffer: Vec<E>) {
        let bytes = bytes_of(&buffer);
        if !reused(buffer.capacity()) || bytes > KEEP_AT_MOST {
            return;
        }
        while self.buffers.len() >= KEEP_COUNT || self.bytes.saturating_add(bytes) > KEEP_AT_MOST {
            if self.free_oldest().is_none() {
                break;
            }
        }
        // Kept with the values its tensor left, so that an output written whole can take them as they are.
        self.bytes += bytes;
        self.buffers.push(buffer);
    }
}

fn bytes_of<E>(buffer: &Vec<E>) -> usize {
    buffer.capacity().saturating_mul(size_of::<E>())
}

/// Whether an array of `len` elements is large enough for its storage to be kept and reused: smaller ones are left to
/// malloc, and the ops that make them keep their plain loops.
pub(super) fn reused(len: usize) -> bool {
    len >= KEEP_FROM
}

/// An element type whose buffers a thread keeps.
pub(super) trait Reused: Sized + 'static {
    fn kept() -> &'static LocalKey<RefCell<KeptBuffers<Self>>>;
}

thread_local! {
    static KEPT_F32: RefCell<KeptBuffers<f32>> = const { RefCell::new(KeptBuffers::new()) };
    static KEPT_F64: RefCell<KeptBuffers<f64>> = const { RefCell::new(KeptBuffers::new()) };
}

impl Reused for f32 {
    fn kept() -> &'static LocalKey<RefCell<KeptBuffers<f32>>> {
        &KEPT_F32
    }
}

impl Reused for f64 {
    fn kept() -> &'static LocalKey<RefCell<KeptBuffers<f64>>> {
        &KEPT_F64
    }
}

/// An empty buffer with room for `len` elements: one this thread kept, or a new one. (`len` was checked to fit in
/// memory by the caller.)
pub(super) fn buffer<E: Reused>(len: usize) -> Vec<E> {
    let mut buffer = take(len).unwrap_or_else(|| Vec::with_capacity(len));
    buffer.clear();
    buffer
}

/// A kept buffer that fits `len` elements; on a miss, when the allocator keeps freed memory, the oldest kept buffers
/// go back to it to make room for the fresh one.
fn take<E: Reused>(len: usize) -> Option<Vec<E>> {
    let taken = |kept: &mut KeptBuffers<E>| {
        let buffer = kept.take(len);
        if buffer.is_none() && reused(len) && memory::allocator_keeps_freed_memory() {
            kept.release_oldest(len.saturating_mul(size_of::<E>()));
        }
        buffer
    };
    E::kept().try_with(|kept| kept.try_borrow_mut().ok().and_then(|mut kept| taken(&mut kept))).ok().flatten()
}

/// `len` elements for an output that is written whole without being read (an element-wise op's): a kept buffer as its
/// last tensor left it, saving the pass that would clear it, or fresh zeroed memory.
pub(super) fn overwritten<E: Reused + Clone + Zero>(len: usize) -> Vec<E> {
    let Some(mut buffer) = take(len) else { return vec![E::zero(); len] };
    buffer.resize(len, E::zero());
    buffer
}

/// A row-major array of `dims` for an output whose every element is written before any is read: over a kept
/// buffer as `overwritten` gives it.
pub(super) fn written_whole<E: Reused + Clone + Zero>(dims: IxDyn) -> Result<ArrayD<E>, ShapeError> {
    let len = dims.size();
    ArrayD::from_shape_vec(dims, overwritten(len))
}

/// `len` copies of `value`, in a kept buffer when there is one: for outputs written in place afterwards (a permuted
/// copy), clearing memory this thread already touched costs less than the page faults of fresh memory.
pub(super) fn filled<E: Reused + Clone>(len: usize, value: E) -> Vec<E> {
    let mut values = buffer(len);
    values.resize(len, value);
    values
}

/// `view`'s elements in row-major order, in a kept buffer when there is one: the copy an op makes before working in
/// place on its output (softmax, layer norm), or to lay a permuted tensor out row-major.
pub(super) fn row_major_copy<E: Reused + Copy + Zero>(view: ArrayViewD<'_, E>) -> Result<ArrayD<E>, ShapeError> {
    if let Some(row_major) = view.as_slice() {
        let mut values = buffer(view.len());
        values.extend_from_slice(row_major);
        return ArrayD::from_shape_vec(view.raw_dim(), values);
    }
    // `assign` copies by whole inner rows; an element-by-element walk of a permuted view is several times slower
    // than clearing the buffer first.
    let mut copy = ArrayD::from_shape_vec(view.raw_dim(), filled(view.len(), E::zero()))?;
    copy.assign(&view);
    Ok(copy)
}

/// Frees every buffer this thread keeps, of both element types; the bytes they held.
pub(super) fn release_kept() -> usize {
    fn release<E: Reused>() -> usize {
        let taken = E::kept().try_with(|kept| kept.try_borrow_mut().map(|mut kept| std::mem::take(&mut *kept)));
        taken.ok().and_then(|taken| taken.ok()).map_or(0, |taken| taken.bytes)
    }
    release::<f32>() + release::<f64>()
}

/// The storage of `array`, kept for reuse when nothing else shares it.
pub(super) fn give_back<E: Reused>(array: ArcArrayD<E>) {
    if let Ok(owned) = array.try_into_owned_nocopy() {
        let (storage, _) = owned.into_raw_vec_and_offset();
        // At thread exit the kept buffers may be gone already: the storage is then simply freed.
        let _ = E::kept().try_with(|kept| kept.try_borrow_mut().map(|mut kept| kept.keep(storage)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dropped_buffer_is_handed_out_again_for_a_size_it_fits() {
        let mut kept = KeptBuffers::<f32>::new();
        kept.keep(Vec::with_capacity(10_000));
        assert!(kept.take(20_001).is_none(), "more than it holds");
        assert!(kept.take(4_999).is_none(), "less than half of it");
        let reused = kept.take(6_000).expect("a kept buffer fits");
        assert!(reused.capacity() >= 10_000);
        assert_eq!(kept.bytes, 0);
        // Small buffers are not kept; the total and the count are bounded, the oldest going first.
        kept.keep(Vec::with_capacity(KEEP_FROM - 1));
        assert!(kept.buffers.is_empty());
        for _ in 0..3 {
            kept.keep(Vec::with_capacity(KEEP_AT_MOST / 2 / size_of::<f32>()));
        }
        assert_eq!((kept.buffers.len(), kept.bytes), (2, KEEP_AT_MOST));
        for len in KEEP_FROM..KEEP_FROM + KEEP_COUNT + 1 {
            kept.keep(Vec::with_capacity(len));
        }
        assert_eq!(kept.buffers.len(), KEEP_COUNT);
        assert_eq!(kept.buffers[0].capacity(), KEEP_FROM + 1, "the oldest went first");
        assert_eq!(kept.bytes, kept.buffers.iter().map(bytes_of).sum::<usize>());
    }

    #[test]
    fn releasing_the_oldest_frees_at_least_the_bytes_asked_and_keeps_the_count_of_the_rest() {
        let mut kept = KeptBuffers::<f32>::new();
        for len in [KEEP_FROM, KEEP_FROM * 2, KEEP_FROM * 3] {
            kept.keep(Vec::with_capacity(len));
        }
        // One element more than the oldest holds takes the next one too.
        kept.release_oldest((KEEP_FROM + 1) * size_of::<f32>());
        assert_eq!(kept.buffers.len(), 1);
        assert_eq!(kept.buffers[0].capacity(), KEEP_FROM * 3, "the newest stays");
        assert_eq!(kept.bytes, bytes_of(&kept.buffers[0]));
        kept.release_oldest(usize::MAX);
        assert_eq!((kept.buffers.len(), kept.bytes), (0, 0));
        kept.release_oldest(1);
        assert_eq!(kept.bytes, 0, "nothing left to free");
    }

    #[test]
    fn a_buffer_for_an_output_written_whole_keeps_the_last_values_and_has_the_length_asked() {
        let len = KEEP_FROM * 2;
        give_back(ArcArrayD::from_elem(ndarray::IxDyn(&[len]), 7.0f32));
        let longer = overwritten::<f32>(len - 3);
        assert_eq!((longer.len(), longer[0]), (len - 3, 7.0), "truncated, not cleared");
        // A kept buffer with room for more than its last tensor held is filled up with zeros.
        let mut short = Vec::with_capacity(len);
        short.resize(len - 3, 5.0f32);
        give_back(ArcArrayD::from_shape_vec(ndarray::IxDyn(&[len - 3]), short).unwrap());
        let grown = overwritten::<f32>(len - 1);
        assert_eq!((grown.len(), grown[0], grown[len - 2]), (len - 1, 5.0, 0.0));
        // With nothing kept, fresh zeros.
        assert!(overwritten::<f64>(len).iter().all(|&x| x == 0.0));
        assert!(buffer::<f32>(len).is_empty());
    }

    #[test]
    fn released_buffers_are_freed_and_counted_and_none_is_handed_out_after() {
        release_kept();
        give_back(ArcArrayD::from_elem(ndarray::IxDyn(&[KEEP_FROM]), 1.0f32));
        give_back(ArcArrayD::from_elem(ndarray::IxDyn(&[KEEP_FROM * 2]), 2.0f64));
        assert_eq!(release_kept(), KEEP_FROM * 4 + KEEP_FROM * 16);
        assert!(take::<f32>(KEEP_FROM).is_none() && take::<f64>(KEEP_FROM * 2).is_none());
        assert_eq!(release_kept(), 0);
    }
}
