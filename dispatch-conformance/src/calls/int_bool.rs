//! Int and bool tensors: arithmetic and comparisons broadcasting, conversions, and shapes that do not fit.

use dispatch_core::{Backend, Result, Shape};

use super::outputs::{Bools, Floats, Ints};
use crate::operands::Operands;

type IntBinary<B> = fn(&<B as Backend>::IntTensor, &<B as Backend>::IntTensor) -> Result<<B as Backend>::IntTensor>;
type IntCompare<B> = fn(&<B as Backend>::IntTensor, &<B as Backend>::IntTensor) -> Result<<B as Backend>::BoolTensor>;
type BoolBinary<B> = fn(&<B as Backend>::BoolTensor, &<B as Backend>::BoolTensor) -> Result<<B as Backend>::BoolTensor>;

/// `[2, 3]` and `[3]` on either side (signs mixed, one tie), then `[2, 3]` and `[4]`, which do not broadcast.
fn int_binary<B: Backend>(o: &Operands<B>, op: IntBinary<B>) -> Ints<B> {
    vec![op(&o.ints, &o.int_row), op(&o.int_row, &o.ints), op(&o.ints, &o.picks)]
}

fn int_compare<B: Backend>(o: &Operands<B>, op: IntCompare<B>) -> Bools<B> {
    vec![op(&o.ints, &o.int_row), op(&o.int_row, &o.ints), op(&o.ints, &o.picks)]
}

fn bool_binary<B: Backend>(o: &Operands<B>, op: BoolBinary<B>) -> Bools<B> {
    vec![op(&o.flags, &o.flag_row), op(&o.flag_row, &o.flags), op(&o.flags, &o.mask)]
}

pub fn int_from_vec<B: Backend>(o: &Operands<B>) -> Ints<B> {
    vec![
        B::int_from_vec(vec![5, -2, i64::MAX, 0, 3, i64::MIN], Shape::new([3, 2]), &o.device),
        B::int_from_vec(vec![1, 2, 3], Shape::new([2, 2]), &o.device),
    ]
}

pub fn int_to_vec<B: Backend>(o: &Operands<B>) -> Vec<Result<Vec<i64>>> {
    vec![B::int_to_vec(&o.ints), B::int_to_vec(&o.lane_picks)]
}

pub fn int_shape<B: Backend>(o: &Operands<B>) -> Vec<Shape> {
    vec![B::int_shape(&o.ints), B::int_shape(&o.lane_picks)]
}

pub fn int_device<B: Backend>(o: &Operands<B>) -> Vec<B::Device> {
    vec![B::int_device(&o.ints)]
}

/// The one device there is: the same values, which the test allows this op alone.
pub fn int_to_device<B: Backend>(o: &Operands<B>) -> Ints<B> {
    vec![B::int_to_device(&o.ints, &o.device)]
}

pub fn arange<B: Backend>(o: &Operands<B>) -> Ints<B> {
    vec![B::arange(-2, 5, &o.device), B::arange(5, 2, &o.device), B::arange(3, 3, &o.device)]
}

pub fn int_add<B: Backend>(o: &Operands<B>) -> Ints<B> {
    int_binary(o, B::int_add)
}

pub fn int_sub<B: Backend>(o: &Operands<B>) -> Ints<B> {
    int_binary(o, B::int_sub)
}

pub fn int_mul<B: Backend>(o: &Operands<B>) -> Ints<B> {
    int_binary(o, B::int_mul)
}

/// Rounding toward zero on both signs; `int_row / ints` divides by a zero entry of `ints`.
pub fn int_div<B: Backend>(o: &Operands<B>) -> Ints<B> {
    let mut calls = int_binary(o, B::int_div);
    calls.push(B::int_div(&o.ints, &o.int_zeros));
    calls
}

pub fn int_add_scalar<B: Backend>(o: &Operands<B>) -> Ints<B> {
    vec![B::int_add_scalar(&o.ints, -3), B::int_add_scalar(&o.ints, i64::MAX)]
}

pub fn int_mul_scalar<B: Backend>(o: &Operands<B>) -> Ints<B> {
    vec![B::int_mul_scalar(&o.ints, 4), B::int_mul_scalar(&o.ints, -1)]
}

