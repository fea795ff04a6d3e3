//! Every backend computes the same thing: random small op programs (element-wise ops and functions with
//! broadcasting, matmul, layout ops, reductions, extremes and variance), in every float dtype, run on each base
//! backend and on `Autodiff` over it, and must agree to the dtype's tolerance (`dispatch_tests::agreement`).
//! `Autodiff<B>` must also match `B` bit for bit (it calls `B`'s ops), and the gradients of the autodiff backends
//! must agree with each other.

use dispatch_core::backends::Autodiff;
use dispatch_core::{AutodiffBackend, Backend, BaseBackend, DType, Result, Tensor};
use dispatch_tests::assert_close_f64;
use proptest::prelude::*;

/// Every base backend under test, one line each: its output and the gradient of `Autodiff` over it.
fn evaluate_on_every_backend(program: &Program) -> Vec<(String, Evaluation)> {
    vec![
        evaluate::<dispatch_core::backends::NdArray>(program, &Default::default()),
        evaluate::<dispatch_core::backends::Candle>(program, &Default::default()),
    ]
}

// ---- programs ---------------------------------------------------------------------------------------------------

/// An op applied to the current tensor, with everything it needs; valid for the shape it was planned for.
#[derive(Clone, Debug)]
enum Op {
    /// `current (op) other`, or `other (op) current` when `other_first`; `other` may broadcast either way.
    Binary {
        kind: BinaryKind,
        other: Vec<usize>,
        other_first: bool,
        seed: u64,
    },
    AddScalar(f64),
    MulScalar(f64),
    Neg,
    Relu,
    Sigmoid,
    Tanh,
    /// `exp(tanh(x))`: bounded, so long programs cannot overflow.
    BoundedExp,
    /// `log(x² + 1)`: defined everywhere.
    SoftLog,
    /// `(sigmoid(x) + 0.5)^p`: a base in (0.5, 1.5), positive for fractional exponents and bounded when repeated.
    Power(f64),
    Matmul {
        other: Vec<usize>,
        seed: u64,
    },
    SwapDims(usize, usize),
    Reshape(Vec<usize>),
    Narrow {
        axis: usize,
        start: usize,
        len: usize,
    },
    /// Concatenation with a random tensor along `axis`, before or after the current one.
    Cat {
        axis: usize,
        other_len: usize,
        other_first: bool,
        seed: u64,
    },
    Sum,
    Mean,
    SumDim(usize),
    MeanDim(usize),
    LogSoftmax(usize),
    Sin,
    Erf,
    Gelu,
    Silu,
    /// `sqrt(x² + 1)`: defined everywhere.
    SoftSqrt,
    /// `maximum(current, other)`, `other` broadcasting.
    Maximum {
        other: Vec<usize>,
        seed: u64,
    },
    /// The axes in reverse order.
    ReversePermute,
    Flip(usize),
    MaxDim(usize),
    /// The unbiased variance along an axis of 2 or more entries.
    VarDim(usize),
}

#[derive(Clone, Copy, Debug)]
enum BinaryKind {
    Add,
    Sub,
    Mul,
    /// Always `current / other`, with `other` in [0.5, 2): dividing by the program's values could divide by ~0.
    Div,
}

/// A starting shape and the ops applied to a seeded tensor of it, every tensor in `dtype`.
#[derive(Clone, Debug)]
struct Program {
    input: Vec<usize>,
    ops: Vec<Op>,
    dtype: DType,
}

/// Raw randomness for one op: `plan` turns it into an op valid for the shape it meets.
type RawOp = (u8, u8, u8, u64);

