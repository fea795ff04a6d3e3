//! Work split across rayon's threads once a pass is large enough that a second core pays for waking it: the
//! element-wise ops, the per-lane normalisations, pooling's planes and batches of small matrix products, on both
//! CPU backends. Each element (lane, plane, matrix) is computed exactly as on one thread, so no value depends on
//! how many threads there are.
//!
//! The threads are rayon's global pool. A thread outside it that splits a pass hands the parts to the pool and
//! sleeps until they are done; [`build_pool_with_calling_thread`] makes the thread that runs a training loop one of
//! the pool's, so that it works on its own passes.

use std::mem::MaybeUninit;
use std::ops::Range;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use rayon::prelude::*;

use crate::error::{Error, Result};

/// Builds rayon's global pool, which the CPU backends split their passes over, with `threads` threads of which the
/// calling thread is one, and returns how many it has. `0` asks for rayon's default count: `RAYON_NUM_THREADS`,
/// else one thread per core.
///
/// Call it first, on the thread that will run the training loop, and keep that thread alive while ops run (the
/// main thread). Without it, that thread is outside the pool: each pass it splits is handed to the pool's threads
/// while it sleeps until they are done, and on a few cores those sleeps and wake-ups cost more than many splits
/// save. With it, the thread computes a share of its own passes, as PyTorch's calling thread does with OpenMP:
/// BENCHMARKS.md (group 7) measures the GPT training step at 0.85-0.87 of its time on two cores.
///
/// With one thread the pool is one thread of rayon's own, not the calling thread: a pool whose only thread is the
/// caller would never run work that another thread hands it (an in-process rank's pass, say). No pass is split then.
///
/// An `Err` ([`Error::ThreadPool`]) when rayon's global pool exists already: an earlier call built it, or a pass
/// split across threads before this call did. The pool is unchanged then.
///
/// ```standalone_crate
/// # use dispatch_core::backends::{NdArray, NdArrayDevice};
/// # use dispatch_core::{Tensor, parallel};
/// let threads = parallel::build_pool_with_calling_thread(2)?;
/// assert_eq!(threads, 2);
/// // Passes split from here on run partly on this thread.
/// let x = Tensor::<NdArray>::from_vec(vec![0.0; 1 << 16], [256, 256], &NdArrayDevice)?;
/// assert_eq!(x.exp()?.sum()?.to_scalar()?, 65536.0);
/// assert!(parallel::build_pool_with_calling_thread(2).is_err()); // built already
/// # Ok::<(), dispatch_core::Error>(())
/// ```
pub fn build_pool_with_calling_thread(threads: usize) -> Result<usize> {
    let threads = if threads > 0 { threads } else { default_thread_count() };
    let builder = rayon::ThreadPoolBuilder::new().num_threads(threads);
    let builder = if threads > 1 { builder.use_current_thread() } else { builder };
    builder
        .build_global()
        .map_err(|error| Error::ThreadPool { op: "build_pool_with_calling_thread", source: Box::new(error) })?;
    Ok(threads)
}

