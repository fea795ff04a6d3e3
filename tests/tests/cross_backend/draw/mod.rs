//! Turns raw random bytes into a candidate step for the current value: mostly valid for its dims, and, when the
//! draw asks for a fault, with one argument that does not fit (an axis past the rank, operands that do not
//! broadcast, a mixed dtype, an index out of range...). The reference, not this module, decides what is an error.

mod attention;
mod int_bool;
mod layout;
mod window;

pub use int_bool::{bool_step, int_step};

use crate::support::program::{
    Binary, BoolOperand, Compare, Fill, FloatOperand, IntFill, IntOperand, LayerNormArgument, Reduce, ReduceDim,
    Scalar, Step, Unary,
};
use crate::support::values::{Draws, Floats, count};
use dispatch_core::DType;
use dispatch_core::backend::AdamStep;
use layout::{index_step, mask_step, narrow_or_cat, slice_assign, squeeze_or_flip, stack_expand_or_repeat};

pub type RawStep = (u8, u8, u8, u8, u64);

/// What a draw knows besides the current value: its bytes, whether it asks for a fault, and the float dtype
/// operands take.
pub struct Draw {
    pub kind: u8,
    pub a: usize,
    pub b: usize,
    pub c: usize,
    pub seed: u64,
    pub fault: bool,
    /// Which argument a fault puts out of place, where a step has several (independent of `c`, which decides
    /// `fault`).
    pub variant: usize,
    pub dtype: DType,
}

impl Draw {
    pub fn new((kind, a, b, c, seed): RawStep, dtype: DType) -> Self {
        let (fault, variant) = (c % 20 == 5, usize::from(c / 20));
        Self { kind, a: a.into(), b: b.into(), c: c.into(), seed, fault, variant, dtype }
    }

    /// The fault, if any, is an operand of another dtype (one time in three).
    pub fn dtype_fault(&self) -> bool {
        self.fault && self.variant.is_multiple_of(3)
    }

    /// The fault, if any, is an argument that does not fit (two times in three): never both in one step, so that
    /// the error's kind does not depend on which check a backend runs first.
    pub fn argument_fault(&self) -> bool {
        self.fault && !self.variant.is_multiple_of(3)
    }

    pub fn draws(&self, salt: u64) -> Draws {
        Draws::new(self.seed ^ salt.wrapping_mul(0x9e37_79b9))
    }

    pub fn bit(&self, salt: u64) -> bool {
        self.draws(salt).next().is_multiple_of(2)
    }

    /// A float operand of `dims` in the draw's dtype, or another dtype when the fault is a dtype mix.
    pub fn operand(&self, dims: Vec<usize>, salt: u64) -> FloatOperand {
        let dtype = if self.dtype_fault() { other_dtype(self.dtype) } else { self.dtype };
        let fill = if self.draws(salt).next().is_multiple_of(9) {
            Fill::Constant(scalar(self.draws(salt + 1).next() as usize))
        } else {
            Fill::Grid { seed: self.seed.wrapping_add(salt), low: -2.0, high: 2.0 }
        };
        FloatOperand { dims, fill, dtype }
    }

    fn ints(&self, dims: Vec<usize>, low: i64, high: i64, salt: u64) -> IntOperand {
        IntOperand { dims, fill: IntFill::Seeded { seed: self.seed.wrapping_add(salt), low, high } }
    }

    /// Indices in `0..len` (the fault: up to `len`, one past the end); an empty axis only takes no indices.
    fn indices(&self, dims: Vec<usize>, len: usize, salt: u64) -> IntOperand {
        let high = if self.argument_fault() { len as i64 } else { len as i64 - 1 };
        self.ints(dims, 0, high.max(0), salt)
    }

    fn mask(&self, dims: Vec<usize>, salt: u64) -> BoolOperand {
        BoolOperand { dims, seed: self.seed.wrapping_add(salt) }
    }
}