/// Turns raw draws into a valid program, tracking the shape as it goes.
fn plan(input: Vec<usize>, raw_ops: &[RawOp]) -> Program {
    let mut shape = input.clone();
    let mut ops = Vec::new();
    for &(kind, a, b, seed) in raw_ops {
        let (a, b) = (usize::from(a), usize::from(b));
        let rank = shape.len();
        let axis = a % rank;
        let op = match kind % 28 {
            0..=3 => {
                let kind = [BinaryKind::Add, BinaryKind::Sub, BinaryKind::Mul, BinaryKind::Div][usize::from(kind % 4)];
                let other = broadcast_partner(&shape, b);
                Op::Binary { kind, other, other_first: a % 2 == 1 && !matches!(kind, BinaryKind::Div), seed }
            }
            4 => Op::AddScalar(a as f64 / 64.0 - 2.0),
            5 => Op::MulScalar(a as f64 / 64.0 - 2.0),
            6 => Op::Neg,
            7 => Op::Relu,
            8 => Op::Sigmoid,
            9 => Op::Tanh,
            10 => Op::BoundedExp,
            11 => Op::SoftLog,
            12 => Op::Power([0.5, 2.0, -1.0, 1.5][a % 4]),
            13 if rank >= 2 => {
                let mut other = shape.clone();
                other[rank - 2] = shape[rank - 1];
                other[rank - 1] = 1 + b % 4;
                Op::Matmul { other, seed }
            }
            // A vector becomes a row, so the next matmul has a matrix to work on.
            13 => Op::Reshape(vec![1, shape[0]]),
            14 if rank >= 2 => Op::SwapDims(axis, (axis + 1 + b % (rank - 1)) % rank),
            14 | 15 => Op::Reshape(reshape_target(&shape, b)),
            16 => {
                let len = 1 + b % shape[axis];
                Op::Narrow { axis, start: (a / rank) % (shape[axis] - len + 1), len }
            }
            17 if shape[axis] <= 4 => Op::Cat { axis, other_len: 1 + b % 2, other_first: a % 2 == 0, seed },
            17 => Op::Narrow { axis, start: 0, len: 2 },
            18 => match b % 4 {
                0 => Op::Sum,
                1 => Op::Mean,
                2 => Op::SumDim(axis),
                _ => Op::MeanDim(axis),
            },
            19 => Op::LogSoftmax(axis),
            20 => Op::Sin,
            21 => Op::Erf,
            22 => Op::Gelu,
            23 => Op::Silu,
            24 => Op::SoftSqrt,
            25 => Op::Maximum { other: broadcast_partner(&shape, b), seed },
            26 if rank >= 2 && b % 2 == 0 => Op::ReversePermute,
            26 => Op::Flip(axis),
            _ if shape[axis] >= 2 && b % 2 == 0 => Op::VarDim(axis),
            _ => Op::MaxDim(axis),
        };
        shape = output_shape(&shape, &op);
        ops.push(op);
    }
    Program { input, ops, dtype: DType::F32 }
}

/// A shape that broadcasts with `shape`: itself, its last row, a column, a scalar, one with a size-1 first axis,
/// or a larger shape `shape` broadcasts up to.
fn broadcast_partner(shape: &[usize], choice: usize) -> Vec<usize> {
    let rank = shape.len();
    match choice % 6 {
        0 => shape.to_vec(),
        1 => vec![shape[rank - 1]],
        2 if rank >= 2 => [&shape[..rank - 1], &[1]].concat(),
        3 => vec![1],
        4 if rank < 3 => [&[2], shape].concat(),
        _ => [&[1], &shape[1..]].concat(),
    }
}

fn reshape_target(shape: &[usize], choice: usize) -> Vec<usize> {
    let count: usize = shape.iter().product();
    match choice % 3 {
        0 => vec![count],
        1 if shape.len() < 3 => [&[1], shape].concat(),
        _ => shape.iter().rev().copied().collect(),
    }
}

fn output_shape(shape: &[usize], op: &Op) -> Vec<usize> {
    let rank = shape.len();
    match op {
        Op::Binary { other, .. } => {
            let rank = rank.max(other.len());
            let dim = |dims: &[usize], i: usize| if i < rank - dims.len() { 1 } else { dims[i - (rank - dims.len())] };
            (0..rank).map(|i| dim(shape, i).max(dim(other, i))).collect()
        }
        Op::Matmul { other, .. } => [&shape[..rank - 1], &other[rank - 1..]].concat(),
        Op::SwapDims(a, b) => {
            let mut swapped = shape.to_vec();
            swapped.swap(*a, *b);
            swapped
        }
        Op::Reshape(target) => target.clone(),
        Op::Narrow { axis, len, .. } => with_dim(shape, *axis, *len),
        Op::Cat { axis, other_len, .. } => with_dim(shape, *axis, shape[*axis] + other_len),
        Op::Sum | Op::Mean => vec![1],
        Op::SumDim(axis) | Op::MeanDim(axis) | Op::MaxDim(axis) | Op::VarDim(axis) => with_dim(shape, *axis, 1),
        Op::Maximum { other, .. } => output_shape(
            shape,
            &Op::Binary { kind: BinaryKind::Add, other: other.clone(), other_first: false, seed: 0 },
        ),
        Op::ReversePermute => shape.iter().rev().copied().collect(),
        _ => shape.to_vec(),
    }
}

fn with_dim(shape: &[usize], axis: usize, size: usize) -> Vec<usize> {
    let mut dims = shape.to_vec();
    dims[axis] = size;
    dims
}

// ---- running a program on a backend -----------------------------------------------------------------------------