/// Keeps the pool's other threads polling for work, instead of sleeping between passes, while the returned guard
/// lives (a thread that finds none for 50 ms goes back to sleeping, and polls again from the next split pass): a
/// pass split across threads then starts on them at once, without a wake-up through the kernel. Call it on
/// the thread that runs the training loop (after [`build_pool_with_calling_thread`]) and hold the guard for the
/// loop: with it, and matrix products on the same pool, the GPT training step took 0.86x (ndarray) and 0.87x
/// (candle) its time on two cores (BENCHMARKS.md, group 7), as PyTorch's OpenMP threads also spin between regions.
///
/// The cost is that each of those threads keeps a core busy while the guard lives, with or without work, so drop
/// it when the loop ends (or before the thread waits on something else: I/O, a channel), and hold it only around
/// dispatch's own work: another pool in the process (candle 0.11's own, which candle's native ops run on) would
/// compete with the polling threads for the cores. With one thread in the pool it does nothing, since no pass is
/// split then.
///
/// ```standalone_crate
/// # use dispatch_core::backends::{NdArray, NdArrayDevice};
/// # use dispatch_core::{Tensor, parallel};
/// parallel::build_pool_with_calling_thread(2)?;
/// let spinning = parallel::keep_pool_spinning();
/// let x = Tensor::<NdArray>::from_vec(vec![0.0; 1 << 16], [256, 256], &NdArrayDevice)?;
/// assert_eq!(x.exp()?.sum()?.to_scalar()?, 65536.0);
/// drop(spinning); // the other thread sleeps when idle again
/// # Ok::<(), dispatch_core::Error>(())
/// ```
#[must_use = "the pool's threads spin only while the guard lives"]
pub fn keep_pool_spinning() -> PoolSpinning {
    GUARDS.fetch_add(1, Ordering::AcqRel);
    rearm_polling();
    PoolSpinning { _guard: () }
}

/// Sends each of the pool's threads a polling job while a guard lives and no such job is out: when a guard is made,
/// and when a pass is split, so that threads whose polling ended in a stretch without work poll again from the next
/// pass (a guard is held for a whole training loop, whose evaluations and prints can leave the pool idle for longer).
/// The cost on a pass is two loads.
pub(crate) fn rearm_polling() {
    if GUARDS.load(Ordering::Acquire) == 0 {
        return;
    }
    let threads = rayon::current_num_threads();
    if threads < 2 || POLL_JOBS_OUT.compare_exchange(0, threads, Ordering::AcqRel, Ordering::Relaxed).is_err() {
        return;
    }
    let caller = rayon::current_thread_index();
    // One job on each of the pool's threads, which no other thread can take; the caller's returns at once.
    rayon::spawn_broadcast(move |context| {
        let _done = PollJobDone;
        if Some(context.index()) != caller {
            poll_while_guarded();
        }
    });
}

/// How many guards of [`keep_pool_spinning`] live now.
static GUARDS: AtomicUsize = AtomicUsize::new(0);

/// How many jobs of the last polling broadcast have not returned: `rearm_polling` sends another only when none is.
static POLL_JOBS_OUT: AtomicUsize = AtomicUsize::new(0);

/// One job of a polling broadcast, counted out of [`POLL_JOBS_OUT`] when it returns, even by a job's panic.
struct PollJobDone;

