//! The ndarray backend's ways of splitting a pass across rayon's threads, by `crate::parallel`'s rule: over
//! `Zip`s (rows: `crate::parallel::for_each_row`; planes: `crate::parallel::try_for_each_part`).

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
