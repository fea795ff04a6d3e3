//! Comparisons and masks: bool tensors from float ones, and back.

use dispatch_core::{Backend, Result};

use super::outputs::{Bools, Floats};
use crate::operands::Operands;

type Compare<B> = fn(&<B as Backend>::FloatTensor, &<B as Backend>::FloatTensor) -> Result<<B as Backend>::BoolTensor>;
type CompareScalar<B> = fn(&<B as Backend>::FloatTensor, f64) -> Result<<B as Backend>::BoolTensor>;

/// `cube` against `partner`, which ties half its entries and exceeds the rest, on either side; then shapes that do
/// not broadcast, and two dtypes.
fn compare<B: Backend>(o: &Operands<B>, op: Compare<B>) -> Bools<B> {
    let calls = [op(&o.cube, &o.partner), op(&o.partner, &o.cube), op(&o.cube, &o.pair)];
    calls.into_iter().chain(o.mixing(|other| op(&o.cube, other))).collect()
}

/// Against 0.4375, an entry of `cube`, and against 0.45, which `F16` and `BF16` round to other values.
fn compare_scalar<B: Backend>(o: &Operands<B>, op: CompareScalar<B>) -> Bools<B> {
    vec![op(&o.cube, 0.4375), op(&o.fine, 0.45)]
}

pub fn eq<B: Backend>(o: &Operands<B>) -> Bools<B> {
    compare(o, B::eq)
}

pub fn ne<B: Backend>(o: &Operands<B>) -> Bools<B> {
    compare(o, B::ne)
}

pub fn lt<B: Backend>(o: &Operands<B>) -> Bools<B> {
    compare(o, B::lt)
}

pub fn le<B: Backend>(o: &Operands<B>) -> Bools<B> {
    compare(o, B::le)
}

pub fn gt<B: Backend>(o: &Operands<B>) -> Bools<B> {
    compare(o, B::gt)
}

pub fn ge<B: Backend>(o: &Operands<B>) -> Bools<B> {
    compare(o, B::ge)
}

pub fn eq_scalar<B: Backend>(o: &Operands<B>) -> Bools<B> {
    compare_scalar(o, B::eq_scalar)
}

pub fn ne_scalar<B: Backend>(o: &Operands<B>) -> Bools<B> {
    compare_scalar(o, B::ne_scalar)
}

pub fn lt_scalar<B: Backend>(o: &Operands<B>) -> Bools<B> {
    compare_scalar(o, B::lt_scalar)
}

pub fn le_scalar<B: Backend>(o: &Operands<B>) -> Bools<B> {
    compare_scalar(o, B::le_scalar)
}

pub fn gt_scalar<B: Backend>(o: &Operands<B>) -> Bools<B> {
    compare_scalar(o, B::gt_scalar)
}

pub fn ge_scalar<B: Backend>(o: &Operands<B>) -> Bools<B> {
    compare_scalar(o, B::ge_scalar)
}

pub fn mask_where<B: Backend>(o: &Operands<B>) -> Floats<B> {
    let calls = [
        // A [3, 4] mask, a [2, 3, 4] and a [3, 1] branch: all three broadcast.
        B::mask_where(&o.mask, &o.cube, &o.column),
        // A [3] mask, a [2, 3] and a [2, 1, 3] branch.
        B::mask_where(&o.flag_row, &o.pair, &o.thin),
        B::mask_where(&o.flags, &o.pair, &o.row),
    ];
    calls.into_iter().chain(o.mixing(|other| B::mask_where(&o.mask, &o.cube, other))).collect()
}

pub fn mask_fill<B: Backend>(o: &Operands<B>) -> Floats<B> {
    vec![
        B::mask_fill(&o.cube, &o.mask, -2.5),
        B::mask_fill(&o.pair, &o.flags, 0.1),
        B::mask_fill(&o.cube, &o.flags, 1.0),
    ]
}