impl Drop for PollJobDone {
    fn drop(&mut self) {
        POLL_JOBS_OUT.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Runs the pool's work as it comes (queued on this thread, taken from another's, or handed in from outside the
/// pool) while a guard lives, or until it has found none for `IDLE_POLL`.
///
/// A polling job can reach a thread inside another job's wait: a part of a pass the thread took before the polling
/// job, waiting there on a part another thread took. Polling on the stack above that wait holds the part, so the
/// pass, and the step that would drop the guard, wait forever (a test's loop of a guard a step hung so, with the
/// calling thread asleep in the pass and this one polling). rayon does not say whether a job runs inside another's
/// wait, so polling ends after a stretch without work: there, nothing else is left to run, and the next split pass
/// sends the job again (`rearm_polling`). Between a training step's passes the stretches are far shorter. A thread
/// polls once at a time, however many guards live: a polling job that reaches it while it polls returns at once.
fn poll_while_guarded() {
    if POLLING_HERE.replace(true) {
        return;
    }
    let _polling = Polling::start();
    let mut idle_since = None;
    while GUARDS.load(Ordering::Acquire) > 0 {
        if rayon::yield_now() == Some(rayon::Yield::Executed) {
            idle_since = None;
            continue;
        }
        if idle_since.get_or_insert_with(Instant::now).elapsed() > IDLE_POLL {
            return;
        }
        std::hint::spin_loop();
    }
}

/// How long a polling thread goes without work before it stops polling (see `poll_while_guarded`).
const IDLE_POLL: Duration = Duration::from_millis(50);

thread_local! {
    /// Whether this thread is polling for a guard of [`keep_pool_spinning`].
    static POLLING_HERE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// This thread's turn of polling, counted in [`POLLING`]; it ends when dropped, even by a job's panic.
struct Polling;

impl Polling {
    fn start() -> Self {
        POLLING.fetch_add(1, Ordering::AcqRel);
        Self
    }
}

impl Drop for Polling {
    fn drop(&mut self) {
        POLLING.fetch_sub(1, Ordering::AcqRel);
        POLLING_HERE.set(false);
    }
}

/// How many threads poll for work now, held by the guards of [`keep_pool_spinning`].
static POLLING: AtomicUsize = AtomicUsize::new(0);

/// How many of the pool's threads poll for work now, held by a guard of [`keep_pool_spinning`]: they start when they
/// next look for work, and stop soon after the guard is dropped.
pub fn polling_threads() -> usize {
    POLLING.load(Ordering::Acquire)
}

/// The guard of [`keep_pool_spinning`]: dropping the last one lets the pool's threads sleep when they have no work.
#[derive(Debug)]
pub struct PoolSpinning {
    _guard: (),
}

impl Drop for PoolSpinning {
    fn drop(&mut self) {
        GUARDS.fetch_sub(1, Ordering::AcqRel);
    }
}

/// rayon's own rule for its thread count: `RAYON_NUM_THREADS` when it is a positive number, else the cores.
fn default_thread_count() -> usize {
    let from_environment = std::env::var("RAYON_NUM_THREADS").ok().and_then(|value| value.parse().ok());
    from_environment
        .filter(|&threads| threads > 0)
        .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get))
}

/// How much one element of a pass costs, which sets how long the pass must be before it is split.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Work {
    /// An add, a comparison, a pick: a few cycles an element, bound by memory. (Only ndarray's passes are light:
    /// candle's own kernels run its light ones.)
    #[cfg_attr(not(feature = "ndarray"), allow(dead_code))]
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
pub(crate) fn split(work: Work, len: usize) -> bool {
    let split = len >= work.split_from() && rayon::current_num_threads() > 1;
    if split {
        rearm_polling();
    }
    split
}

/// `f(index, row)` on every `width`-long row of `values`, across threads when worth splitting. A trailing part
/// shorter than a row, or a width of 0, gets no call.
pub(crate) fn for_each_row<E: Send>(values: &mut [E], width: usize, f: impl Fn(usize, &mut [E]) + Sync + Send) {
    if width == 0 {
        return;
    }
    if split(Work::Heavy, values.len()) {
        values.par_chunks_exact_mut(width).enumerate().for_each(|(index, row)| f(index, row));
    } else {
        values.chunks_exact_mut(width).enumerate().for_each(|(index, row)| f(index, row));
    }
}

/// `f(start, part)` on consecutive parts of `outputs`, `start` being the index of the part's first element: a few
/// parts a thread when the pass is worth splitting, else the whole slice in one call.
pub(crate) fn for_each_part<O: Send>(work: Work, outputs: &mut [O], f: impl Fn(usize, &mut [O]) + Sync + Send) {
    for_each_part_of(work, outputs.len(), outputs, f);
}

/// `for_each_part`, for a pass of `work` over `len` elements that writes fewer (a sum of many rows into one): the
/// pass's length decides whether it is split.
pub(crate) fn for_each_part_of<O: Send>(
    work: Work,
    len: usize,
    outputs: &mut [O],
    f: impl Fn(usize, &mut [O]) + Sync + Send,
) {
    if split(work, len) {
        // Parts of at least 4096 elements: fewer would cost more to hand out than to compute.
        let part = outputs.len().div_ceil(rayon::current_num_threads().saturating_mul(4)).max(1 << 12);
        outputs.par_chunks_mut(part).enumerate().for_each(|(index, outputs)| f(index.saturating_mul(part), outputs));
    } else {
        f(0, outputs);
    }
}

/// `values`, emptied, holding `len` elements that `write(start, part)` writes part by part (as `for_each_part` splits
/// them) into its spare room, which is not cleared first: the outputs of the CPU backends' element-wise ops, whose
/// every element is written once. `None`, with nothing written, when `values` has room for fewer than `len`.
///
/// # Safety
///
/// `write` writes every element of each part it is handed.
pub(crate) unsafe fn written_in_parts<T: Send>(
    mut values: Vec<T>,
    len: usize,
    work: Work,
    write: impl Fn(usize, &mut [MaybeUninit<T>]) + Sync + Send,
) -> Option<Vec<T>> {
    values.clear();
    let outputs = values.spare_capacity_mut().get_mut(..len)?;
    for_each_part(work, outputs, write);
    // SAFETY: the first `len` elements lie within the capacity (checked above), and `write` wrote each of them.
    unsafe { values.set_len(len) };
    Some(values)
}

/// `values`, emptied, holding `len` elements that `write(rows, outputs)` writes a `width`-long row at a time (`rows`
/// being the row's range of indices, where its operands lie in theirs) into its spare room, not cleared first: the
/// outputs of the CPU backends' lane-wise kernels. Rows across threads when `work` over `len` elements is worth splitting. `None`, with nothing written, when
/// `values` has room for fewer than `len` or `len` is not a whole number of rows.
///
/// # Safety
///
/// `write` writes every element of each row it is handed.
pub(crate) unsafe fn written_in_rows<T: Send>(
    mut values: Vec<T>,
    (len, width): (usize, usize),
    work: Work,
    write: impl Fn(Range<usize>, &mut [MaybeUninit<T>]) + Sync + Send,
) -> Option<Vec<T>> {
    values.clear();
    if len.checked_rem(width).unwrap_or(len) != 0 {
        return None;
    }
    let outputs = values.spare_capacity_mut().get_mut(..len)?;
    // Rows tile `..len`, so neither end passes it.
    let write = |(row, outputs): (usize, &mut [MaybeUninit<T>])| write(row * width..(row + 1) * width, outputs);
    if width > 0 {
        if split(work, len) {
            outputs.par_chunks_exact_mut(width).enumerate().for_each(write);
        } else {
            outputs.chunks_exact_mut(width).enumerate().for_each(write);
        }
    }
    // SAFETY: the first `len` elements lie within the capacity (checked above), and `write` wrote each of them: the
    // rows tile them exactly, as `len` is a multiple of `width` (or 0).
    unsafe { values.set_len(len) };
    Some(values)
}

/// `f` on each `width`-long part of `outputs` with the `input_width`-long part of `inputs` of the same index (a
/// plane's outputs and the plane), across threads when the outputs are worth splitting. On failure, the error of
/// one failing part: the first in order on one thread, any of them across threads (pooling's checks depend on the
/// window's geometry alone, so every plane fails alike). A width of 0 gives no call.
pub(crate) fn try_for_each_part<I: Sync, O: Send>(
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn written_in_parts_holds_what_each_part_wrote_over_old_values_and_refuses_too_little_room() {
        // Heavy work of this size is split across the threads when there are several.
        let len = Work::Heavy.split_from() * 2 + 3;
        let old = vec![-1.0f32; len + 5];
        // SAFETY: each part writes all of its elements.
        let written = unsafe {
            written_in_parts(old, len, Work::Heavy, |start, part| {
                for (index, slot) in part.iter_mut().enumerate() {
                    slot.write((start + index) as f32);
                }
            })
        };
        let written = written.expect("room for `len`");
        assert_eq!(written.len(), len);
        assert!(written.iter().enumerate().all(|(index, &value)| value == index as f32));
        // SAFETY: never called: the buffer has less room than asked.
        let short = unsafe { written_in_parts(Vec::<f32>::with_capacity(2), 3, Work::Light, |_, _| {}) };
        assert!(short.is_none());
    }
}