/// Seeded uniform samples (the same on every backend), in `dtype`.
fn random<B: Backend>(
    dims: &[usize],
    (low, high): (f64, f64),
    seed: u64,
    dtype: DType,
    device: &B::Device,
) -> Result<Tensor<B>> {
    Tensor::random_uniform(dims, (low, high), seed, dtype, device)
}

fn run<B: Backend>(program: &Program, input: &Tensor<B>) -> Result<Tensor<B>> {
    let (device, dtype) = (input.device(), program.dtype);
    let mut current = input.clone();
    for op in &program.ops {
        current = match op {
            Op::Binary { kind, other, other_first, seed } => {
                let (low, high) = if matches!(kind, BinaryKind::Div) { (0.5, 2.0) } else { (-1.0, 1.0) };
                let other = random(other, (low, high), *seed, dtype, &device)?;
                let (lhs, rhs) = if *other_first { (&other, &current) } else { (&current, &other) };
                match kind {
                    BinaryKind::Add => lhs.add(rhs)?,
                    BinaryKind::Sub => lhs.sub(rhs)?,
                    BinaryKind::Mul => lhs.mul(rhs)?,
                    BinaryKind::Div => lhs.div(rhs)?,
                }
            }
            Op::AddScalar(scalar) => current.add_scalar(*scalar)?,
            Op::MulScalar(scalar) => current.mul_scalar(*scalar)?,
            Op::Neg => current.neg()?,
            Op::Relu => current.relu()?,
            Op::Sigmoid => current.sigmoid()?,
            Op::Tanh => current.tanh()?,
            Op::BoundedExp => current.tanh()?.exp()?,
            Op::SoftLog => current.square()?.add_scalar(1.0)?.log()?,
            Op::Power(exponent) => current.sigmoid()?.add_scalar(0.5)?.powf_scalar(*exponent)?,
            Op::Matmul { other, seed } => current.matmul(&random(other, (-1.0, 1.0), *seed, dtype, &device)?)?,
            Op::SwapDims(a, b) => current.swap_dims(*a, *b)?,
            Op::Reshape(target) => current.reshape(target.as_slice())?,
            Op::Narrow { axis, start, len } => current.narrow(*axis, *start, *len)?,
            Op::Cat { axis, other_len, other_first, seed } => {
                let shape = with_dim(&current.dims(), *axis, *other_len);
                let other = random(&shape, (-1.0, 1.0), *seed, dtype, &device)?;
                let parts = if *other_first { [other, current] } else { [current, other] };
                Tensor::cat(&parts, *axis)?
            }
            Op::Sum => current.sum()?,
            Op::Mean => current.mean()?,
            Op::SumDim(axis) => current.sum_dim(*axis)?,
            Op::MeanDim(axis) => current.mean_dim(*axis)?,
            Op::LogSoftmax(axis) => current.log_softmax(*axis)?,
            Op::Sin => current.sin()?,
            Op::Erf => current.erf()?,
            Op::Gelu => current.gelu()?,
            Op::Silu => current.silu()?,
            Op::SoftSqrt => current.square()?.add_scalar(1.0)?.sqrt()?,
            Op::Maximum { other, seed } => current.maximum(&random(other, (-1.0, 1.0), *seed, dtype, &device)?)?,
            Op::ReversePermute => current.permute((0..current.dims().len()).rev().collect::<Vec<_>>())?,
            Op::Flip(axis) => current.flip([*axis])?,
            Op::MaxDim(axis) => current.max_dim(*axis)?,
            Op::VarDim(axis) => current.var_dim(*axis, 1)?,
        };
    }
    Ok(current)
}

/// A program's output on one base backend, and the gradient of `Σ w ⊙ output` (fixed random `w`) with respect
/// to its input on `Autodiff` over that backend.
struct Evaluation {
    output: Vec<f64>,
    input_gradient: Vec<f64>,
}

fn evaluate<B: BaseBackend>(program: &Program, device: &B::Device) -> (String, Evaluation) {
    let output = run_on::<B>(program, device).unwrap_or_else(|error| panic!("{} failed: {error}", B::name()));
    let (autodiff_output, input_gradient) = run_with_gradient::<Autodiff<B>>(program, device)
        .unwrap_or_else(|error| panic!("{} failed: {error}", Autodiff::<B>::name()));
    // Autodiff runs B's own ops on B's own tensors: not one bit may differ.
    let bits = |values: &[f64]| values.iter().map(|value| value.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&autodiff_output), bits(&output), "{} differs from {}", Autodiff::<B>::name(), B::name());
    (B::name(), Evaluation { output, input_gradient })
}

fn program_input<B: Backend>(program: &Program, device: &B::Device) -> Result<Tensor<B>> {
    random(&program.input, (-2.0, 2.0), 0, program.dtype, device)
}

