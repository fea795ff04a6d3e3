//! The data phase of each collective once a meeting is complete: every rank works on its own part, in
//! parallel, directly on the other ranks' buffers (no locks, no staging copies).
//!
//! Every `unsafe` here dereferences another rank's buffer. It relies on two rules: the buffer is alive and
//! unmoved for the whole data phase, which `Loan` (`loan.rs`) enforces (the owner's buffer stays borrowed until
//! the leave barrier, also when it unwinds, and the meeting is reachable only through the caller's own loan);
//! and ranks write disjoint parts, which each function below states for itself. Every buffer holds `T`: the ranks
//! agreed on the element type before the data phase, and a slice of another type is refused, not reinterpreted.

use crate::distributed::collective::{ReduceOp, split_range};
use crate::distributed::element::Element;
use crate::distributed::in_process::rendezvous::Meeting;
use crate::error::{Error, Result};
use crate::memory;

/// Bytes reduced per block (4096 `f32`, 2048 `f64`): small enough that a block of every rank stays in cache
/// between passes.
const BLOCK_BYTES: usize = 16 << 10;
/// Parts start on multiples of this many bytes (a cache line), so two ranks never write one cache line.
const ALIGN_BYTES: usize = 64;

/// In place: rank `rank` reduces part `rank` of every buffer and writes the result back into all of them.
pub(crate) fn all_reduce<T: Element>(meeting: &Meeting, rank: usize, op: ReduceOp, len: usize) -> Result<()> {
    let world_size = meeting.arrivals.len();
    let part = aligned_part::<T>(len, world_size, rank);
    let block = elements_in::<T>(BLOCK_BYTES);
    let mut parts = Vec::with_capacity(world_size);
    for arrival in &meeting.arrivals {
        // SAFETY: alive until the leave barrier (module comment); only this rank touches `part` of any buffer
        // during an all-reduce.
        parts.push(unsafe { arrival.buffer.slice_mut::<T>(part.clone()) }.ok_or_else(|| out_of_bounds("all_reduce"))?);
    }
    let Some((first, others)) = parts.split_first_mut() else {
        return Ok(());
    };
    for start in (0..first.len()).step_by(block) {
        // Clamped to the part's length, so saturating is exact.
        let end = start.saturating_add(block).min(first.len());
        let accumulator = &mut first[start..end];
        // Rank order, so every element is summed the same way whichever rank computes it.
        for other in others.iter() {
            accumulator.iter_mut().zip(&other[start..end]).for_each(|(sum, &value)| *sum += value);
        }
        op.finish_sums(accumulator, world_size);
        for other in others.iter_mut() {
            other[start..end].copy_from_slice(accumulator);
        }
    }
    Ok(())
}

/// Every rank but the root copies the root's buffer into its own.
pub(crate) fn broadcast<T: Element>(meeting: &Meeting, rank: usize, root: usize) -> Result<()> {
    if rank == root {
        return Ok(());
    }
    let (Some(source), Some(own)) = (meeting.arrivals.get(root), meeting.arrivals.get(rank)) else {
        return Err(out_of_bounds("broadcast"));
    };
    let len = own.buffer.len();
    // SAFETY: alive until the leave barrier (module comment); nobody writes the root's buffer during a
    // broadcast, and no other rank reads or writes this rank's own buffer.
    let (values, own) = unsafe { (source.buffer.slice::<T>(0..len), own.buffer.slice_mut::<T>(0..len)) };
    let (Some(values), Some(own)) = (values, own) else {
        return Err(out_of_bounds("broadcast"));
    };
    own.copy_from_slice(values);
    Ok(())
}

/// This rank's output: every rank's buffer, in rank order.
pub(crate) fn all_gather<T: Element>(meeting: &Meeting, len: usize) -> Result<Vec<T>> {
    // The agreed output shape was checked already, so the product does not overflow; saturating keeps a bug
    // elsewhere an `OutOfMemory` rather than a wrapped size.
    let mut output = memory::try_vec("all_gather", len.saturating_mul(meeting.arrivals.len()))?;
    for arrival in &meeting.arrivals {
        // SAFETY: alive until the leave barrier (module comment); nobody writes any buffer during a gather.
        let values = unsafe { arrival.buffer.slice::<T>(0..len) }.ok_or_else(|| out_of_bounds("all_gather"))?;
        output.extend_from_slice(values);
    }
    Ok(output)
}

/// This rank's output: part `rank` (of `len / world_size` elements) of the reduction of every buffer.
pub(crate) fn reduce_scatter<T: Element>(meeting: &Meeting, rank: usize, op: ReduceOp, len: usize) -> Result<Vec<T>> {
    let world_size = meeting.arrivals.len();
    let part_len = len.checked_div(world_size).ok_or_else(|| out_of_bounds("reduce_scatter"))?;
    let part = rank.checked_mul(part_len).and_then(|start| Some(start..start.checked_add(part_len)?));
    let part = part.ok_or_else(|| out_of_bounds("reduce_scatter"))?;
    let mut output: Vec<T> = memory::try_vec("reduce_scatter", part.len())?;
    for (index, arrival) in meeting.arrivals.iter().enumerate() {
        // SAFETY: alive until the leave barrier (module comment); nobody writes any buffer during a
        // reduce-scatter.
        let values =
            unsafe { arrival.buffer.slice::<T>(part.clone()) }.ok_or_else(|| out_of_bounds("reduce_scatter"))?;
        if index == 0 {
            output.extend_from_slice(values);
        } else {
            output.iter_mut().zip(values).for_each(|(sum, &value)| *sum += value);
        }
    }
    op.finish_sums(&mut output, world_size);
    Ok(output)
}

/// `split_range` with boundaries rounded to `ALIGN_BYTES`.
fn aligned_part<T>(len: usize, world_size: usize, rank: usize) -> std::ops::Range<usize> {
    let align = elements_in::<T>(ALIGN_BYTES);
    let blocks = len.div_ceil(align);
    let part = split_range(blocks, world_size, rank);
    // Clamped to `len`, so saturating is exact.
    part.start.saturating_mul(align).min(len)..part.end.saturating_mul(align).min(len)
}

/// How many `T` fill `bytes`; at least one.
fn elements_in<T>(bytes: usize) -> usize {
    bytes.checked_div(size_of::<T>()).unwrap_or(bytes).max(1)
}

/// Buffers are checked against the agreed shape and element type before the data phase, so this only guards the
/// `unsafe` code against a bug elsewhere.
fn out_of_bounds(op: &'static str) -> Error {
    let details = "a rank's buffer does not match the agreed shape and element type".to_owned();
    Error::CollectiveMismatch { op, details }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligned_parts_cover_everything_once() {
        fn check<T>() {
            for len in [0, 1, 15, 16, 17, 1000, 4097] {
                for world_size in 1..5 {
                    let parts: Vec<_> = (0..world_size).map(|rank| aligned_part::<T>(len, world_size, rank)).collect();
                    assert_eq!(parts.first().map(|part| part.start), Some(0));
                    assert_eq!(parts.last().map(|part| part.end), Some(len));
                    assert!(parts.windows(2).all(|pair| pair[0].end == pair[1].start), "{parts:?}");
                    let starts = parts.iter().filter(|part| part.start < len).map(|part| part.start * size_of::<T>());
                    assert!(starts.into_iter().all(|start| start.is_multiple_of(ALIGN_BYTES)), "{parts:?}");
                }
            }
        }
        check::<f32>();
        check::<f64>();
    }
}