fn other_dtype(dtype: DType) -> DType {
    if dtype == DType::F64 { DType::F32 } else { DType::F64 }
}

/// Scalars for scalar arguments: some not exact in every dtype (0.1, 1/3), so rounding them once is exercised.
pub fn scalar(choice: usize) -> f64 {
    [0.5, -1.0, 2.0, 0.1, 1.0 / 3.0, -0.25, 0.0, 1.5][choice % 8]
}

pub fn pick<T: Copy>(options: &[T], choice: usize) -> T {
    options[choice % options.len()]
}

/// Dims that broadcast with `dims`: themselves, the last dim, a column, `[1]`, a new leading axis, some dims set to
/// 1, the dims without the first.
pub(super) fn partner(dims: &[usize], choice: usize, draw: &Draw) -> Vec<usize> {
    let rank = dims.len();
    match choice % 7 {
        0 => dims.to_vec(),
        1 => vec![dims[rank - 1]],
        2 if rank >= 2 => [&dims[..rank - 1], &[1]].concat(),
        3 => vec![1],
        4 if rank < 4 => [&[2], dims].concat(),
        5 => {
            let mut draws = draw.draws(77);
            dims.iter().map(|&size| if draws.next().is_multiple_of(2) { 1 } else { size }).collect()
        }
        _ if rank >= 2 => dims[1..].to_vec(),
        _ => dims.to_vec(),
    }
}

/// `dims` with one size that broadcasts with nothing it had (when there is one not of size 1).
pub(super) fn unfit(dims: &[usize]) -> Vec<usize> {
    let mut changed = dims.to_vec();
    if let Some(axis) = dims.iter().rposition(|&size| size != 1) {
        changed[axis] = if dims[axis] == 0 { 2 } else { dims[axis] + 1 };
    }
    changed
}

/// A partner, or an unfit one when the draw asks for a fault.
pub(super) fn partner_or_unfit(dims: &[usize], choice: usize, draw: &Draw) -> Vec<usize> {
    if draw.argument_fault() { unfit(dims) } else { partner(dims, choice, draw) }
}

pub(super) fn with_dim(dims: &[usize], axis: usize, size: usize) -> Vec<usize> {
    let mut changed = dims.to_vec();
    changed[axis] = size;
    changed
}

/// An axis of a tensor of `rank`, or `rank` itself when the draw asks for a fault.
pub(super) fn axis(draw: &Draw, rank: usize) -> usize {
    if draw.argument_fault() { rank } else { draw.a % rank }
}

pub(super) fn reshape_target(dims: &[usize], draw: &Draw) -> Vec<usize> {
    let n = count(dims);
    if draw.argument_fault() {
        return if draw.bit(3) { vec![] } else { vec![n + 1] };
    }
    let rank = dims.len();
    match draw.b % 5 {
        0 => vec![n],
        1 => dims.iter().rev().copied().collect(),
        2 if rank < 4 => [&[1], dims].concat(),
        3 if rank >= 2 => [&[dims[0] * dims[1]], &dims[2..]].concat(),
        _ => match dims.iter().position(|&size| size % 2 == 0 && size > 0) {
            Some(axis) if rank < 4 => [&dims[..axis], &[2, dims[axis] / 2], &dims[axis + 1..]].concat(),
            _ => vec![n],
        },
    }
}

fn permutation(draw: &Draw, rank: usize) -> Vec<usize> {
    let mut axes: Vec<usize> = (0..rank).collect();
    let mut draws = draw.draws(5);
    for i in (1..rank).rev() {
        axes.swap(i, (draws.next() % (i as u64 + 1)) as usize);
    }
    if draw.argument_fault() && rank >= 2 {
        axes[0] = axes[1];
    }
    axes
}

/// Whether an arithmetic step takes its first operand by value: from a bit of the seed no other choice reads.
fn given_up(draw: &Draw) -> bool {
    (draw.seed >> 40).is_multiple_of(2)
}

