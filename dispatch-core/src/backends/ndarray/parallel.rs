//! The ndarray backend's ways of splitting a pass across rayon's threads, by `crate::parallel`'s rule: over
//! `Zip`s and rows (planes: `crate::parallel::try_for_each_part`).

use rayon::prelude::*;

use crate::parallel::{Work, split};

/// `$zip.for_each($f)`, or `par_for_each` when a pass of `$work` over `$len` elements is worth splitting: `$f`
/// writes one element (one lane) from the zipped ones.
macro_rules! zip_for_each {
    ($work:expr, $len:expr, $zip:expr, $f:expr) => {{
        let (zip, f) = ($zip, $f);
        if $crate::parallel::split($work, $len) { zip.par_for_each(f) } else { zip.for_each(f) }
    }};
}
pub(super) use zip_for_each;

/// `$zip.map_collect($f)`, or `par_map_collect` when worth splitting: an array in the zipped arrays' memory order, of
/// `$f` of each element of them.
macro_rules! zip_map_collect {
    ($work:expr, $len:expr, $zip:expr, $f:expr) => {{
        let (zip, f) = ($zip, $f);
        if $crate::parallel::split($work, $len) { zip.par_map_collect(f) } else { zip.map_collect(f) }
    }};
}
pub(super) use zip_map_collect;

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
