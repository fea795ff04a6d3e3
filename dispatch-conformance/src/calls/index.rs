//! Indexing: int tensors pick from float ones, with indices repeated and out of order, then out of range.

use dispatch_core::Backend;

use super::outputs::Floats;
use crate::operands::Operands;

pub fn index_select<B: Backend>(o: &Operands<B>) -> Floats<B> {
    vec![
        B::index_select(&o.cube, 1, &o.picks),
        B::index_select(&o.cube, 2, &o.picks),
        // Index 2 along an axis of 2.
        B::index_select(&o.cube, 0, &o.picks),
        B::index_select(&o.cube, 1, &o.bad_picks),
        B::index_select(&o.cube, 3, &o.picks),
    ]
}

pub fn select_add<B: Backend>(o: &Operands<B>) -> Floats<B> {
    let calls = [
        B::select_add(&o.cube, 1, &o.picks, &o.spread),
        B::select_add(&o.cube, 1, &o.bad_picks, &o.slab),
        // `slab` has 2 entries along axis 1, `picks` 4.
        B::select_add(&o.cube, 1, &o.picks, &o.slab),
    ];
    calls.into_iter().chain(o.mixing(|other| B::select_add(other, 1, &o.picks, &o.spread))).collect()
}

pub fn gather<B: Backend>(o: &Operands<B>) -> Floats<B> {
    vec![
        B::gather(&o.cube, 2, &o.lane_picks),
        B::gather(&o.cube, 2, &o.bad_lane_picks),
        B::gather(&o.cube, 1, &o.picks),
    ]
}

pub fn scatter_add<B: Backend>(o: &Operands<B>) -> Floats<B> {
    vec![
        B::scatter_add(&o.cube, 2, &o.lane_picks, &o.lanes),
        B::scatter_add(&o.cube, 2, &o.bad_lane_picks, &o.lanes),
        B::scatter_add(&o.cube, 2, &o.lane_picks, &o.slab),
    ]
}

pub fn embedding<B: Backend>(o: &Operands<B>) -> Floats<B> {
    vec![
        B::embedding(&o.table, &o.ids),
        B::embedding(&o.table, &o.lane_picks),
        // Id 4 of a table of 2 rows.
        B::embedding(&o.pair, &o.ids),
    ]
}

pub fn one_hot<B: Backend>(o: &Operands<B>) -> Floats<B> {
    vec![
        B::one_hot(&o.ids, 5, o.dtype),
        B::one_hot(&o.lane_picks, 6, o.dtype),
        // Id 4 of 4 classes.
        B::one_hot(&o.ids, 4, o.dtype),
    ]
}