/// A float step for `current`.
pub fn float_step(current: &Floats, draw: &Draw) -> Step {
    let dims = &current.dims;
    let rank = dims.len();
    let (a, b, c) = (draw.a, draw.b, draw.c);
    match draw.kind % 24 {
        0 | 1 => {
            let binaries = [
                Binary::Add,
                Binary::Sub,
                Binary::Mul,
                Binary::Div,
                Binary::Maximum,
                Binary::Minimum,
                Binary::GeluBackward,
            ];
            let op = pick(&binaries, a);
            let mut other = draw.operand(partner_or_unfit(dims, b, draw), 1);
            if op == Binary::Div {
                other.fill = Fill::Grid { seed: draw.seed, low: 0.5, high: 2.0 };
            }
            let current_first = op == Binary::Div || (a / binaries.len()).is_multiple_of(2);
            Step::Binary { op, other, current_first, given_up: given_up(draw) }
        }
        2 => {
            let op = pick(&[Scalar::Add, Scalar::Mul, Scalar::Powf, Scalar::Greater], a);
            let scalar = if op == Scalar::Powf { pick(&[2.0, 3.0, 0.5, -1.0, 1.5, -0.5], b) } else { scalar(b) };
            Step::Scalar { op, scalar, given_up: given_up(draw) }
        }
        3 if c % 4 == 3 => adam_step(dims, draw),
        3 => {
            let (low, high) = (pick(&[-1.5, -0.5, 0.0, 0.25], b), pick(&[0.5, 1.0, 1.75], c));
            if draw.argument_fault() {
                Step::Clamp { min: high, max: low }
            } else {
                Step::Clamp { min: low, max: high }
            }
        }
        4 | 5 => Step::Unary(pick(
            &[
                Unary::Neg,
                Unary::Exp,
                Unary::Log,
                Unary::Relu,
                Unary::Sigmoid,
                Unary::Tanh,
                Unary::Sqrt,
                Unary::Recip,
                Unary::Abs,
                Unary::Sin,
                Unary::Cos,
                Unary::Erf,
                Unary::Gelu,
                Unary::Silu,
            ],
            a + 7 * usize::from(draw.kind % 24 == 5),
        )),
        6 if rank == 2 && b % 4 != 0 => cross_entropy(dims, draw),
        // Logits of another rank, now and then.
        6 if b % 2 == 0 && draw.argument_fault() => cross_entropy(dims, draw),
        6 => Step::Reduce(pick(&[Reduce::Sum, Reduce::Mean, Reduce::Prod, Reduce::Max, Reduce::Min], a)),
        7 if rank == 2 && b % 4 == 1 => cross_entropy(dims, draw),
        7 if b % 4 == 2 => attention::attention_weights(dims, draw),
        8 if b % 2 == 0 => layer_norm(dims, draw),
        7 | 8 => {
            let ops = [
                ReduceDim::Sum,
                ReduceDim::Mean,
                ReduceDim::Prod,
                ReduceDim::Max,
                ReduceDim::Min,
                ReduceDim::LogSoftmax,
                ReduceDim::Softmax,
                ReduceDim::Var(b % 2),
            ];
            Step::ReduceDim(pick(&ops, a + b), axis(draw, rank))
        }
        9 if draw.a % 4 >= 2 => attention::attention_weights(dims, draw),
        9 => matmul(current, draw),
        10 => match b % 3 {
            0 => Step::Reshape(reshape_target(dims, draw)),
            1 => Step::Permute(permutation(draw, rank)),
            _ => Step::SwapDims(axis(draw, rank), c % rank),
        },
        11 => squeeze_or_flip(dims, draw),
        12 => narrow_or_cat(dims, draw),
        13 => stack_expand_or_repeat(dims, draw),
        14 => slice_assign(dims, draw),
        15 | 16 => index_step(dims, draw),
        17 if rank == 2 => {
            let ids = (0..1 + b % 2).map(|k| (c >> k) % 4).collect();
            Step::Embedding { ids: draw.indices(ids, dims[0], 3) }
        }
        17 => Step::Reshape(vec![dims[0], count(dims) / dims[0].max(1)]),
        18 | 19 => window::window_step(&current.dims, draw),
        20 => mask_step(dims, draw),
        21 => match a % 4 {
            0 => Step::Cast(pick(&DType::ALL, b)),
            1 if current.dtype == DType::F32 || draw.argument_fault() => Step::ThroughHost,
            1 | 2 => Step::HostOp,
            _ => Step::ToDevice,
        },
        22 if a % 2 == 0 => {
            let op = pick(&[Compare::Eq, Compare::Ne, Compare::Lt, Compare::Le, Compare::Gt, Compare::Ge], b);
            Step::Compare { op, other: draw.operand(partner_or_unfit(dims, c, draw), 2) }
        }
        22 => {
            let op = pick(&[Compare::Eq, Compare::Ne, Compare::Lt, Compare::Le, Compare::Gt, Compare::Ge], b);
            Step::CompareScalar { op, scalar: pick(&[0.0, 0.5, -1.0, 0.1, 1.25], c) }
        }
        _ => {
            if a % 2 == 0 {
                Step::ArgMax(axis(draw, rank))
            } else {
                Step::ArgMin(axis(draw, rank))
            }
        }
    }
}

