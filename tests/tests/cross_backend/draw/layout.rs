//! Candidate layout, indexing and mask steps.

use super::{Draw, partner, partner_or_unfit, pick, scalar, unfit, with_dim};
use crate::support::program::{IntFill, IntOperand, Step};

pub(super) fn squeeze_or_flip(dims: &[usize], draw: &Draw) -> Step {
    let rank = dims.len();
    match draw.b % 3 {
        0 => {
            let mut draws = draw.draws(6);
            let mut axes: Vec<usize> = (0..rank).filter(|_| draws.next().is_multiple_of(2)).collect();
            if axes.is_empty() {
                axes.push(draw.a % rank);
            }
            if draw.argument_fault() {
                axes.push(rank);
            }
            Step::Flip(axes)
        }
        1 => match dims.iter().position(|&size| size == 1) {
            _ if draw.argument_fault() => Step::Squeeze(dims.iter().position(|&size| size != 1).unwrap_or(0)),
            Some(axis) if rank >= 2 => Step::Squeeze(axis),
            _ if rank < 4 => Step::Unsqueeze(draw.a % (rank + 1)),
            _ => Step::Flip(vec![0]),
        },
        _ if rank < 4 || draw.argument_fault() => {
            Step::Unsqueeze(if draw.argument_fault() { rank + 1 } else { draw.a % (rank + 1) })
        }
        _ => Step::Squeeze(dims.iter().position(|&size| size == 1).unwrap_or(rank)),
    }
}

pub(super) fn narrow_or_cat(dims: &[usize], draw: &Draw) -> Step {
    let rank = dims.len();
    let axis = draw.a % rank;
    let size = dims[axis];
    if draw.b.is_multiple_of(2) {
        let len = draw.c % (size + 1);
        let start = if draw.argument_fault() { size + 1 - len } else { (draw.c / 7) % (size - len + 1) };
        return Step::Narrow {
            axis: if draw.argument_fault() && draw.variant.is_multiple_of(2) { rank } else { axis },
            start,
            len,
        };
    }
    let mut other = with_dim(dims, axis, draw.c % 3);
    if draw.argument_fault() && rank >= 2 && !draw.variant.is_multiple_of(3) {
        let changed = (axis + 1) % rank;
        other[changed] += 1;
    }
    Step::Cat { axis, other: draw.operand(other, 7), current_first: draw.bit(8) }
}

pub(super) fn stack_expand_or_repeat(dims: &[usize], draw: &Draw) -> Step {
    let rank = dims.len();
    match draw.b % 3 {
        0 if rank < 4 => {
            let other = if draw.argument_fault() { unfit(dims) } else { dims.to_vec() };
            Step::Stack { axis: draw.a % (rank + 1), other: draw.operand(other, 9), current_first: draw.bit(10) }
        }
        1 => {
            let mut draws = draw.draws(11);
            let mut target: Vec<usize> =
                dims.iter().map(|&size| if size == 1 { 1 + (draws.next() % 3) as usize } else { size }).collect();
            if rank < 4 && draw.bit(12) {
                target.insert(0, 2);
            }
            Step::Expand(if draw.argument_fault() { unfit(dims) } else { target })
        }
        _ => {
            let mut draws = draw.draws(13);
            let mut times: Vec<usize> = (0..rank).map(|_| pick(&[1, 2, 1, 0, 2, 1], draws.next() as usize)).collect();
            if draw.argument_fault() {
                times.push(2);
            }
            Step::Repeat(times)
        }
    }
}

pub(super) fn slice_assign(dims: &[usize], draw: &Draw) -> Step {
    let axis = draw.a % dims.len();
    let size = dims[axis];
    let current_is_source = draw.bit(14);
    let extra = if current_is_source { draw.b % 3 } else { 0 };
    // The tensor written into is `size + extra` long on `axis`; the source `len` long.
    let (len, whole) = if current_is_source { (size, size + extra) } else { (draw.b % (size + 1), size) };
    let start = if draw.argument_fault() { whole - len + 1 } else { draw.c % (whole - len + 1) };
    let other = if current_is_source { with_dim(dims, axis, whole) } else { with_dim(dims, axis, len) };
    Step::SliceAssign { axis, start, other: draw.operand(other, 15), current_is_source }
}

pub(super) fn index_step(dims: &[usize], draw: &Draw) -> Step {
    let rank = dims.len();
    let axis = draw.a % rank;
    let size = dims[axis];
    // How many entries the step picks along the axis (none from an empty axis, unless the draw asks for a fault).
    let picks = if size == 0 && !draw.argument_fault() { 0 } else { 1 + draw.c % 3 };
    let current_is_source = draw.bit(16);
    match (draw.kind % 24 == 15, draw.b % 2) {
        (true, 0) => {
            let indices = if draw.bit(17) && picks <= size {
                IntOperand { dims: vec![picks], fill: IntFill::Arange { start: (size - picks) as i64 } }
            } else {
                draw.indices(vec![picks], size, 18)
            };
            Step::IndexSelect { axis, indices }
        }
        (true, _) => Step::Gather { axis, indices: draw.indices(with_dim(dims, axis, picks), size, 19) },
        (false, 0) if !current_is_source => {
            let index_dims = with_dim(dims, axis, picks);
            let indices = draw.indices(index_dims.clone(), size, 20);
            Step::ScatterAdd { axis, indices, other: draw.operand(index_dims, 21), current_is_source }
        }
        (false, 0) => {
            let into = 1 + draw.c % 3;
            let indices = draw.indices(dims.to_vec(), into, 22);
            Step::ScatterAdd { axis, indices, other: draw.operand(with_dim(dims, axis, into), 23), current_is_source }
        }
        (false, _) if !current_is_source => {
            let indices = draw.indices(vec![picks], size, 24);
            Step::SelectAdd { axis, indices, other: draw.operand(with_dim(dims, axis, picks), 25), current_is_source }
        }
        (false, _) => {
            let into = 1 + draw.c % 3;
            let indices = draw.indices(vec![size], into, 26);
            Step::SelectAdd { axis, indices, other: draw.operand(with_dim(dims, axis, into), 27), current_is_source }
        }
    }
}

pub(super) fn mask_step(dims: &[usize], draw: &Draw) -> Step {
    let rank = dims.len();
    if draw.b.is_multiple_of(2) {
        let mask = draw.mask(partner_or_unfit(dims, draw.c, draw), 28);
        let other = draw.operand(partner(dims, draw.c / 7, draw), 29);
        return Step::MaskWhere { mask, other, current_on_true: draw.bit(30) };
    }
    // A mask that broadcasts to the dims without growing them (the fault: one that grows them).
    let mask_dims = if draw.argument_fault() {
        if rank < 4 { [&[2], dims].concat() } else { unfit(dims) }
    } else {
        match draw.c % 3 {
            0 => dims.to_vec(),
            1 => dims[rank / 2..].to_vec(),
            _ => partner(dims, 5, draw),
        }
    };
    Step::MaskFill { mask: draw.mask(mask_dims, 31), value: scalar(draw.a) }
}
