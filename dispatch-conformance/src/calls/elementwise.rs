//! Element-wise ops: binary ones broadcasting, scalar ones, unary ones.

use dispatch_core::backend::AdamStep;
use dispatch_core::{Backend, Result};

use super::outputs::Floats;
use crate::operands::Operands;

type Binary<B> = fn(&<B as Backend>::FloatTensor, &<B as Backend>::FloatTensor) -> Result<<B as Backend>::FloatTensor>;
type Unary<B> = fn(&<B as Backend>::FloatTensor) -> Result<<B as Backend>::FloatTensor>;

/// A binary op broadcasting a column, a row (on either side) and a matrix with ties, then operands whose shapes do
/// not broadcast and operands of two dtypes.
fn binary<B: Backend>(o: &Operands<B>, op: Binary<B>) -> Floats<B> {
    let calls = [op(&o.cube, &o.column), op(&o.row, &o.cube), op(&o.cube, &o.partner), op(&o.cube, &o.pair)];
    calls.into_iter().chain(o.mixing(|other| op(&o.cube, other))).collect()
}

type GivenUp<B> = fn(<B as Backend>::FloatTensor, &<B as Backend>::FloatTensor) -> Result<<B as Backend>::FloatTensor>;

/// A binary op given its left operand, on the operands of `binary`: each once as a clone, which the operands still
/// hold (so the backend must leave it as it was), and once as a copy nothing else holds (so it may write over it).
fn binary_into<B: Backend>(o: &Operands<B>, op: GivenUp<B>) -> Floats<B> {
    let given = |lhs: &B::FloatTensor, rhs: &B::FloatTensor| {
        [op(lhs.clone(), rhs), unshared::<B>(lhs).and_then(|lhs| op(lhs, rhs))]
    };
    let calls =
        [given(&o.cube, &o.column), given(&o.row, &o.cube), given(&o.cube, &o.partner), given(&o.cube, &o.pair)];
    calls.into_iter().flatten().chain(o.mixing(|other| op(o.cube.clone(), other))).collect()
}

/// A copy of `tensor` that nothing else holds: its product with 1, which every dtype holds exactly.
fn unshared<B: Backend>(tensor: &B::FloatTensor) -> Result<B::FloatTensor> {
    B::mul_scalar(tensor, 1.0)
}

/// A unary op on values in `[-1.44, 1.44]` and on wider ones (`fine`, `[-4.3, 4.7]`).
fn unary<B: Backend>(o: &Operands<B>, op: Unary<B>) -> Floats<B> {
    vec![op(&o.cube), op(&o.fine)]
}

pub fn add<B: Backend>(o: &Operands<B>) -> Floats<B> {
    binary(o, B::add)
}

pub fn sub<B: Backend>(o: &Operands<B>) -> Floats<B> {
    binary(o, B::sub)
}

pub fn mul<B: Backend>(o: &Operands<B>) -> Floats<B> {
    binary(o, B::mul)
}

/// `row` and `column` hold no zero; `cube / partner` does not either.
pub fn div<B: Backend>(o: &Operands<B>) -> Floats<B> {
    binary(o, B::div)
}

pub fn add_into<B: Backend>(o: &Operands<B>) -> Floats<B> {
    binary_into(o, B::add_into)
}

pub fn sub_into<B: Backend>(o: &Operands<B>) -> Floats<B> {
    binary_into(o, B::sub_into)
}

pub fn mul_into<B: Backend>(o: &Operands<B>) -> Floats<B> {
    binary_into(o, B::mul_into)
}

/// As `div`'s, no divisor holds a zero.
pub fn div_into<B: Backend>(o: &Operands<B>) -> Floats<B> {
    binary_into(o, B::div_into)
}

pub fn maximum<B: Backend>(o: &Operands<B>) -> Floats<B> {
    binary(o, B::maximum)
}

pub fn minimum<B: Backend>(o: &Operands<B>) -> Floats<B> {
    binary(o, B::minimum)
}

pub fn add_scalar<B: Backend>(o: &Operands<B>) -> Floats<B> {
    vec![B::add_scalar(&o.cube, 0.3), B::add_scalar(&o.fine, -1.0 / 3.0)]
}

pub fn mul_scalar<B: Backend>(o: &Operands<B>) -> Floats<B> {
    vec![B::mul_scalar(&o.cube, -1.7), B::mul_scalar(&o.fine, 0.1)]
}

/// `add_scalar`'s calls, each once given a clone and once a copy nothing else holds.
pub fn add_scalar_into<B: Backend>(o: &Operands<B>) -> Floats<B> {
    vec![
        B::add_scalar_into(o.cube.clone(), 0.3),
        unshared::<B>(&o.cube).and_then(|cube| B::add_scalar_into(cube, 0.3)),
        B::add_scalar_into(o.fine.clone(), -1.0 / 3.0),
        unshared::<B>(&o.fine).and_then(|fine| B::add_scalar_into(fine, -1.0 / 3.0)),
    ]
}