/// An `adam_step` of the current tensor: a gradient of its dims and `[2, ...]` moments in `[0, 1]` (a second moment
/// is never negative), AdamW with its decay or Adam without, at an early or a late step; `eps` keeps the denominator
/// away from 0 in every dtype. A fault gives the gradient dims that do not fit, the moments the parameter's own
/// dims, or the step number 0; a dtype fault, both operands another dtype.
fn adam_step(dims: &[usize], draw: &Draw) -> Step {
    let mut draws = draw.draws(17);
    let decoupled = draw.bit(19);
    let options = AdamStep {
        lr: pick(&[1e-3, 1e-2, 0.1], draws.next() as usize),
        betas: (0.9, pick(&[0.999, 0.99], draws.next() as usize)),
        eps: pick(&[1e-3, 0.1], draws.next() as usize),
        weight_decay: if decoupled { pick(&[0.0, 0.01, 0.5], draws.next() as usize) } else { 0.0 },
        decoupled,
        step: pick(&[1, 2, 10, 1000], draws.next() as usize),
    };
    let rows = [&[2], dims].concat();
    let (mut gradient, mut moments) = (draw.operand(dims.to_vec(), 1), draw.operand(rows, 2));
    moments.fill = Fill::Grid { seed: draw.seed.wrapping_add(2), low: 0.0, high: 1.0 };
    if !draw.argument_fault() {
        return Step::Adam { gradient, moments, options };
    }
    match draw.variant % 3 {
        0 => gradient.dims = unfit(dims),
        1 => moments.dims = dims.to_vec(),
        _ => return Step::Adam { gradient, moments, options: AdamStep { step: 0, ..options } },
    }
    Step::Adam { gradient, moments, options }
}