fn run_on<B: Backend>(program: &Program, device: &B::Device) -> Result<Vec<f64>> {
    let output = run(program, &program_input::<B>(program, device)?)?;
    assert_eq!(output.dtype(), program.dtype, "{} changed the dtype", B::name());
    output.to_f64_vec()
}

fn run_with_gradient<B: AutodiffBackend>(program: &Program, device: &B::Device) -> Result<(Vec<f64>, Vec<f64>)> {
    let input = program_input::<B>(program, device)?.require_grad()?;
    let output = run(program, &input)?;
    let weights = random(&output.dims(), (-1.0, 1.0), 1234, program.dtype, device)?;
    let gradients = output.mul(&weights)?.sum()?.backward()?;
    // Every op here is differentiable, so the input always gets a gradient, of the input's dtype.
    let gradient = input.grad(&gradients).expect("the input gets a gradient");
    assert_eq!(gradient.dtype(), program.dtype, "{}: the gradient changed the dtype", B::name());
    Ok((output.to_f64_vec()?, gradient.to_f64_vec()?))
}

/// Every backend's output and gradient against the first backend's.
fn assert_all_agree(dtype: DType, evaluations: &[(String, Evaluation)]) {
    let (reference_name, reference) = &evaluations[0];
    for (name, evaluation) in &evaluations[1..] {
        eprintln!("{name} against {reference_name} in {dtype}: output, then input gradient");
        assert_close_f64(&evaluation.output, &reference.output, dispatch_tests::agreement(dtype));
        assert_close_f64(&evaluation.input_gradient, &reference.input_gradient, dispatch_tests::agreement(dtype));
    }
}

fn program() -> impl Strategy<Value = Program> {
    let input = prop::collection::vec(1usize..=4, 1..=3);
    let ops = prop::collection::vec(any::<RawOp>(), 1..=6);
    let dtype = prop::sample::select(DType::ALL.to_vec());
    (input, ops, dtype).prop_map(|(input, raw_ops, dtype)| Program { dtype, ..plan(input, &raw_ops) })
}

proptest! {
    #![proptest_config(dispatch_tests::proptest_config(128, "proptest-regressions/cross_backend.txt"))]

    #[test]
    fn every_backend_computes_the_same_values_and_gradients(program in program()) {
        let evaluations = evaluate_on_every_backend(&program);
        assert_all_agree(program.dtype, &evaluations);
        let reference = &evaluations[0].1;
        prop_assert!(reference.output.iter().all(|value| value.is_finite()), "{:?}", reference.output);
    }
}

/// A fixed program through every kind of op, in every dtype, so each is exercised whatever proptest draws.
#[test]
fn a_program_through_every_op_agrees_everywhere_in_every_dtype() {
    let program = Program {
        dtype: DType::F32,
        input: vec![2, 3],
        ops: vec![
            Op::Binary { kind: BinaryKind::Add, other: vec![3], other_first: false, seed: 1 },
            Op::Binary { kind: BinaryKind::Sub, other: vec![2, 1], other_first: true, seed: 2 },
            Op::Binary { kind: BinaryKind::Mul, other: vec![2, 2, 3], other_first: false, seed: 3 },
            Op::Binary { kind: BinaryKind::Div, other: vec![1], other_first: false, seed: 4 },
            Op::Matmul { other: vec![2, 3, 4], seed: 5 },
            Op::SwapDims(0, 2),
            Op::Reshape(vec![8, 2]),
            Op::AddScalar(0.5),
            Op::MulScalar(-1.5),
            Op::Neg,
            Op::Relu,
            Op::Sigmoid,
            Op::Tanh,
            Op::BoundedExp,
            Op::SoftLog,
            Op::Power(1.5),
            Op::Sin,
            Op::Erf,
            Op::Gelu,
            Op::Silu,
            Op::SoftSqrt,
            Op::Maximum { other: vec![2], seed: 7 },
            Op::ReversePermute,
            Op::Flip(1),
            Op::ReversePermute,
            Op::Narrow { axis: 0, start: 2, len: 5 },
            Op::Cat { axis: 1, other_len: 2, other_first: true, seed: 6 },
            Op::LogSoftmax(1),
            Op::MaxDim(1),
            Op::VarDim(0),
            Op::MeanDim(0),
            Op::SumDim(1),
            Op::Mean,
            Op::Sum,
        ],
    };
    for dtype in DType::ALL {
        let program = Program { dtype, ..program.clone() };
        let evaluations = evaluate_on_every_backend(&program);
        assert_all_agree(dtype, &evaluations);
        assert!(evaluations[0].1.input_gradient.iter().any(|&gradient| gradient != 0.0));
    }
}
