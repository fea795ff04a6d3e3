//! Candidate steps on int and bool values.

use super::{Draw, partner, partner_or_unfit, pick, reshape_target, scalar};
use crate::support::program::{BoolBinary, IntBinary, IntCompare, Step};
use crate::support::values::Ints;
use dispatch_core::DType;

/// An int step for `current`.
pub fn int_step(current: &Ints, draw: &Draw) -> Step {
    let dims = &current.dims;
    let (a, b, c) = (draw.a, draw.b, draw.c);
    let small_indices = current.values.iter().all(|&x| (0..=8).contains(&x));
    let largest = current.values.iter().copied().max().unwrap_or(0).max(0) as usize;
    match draw.kind % 10 {
        0 => {
            let op = pick(&[IntBinary::Add, IntBinary::Sub, IntBinary::Mul, IntBinary::Div], a);
            let other_dims = partner_or_unfit(dims, b, draw);
            let other = match op {
                IntBinary::Div if draw.argument_fault() => draw.ints(other_dims, 0, 0, 32),
                IntBinary::Div => draw.ints(other_dims, 1, 3, 33),
                _ => draw.ints(other_dims, -3, 3, 34),
            };
            Step::IntBinary { op, other, current_first: op == IntBinary::Div || c % 2 == 0 }
        }
        1 if a % 2 == 0 => Step::IntAddScalar(b as i64 % 7 - 3),
        1 => Step::IntMulScalar(b as i64 % 7 - 3),
        2 => Step::IntSum,
        3 => {
            let op = pick(&[IntCompare::Eq, IntCompare::Lt, IntCompare::Le, IntCompare::Gt, IntCompare::Ge], a);
            Step::IntCompare { op, other: draw.ints(partner_or_unfit(dims, b, draw), -2, 3, 35) }
        }
        4 => Step::IntEqScalar(b as i64 % 4),
        5 => Step::IntReshape(reshape_target(dims, draw)),
        7 if a % 2 == 0 => Step::IntToDevice,
        8 if small_indices => {
            let classes = if draw.argument_fault() { largest } else { largest + 1 + b % 2 };
            Step::OneHot { classes, dtype: pick(&DType::ALL, c) }
        }
        9 if small_indices => {
            let vocabulary = if draw.argument_fault() { largest } else { largest + 1 + b % 2 };
            Step::EmbeddingOf { weights: draw.operand(vec![vocabulary, 1 + c % 3], 36) }
        }
        _ => Step::IntToFloat(if a % 3 == 0 { pick(&DType::ALL, b) } else { draw.dtype }),
    }
}

/// A bool step for `current`.
pub fn bool_step(current_dims: &[usize], draw: &Draw) -> Step {
    let dims = current_dims;
    let (a, b, c) = (draw.a, draw.b, draw.c);
    match draw.kind % 8 {
        0 => {
            let op = if a % 2 == 0 { BoolBinary::And } else { BoolBinary::Or };
            Step::BoolBinary { op, other: draw.mask(partner_or_unfit(dims, b, draw), 37) }
        }
        1 if a % 2 == 0 => Step::BoolNot,
        1 => Step::BoolToDevice,
        2 if a % 2 == 0 => Step::BoolAny,
        2 => Step::BoolAll,
        3 => Step::BoolToInt,
        4 | 5 => Step::BoolToFloat(if a % 3 == 0 { pick(&DType::ALL, b) } else { draw.dtype }),
        6 => Step::SelectBy {
            on_true: draw.operand(partner_or_unfit(dims, b, draw), 38),
            on_false: draw.operand(partner(dims, c, draw), 39),
        },
        _ => {
            let rank = dims.len();
            // The tensor the mask fills: the mask's dims, or more in front; the fault: one the mask grows.
            let tensor = if draw.argument_fault() {
                dims.iter().map(|&size| size.min(1)).collect::<Vec<_>>()
            } else if rank < 4 && b % 2 == 0 {
                [&[2], dims].concat()
            } else {
                dims.to_vec()
            };
            Step::FillBy { tensor: draw.operand(tensor, 40), value: scalar(c) }
        }
    }
}