/// A `layer_norm` step: mostly the current tensor as the input, with `[width]` parameters; a vector now and then
/// as `gamma` or `beta` of an input of rank 1 to 3 drawn around it. A fault gives one of the operands a shape that
/// does not fit, or another dtype (both, or the second alone).
fn layer_norm(dims: &[usize], draw: &Draw) -> Step {
    let width = dims[dims.len() - 1];
    let current_as = match draw.a % 6 {
        1 if dims.len() == 1 => LayerNormArgument::Gamma,
        2 if dims.len() == 1 => LayerNormArgument::Beta,
        _ => LayerNormArgument::Input,
    };
    let rows = 1 + draw.b / 3 % 3;
    let input = |width: usize| match draw.b % 3 {
        0 => vec![width],
        1 => vec![rows, width],
        _ => vec![2, rows, width],
    };
    let mut shapes = match current_as {
        LayerNormArgument::Input => [vec![width], vec![width]],
        _ => [input(width), vec![width]],
    };
    let choice = draw.variant / 3;
    if draw.argument_fault() {
        let misfit = if current_as != LayerNormArgument::Input && choice.is_multiple_of(2) {
            input(width + 1)
        } else {
            // Broadcastable with `[width]` or not, never equal to it.
            match choice / 2 % 3 {
                0 => vec![width + 1],
                1 => vec![1, width],
                _ => vec![if width == 1 { 2 } else { 1 }],
            }
        };
        shapes[choice % 2] = misfit;
    }
    let [first, second] = shapes;
    let mut others = [draw.operand(first, 1), draw.operand(second, 2)];
    if draw.dtype_fault() && choice.is_multiple_of(2) {
        others[0].dtype = draw.dtype;
    }
    let eps = pick(&[1e-5, 0.1, 1.0], draw.draws(11).next() as usize);
    Step::LayerNorm { current_as, others, eps }
}

/// A `cross_entropy` step on the current tensor as the logits `[rows, classes]`: targets `[rows]` drawn in
/// `0..classes`, repeats common. A fault makes the targets negative (every one, or the first of an `arange`), or
/// `classes` and past, or gives them the wrong dims (one row too many, or a column); off rank 2 it is the logits'
/// rank.
fn cross_entropy(dims: &[usize], draw: &Draw) -> Step {
    // Off rank 2, the first and last axes stand in for the rows and the classes (a scalar has neither).
    let (rows, classes) = (dims.first().copied().unwrap_or(1), dims.last().map_or(1, |&last| last as i64));
    let in_range = |dims: Vec<usize>| draw.ints(dims, 0, (classes - 1).max(0), 3);
    let targets = if dims.len() != 2 || !draw.argument_fault() {
        in_range(vec![rows])
    } else {
        match (draw.variant / 3 % 4, draw.bit(13)) {
            (0, true) => draw.ints(vec![rows], -classes.max(1), -1, 3),
            (0, false) => IntOperand { dims: vec![rows], fill: IntFill::Arange { start: -1 } },
            (1, _) => draw.ints(vec![rows], classes, classes + 2, 3),
            (2, _) => in_range(vec![rows + 1]),
            _ => in_range(vec![rows, 1]),
        }
    };
    Step::CrossEntropy { targets }
}

fn matmul(current: &Floats, draw: &Draw) -> Step {
    let dims = &current.dims;
    let rank = dims.len();
    if rank < 2 && !draw.argument_fault() {
        return Step::Unsqueeze(0);
    }
    let (rows, inner) = if rank >= 2 { (dims[rank - 2], dims[rank - 1]) } else { (1, dims[0]) };
    let batch = &dims[..rank.saturating_sub(2)];
    // The batch of the operand: none, the same, some of it set to 1, a single axis against a trailing 1 of ours
    // ([2, 1, m, k] @ [3, k, n]), or a new leading axis.
    let other_batch = match draw.b % 5 {
        0 => vec![],
        1 => batch.to_vec(),
        2 if !batch.is_empty() => partner(batch, 5, draw),
        3 if batch.last() == Some(&1) => vec![3],
        4 if (2..4).contains(&rank) => [&[2], batch].concat(),
        _ => vec![],
    };
    let free = 1 + draw.c % 3;
    let current_first = draw.a.is_multiple_of(2);
    let contracted = if current_first { inner } else { rows };
    let contracted = if draw.argument_fault() { contracted + 1 } else { contracted };
    let matrix = if current_first { [contracted, free] } else { [free, contracted] };
    Step::Matmul { other: draw.operand([other_batch.as_slice(), &matrix].concat(), 4), current_first }
}