/// `mul_scalar`'s calls, each once given a clone and once a copy nothing else holds.
pub fn mul_scalar_into<B: Backend>(o: &Operands<B>) -> Floats<B> {
    vec![
        B::mul_scalar_into(o.cube.clone(), -1.7),
        unshared::<B>(&o.cube).and_then(|cube| B::mul_scalar_into(cube, -1.7)),
        B::mul_scalar_into(o.fine.clone(), 0.1),
        unshared::<B>(&o.fine).and_then(|fine| B::mul_scalar_into(fine, 0.1)),
    ]
}

/// Square roots of negative values are NaN, in the same places everywhere.
pub fn powf_scalar<B: Backend>(o: &Operands<B>) -> Floats<B> {
    vec![
        B::powf_scalar(&o.positive, 1.5),
        B::powf_scalar(&o.cube, 2.0),
        B::powf_scalar(&o.cube, 3.0),
        B::powf_scalar(&o.cube, 0.5),
        B::powf_scalar(&o.positive, -0.75),
    ]
}

pub fn neg<B: Backend>(o: &Operands<B>) -> Floats<B> {
    unary(o, B::neg)
}

pub fn exp<B: Backend>(o: &Operands<B>) -> Floats<B> {
    unary(o, B::exp)
}

/// NaN below zero.
pub fn log<B: Backend>(o: &Operands<B>) -> Floats<B> {
    vec![B::log(&o.positive), B::log(&o.fine)]
}

pub fn relu<B: Backend>(o: &Operands<B>) -> Floats<B> {
    unary(o, B::relu)
}

pub fn sigmoid<B: Backend>(o: &Operands<B>) -> Floats<B> {
    unary(o, B::sigmoid)
}

pub fn tanh<B: Backend>(o: &Operands<B>) -> Floats<B> {
    unary(o, B::tanh)
}

/// NaN below zero.
pub fn sqrt<B: Backend>(o: &Operands<B>) -> Floats<B> {
    vec![B::sqrt(&o.positive), B::sqrt(&o.fine)]
}

pub fn recip<B: Backend>(o: &Operands<B>) -> Floats<B> {
    unary(o, B::recip)
}

pub fn abs<B: Backend>(o: &Operands<B>) -> Floats<B> {
    unary(o, B::abs)
}

pub fn sin<B: Backend>(o: &Operands<B>) -> Floats<B> {
    unary(o, B::sin)
}

pub fn cos<B: Backend>(o: &Operands<B>) -> Floats<B> {
    unary(o, B::cos)
}

pub fn erf<B: Backend>(o: &Operands<B>) -> Floats<B> {
    unary(o, B::erf)
}

pub fn gelu<B: Backend>(o: &Operands<B>) -> Floats<B> {
    unary(o, B::gelu)
}

/// The derivative of `gelu` at a matrix and at wider values, times gradients broadcast as `binary`'s are.
pub fn gelu_backward<B: Backend>(o: &Operands<B>) -> Floats<B> {
    let calls = [B::gelu_backward(&o.fine, &o.cube), B::gelu_backward(&o.cube, &o.partner)];
    calls.into_iter().chain(binary(o, B::gelu_backward)).collect()
}

/// AdamW's step (decay, third step) on `cube` and Adam's (an L2 penalty, first step) on `fine`, with moments
/// `cube` and `positive` (a second moment is never negative); then options out of range, a gradient of another
/// shape, moments of the parameter's own shape, and a gradient of another dtype.
pub fn adam_step<B: Backend>(o: &Operands<B>) -> Floats<B> {
    let adam_w = AdamStep { lr: 0.1, betas: (0.9, 0.999), eps: 1e-8, weight_decay: 0.01, decoupled: true, step: 3 };
    let adam = AdamStep { lr: 0.05, betas: (0.8, 0.99), eps: 1e-3, weight_decay: 0.1, decoupled: false, step: 1 };
    let moments = match B::stack(&[o.cube.clone(), o.positive.clone()], 0) {
        Ok(moments) => moments,
        Err(error) => return vec![Err(error)],
    };
    let calls = [
        B::adam_step(&o.cube, &o.fine, &moments, adam_w),
        B::adam_step(&o.fine, &o.cube, &moments, adam),
        B::adam_step(&o.cube, &o.fine, &moments, AdamStep { step: 0, ..adam_w }),
        B::adam_step(&o.cube, &o.fine, &moments, AdamStep { betas: (1.0, 0.999), ..adam_w }),
        B::adam_step(&o.cube, &o.fine, &moments, AdamStep { lr: f64::NAN, ..adam_w }),
        B::adam_step(&o.cube, &o.pair, &moments, adam_w),
        B::adam_step(&o.cube, &o.fine, &o.positive, adam_w),
    ];
    calls.into_iter().chain(o.mixing(|other| B::adam_step(&o.cube, other, &moments, adam_w))).collect()
}

pub fn silu<B: Backend>(o: &Operands<B>) -> Floats<B> {
    unary(o, B::silu)
}

pub fn clamp<B: Backend>(o: &Operands<B>) -> Floats<B> {
    vec![
        B::clamp(&o.cube, -0.5, 0.75),
        B::clamp(&o.fine, -3.0, 2.0),
        // `min` above `max`.
        B::clamp(&o.cube, 1.0, -1.0),
    ]
}
