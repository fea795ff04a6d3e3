//! Work split across rayon's threads once a pass is large enough that a second core pays for waking it: the
//! element-wise ops, the per-lane normalisations, pooling's planes and batches of small matrix products. Each
//! element (lane, plane, matrix) is computed exactly as on one thread, so no value depends on how many threads
//! there are.

use rayon::prelude::*;

use crate::error::Result;

/// How much one element of a pass costs, which sets how long the pass must be before it is split.
#[derive(Clone, Copy, Debug)]
pub(super) enum Work {
    /// An add, a comparison, a pick: a few cycles an element, bound by memory.
    Light,
    /// A transcendental function (`exp`, `erf`), a lane's statistics, a small matrix product: tens of cycles an
    /// element and more.
    Heavy,
}

impl Work {
    /// The fewest elements a pass of this work is split at. Waking the pool's threads and waiting for them costs
    /// some tens of microseconds on a 2-core VM (four context switches), and they spin a while after, taking the
    /// core from the single-threaded op that follows. Measured on the GPT and LeNet steps in paired processes,
    /// against the code before any split: light passes split from 2^15 elements made the GPT step 0.76-0.78 of its
    /// time but LeNet's 1.04-1.14 (190 more context switches a step, for ReLUs of 221k elements between
    /// single-threaded convolutions); from 2^18 the GPT step is 0.82 and LeNet's 1.02
    /// (`peers/results/steps-2026-12-03-sixth-stop.txt`).
    fn split_from(self) -> usize {
        match self {
            Self::Light => 1 << 18,
            Self::Heavy => 1 << 15,
        }
    }
}

/// Whether a pass of `work` over `len` elements is split across threads.
pub(super) fn split(work: Work, len: usize) -> bool {
    len >= work.split_from() && rayon::current_num_threads() > 1
}

/// `$zip.for_each($f)`, or `par_for_each` when a pass of `$work` over `$len` elements is worth splitting: `$f`
/// writes one element (one lane) from the zipped ones.
macro_rules! zip_for_each {
    ($work:expr, $len:expr, $zip:expr, $f:expr) => {{
        let (zip, f) = ($zip, $f);
        if $crate::backends::ndarray::parallel::split($work, $len) { zip.par_for_each(f) } else { zip.for_each(f) }
    }};
}
pub(super) use zip_for_each;

/// `$zip.map_collect($f)`, or `par_map_collect` when worth splitting: an array in the zipped arrays' memory order, of
/// `$f` of each element of them.
macro_rules! zip_map_collect {
    ($work:expr, $len:expr, $zip:expr, $f:expr) => {{
        let (zip, f) = ($zip, $f);
        if $crate::backends::ndarray::parallel::split($work, $len) {
            zip.par_map_collect(f)
        } else {
            zip.map_collect(f)
        }
    }};
}
pub(super) use zip_map_collect;

/// `f(start, part)` on consecutive parts of `outputs`, `start` being the index of the part's first element: a few
/// parts a thread when the pass is worth splitting, else the whole slice in one call.
pub(super) fn for_each_part<O: Send>(work: Work, outputs: &mut [O], f: impl Fn(usize, &mut [O]) + Sync + Send) {
    if split(work, outputs.len()) {
        // Parts of at least 4096 elements: fewer would cost more to hand out than to compute.
        let part = outputs.len().div_ceil(rayon::current_num_threads().saturating_mul(4)).max(1 << 12);
        outputs.par_chunks_mut(part).enumerate().for_each(|(index, outputs)| f(index.saturating_mul(part), outputs));
    } else {
        f(0, outputs);
    }
}

/// `f` on every `width`-long row of `values`, across threads when worth splitting. A trailing part shorter than a
/// row, or a width of 0, gets no call.
pub(super) fn for_each_row<E: Send>(values: &mut [E], width: usize, f: impl Fn(&mut [E]) + Sync + Send) {
    if width == 0 {
        return;
    }
    if split(Work::Heavy, values.len()) {
        values.par_chunks_exact_mut(width).for_each(f);
    } else {
        values.chunks_exact_mut(width).for_each(f);
    }
}

/// `f` on each `width`-long part of `outputs` with the `input_width`-long part of `inputs` of the same index (a
/// plane's outputs and the plane), across threads when the outputs are worth splitting. On failure, the error of
/// one failing part: the first in order on one thread, any of them across threads (pooling's checks depend on the
/// window's geometry alone, so every plane fails alike). A width of 0 gives no call.
pub(super) fn try_for_each_part<I: Sync, O: Send>(
    work: Work,
    (outputs, width): (&mut [O], usize),
    (inputs, input_width): (&[I], usize),
    f: impl Fn(&mut [O], &[I]) -> Result<()> + Sync + Send,
) -> Result<()> {
    if width == 0 || input_width == 0 {
        return Ok(());
    }
    if split(work, outputs.len()) {
        let parts = outputs.par_chunks_exact_mut(width).zip(inputs.par_chunks_exact(input_width));
        parts.try_for_each(|(outputs, inputs)| f(outputs, inputs))
    } else {
        let mut parts = outputs.chunks_exact_mut(width).zip(inputs.chunks_exact(input_width));
        parts.try_for_each(|(outputs, inputs)| f(outputs, inputs))
    }
}