pub fn int_sum<B: Backend>(o: &Operands<B>) -> Ints<B> {
    vec![B::int_sum(&o.ints), B::int_sum(&o.lane_picks)]
}

pub fn int_eq<B: Backend>(o: &Operands<B>) -> Bools<B> {
    int_compare(o, B::int_eq)
}

pub fn int_lt<B: Backend>(o: &Operands<B>) -> Bools<B> {
    int_compare(o, B::int_lt)
}

pub fn int_le<B: Backend>(o: &Operands<B>) -> Bools<B> {
    int_compare(o, B::int_le)
}

pub fn int_gt<B: Backend>(o: &Operands<B>) -> Bools<B> {
    int_compare(o, B::int_gt)
}

pub fn int_ge<B: Backend>(o: &Operands<B>) -> Bools<B> {
    int_compare(o, B::int_ge)
}

pub fn int_eq_scalar<B: Backend>(o: &Operands<B>) -> Bools<B> {
    vec![B::int_eq_scalar(&o.ints, 3), B::int_eq_scalar(&o.lane_picks, 0)]
}

pub fn int_reshape<B: Backend>(o: &Operands<B>) -> Ints<B> {
    vec![B::int_reshape(&o.ints, Shape::new([3, 2])), B::int_reshape(&o.ints, Shape::new([4, 2]))]
}

pub fn int_to_float<B: Backend>(o: &Operands<B>) -> Floats<B> {
    let mut calls: Floats<B> = o.dtypes.iter().map(|&dtype| B::int_to_float(&o.ints, dtype)).collect();
    calls.push(B::int_to_float(&o.large_ints, o.dtype));
    calls
}

pub fn bool_from_vec<B: Backend>(o: &Operands<B>) -> Bools<B> {
    vec![
        B::bool_from_vec(vec![true, false, false, true], Shape::new([2, 2]), &o.device),
        B::bool_from_vec(vec![true], Shape::new([2]), &o.device),
    ]
}

pub fn bool_to_vec<B: Backend>(o: &Operands<B>) -> Vec<Result<Vec<bool>>> {
    vec![B::bool_to_vec(&o.flags), B::bool_to_vec(&o.mask)]
}

pub fn bool_shape<B: Backend>(o: &Operands<B>) -> Vec<Shape> {
    vec![B::bool_shape(&o.flags), B::bool_shape(&o.mask)]
}

pub fn bool_device<B: Backend>(o: &Operands<B>) -> Vec<B::Device> {
    vec![B::bool_device(&o.flags)]
}

/// The one device there is: the same values, which the test allows this op alone.
pub fn bool_to_device<B: Backend>(o: &Operands<B>) -> Bools<B> {
    vec![B::bool_to_device(&o.flags, &o.device)]
}

pub fn bool_and<B: Backend>(o: &Operands<B>) -> Bools<B> {
    bool_binary(o, B::bool_and)
}

pub fn bool_or<B: Backend>(o: &Operands<B>) -> Bools<B> {
    bool_binary(o, B::bool_or)
}

pub fn bool_not<B: Backend>(o: &Operands<B>) -> Bools<B> {
    vec![B::bool_not(&o.flags), B::bool_not(&o.mask)]
}

/// Some hold, none hold, and the empty tensor, where none holds.
pub fn bool_any<B: Backend>(o: &Operands<B>) -> Bools<B> {
    vec![B::bool_any(&o.flags), B::bool_any(&o.no_flags), B::bool_any(&o.empty_flags)]
}

/// Some fail, none fail, and the empty tensor, where all hold.
pub fn bool_all<B: Backend>(o: &Operands<B>) -> Bools<B> {
    vec![B::bool_all(&o.flags), B::bool_all(&o.all_flags), B::bool_all(&o.empty_flags)]
}

pub fn bool_to_int<B: Backend>(o: &Operands<B>) -> Ints<B> {
    vec![B::bool_to_int(&o.flags), B::bool_to_int(&o.mask)]
}

pub fn bool_to_float<B: Backend>(o: &Operands<B>) -> Floats<B> {
    vec![B::bool_to_float(&o.flags, o.dtype), B::bool_to_float(&o.mask, o.dtype)]
}
