//! A program: an input of some dims and dtype, then a chain of steps, each taking the current value (float, int or
//! bool) and seeded operands of its own. The same description runs on the reference interpreter and on every
//! backend; only the input is a leaf whose gradient is checked.

use dispatch_core::DType;
use dispatch_core::backend::{AdamStep, Conv1dOptions, Conv2dOptions, Window2d};

#[derive(Clone, Debug)]
pub struct Program {
    pub input: Vec<usize>,
    pub dtype: DType,
    pub seed: u64,
    pub steps: Vec<Step>,
}

/// A float operand of a step, in `dtype` (the current one, unless the planner mixes dtypes on purpose).
#[derive(Clone, Debug)]
pub struct FloatOperand {
    pub dims: Vec<usize>,
    pub fill: Fill,
    pub dtype: DType,
}

#[derive(Clone, Copy, Debug)]
pub enum Fill {
    /// Seeded multiples of 1/8 in `[low, high]`, uploaded with `from_f64_vec` (`from_vec` for `F32`).
    Grid { seed: u64, low: f64, high: f64 },
    /// Every element `value` (rounded to the dtype), made with `full`.
    Constant(f64),
}

#[derive(Clone, Debug)]
pub struct IntOperand {
    pub dims: Vec<usize>,
    pub fill: IntFill,
}

#[derive(Clone, Copy, Debug)]
pub enum IntFill {
    /// Seeded integers in `low..=high`.
    Seeded { seed: u64, low: i64, high: i64 },
    /// `start, start + 1, ...` along a 1-D operand, made with `arange`.
    Arange { start: i64 },
}

#[derive(Clone, Debug)]
pub struct BoolOperand {
    pub dims: Vec<usize>,
    pub seed: u64,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Binary {
    Add,
    Sub,
    Mul,
    Div,
    Maximum,
    Minimum,
    /// `gelu_backward(tensor, gradient)`: not affine in `tensor`, the first operand.
    GeluBackward,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scalar {
    Add,
    Mul,
    Powf,
    Greater,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unary {
    Neg,
    Exp,
    Log,
    Relu,
    Sigmoid,
    Tanh,
    Sqrt,
    Recip,
    Abs,
    Sin,
    Cos,
    Erf,
    Gelu,
    Silu,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reduce {
    Sum,
    Mean,
    Prod,
    Max,
    Min,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReduceDim {
    Sum,
    Mean,
    Prod,
    Max,
    Min,
    LogSoftmax,
    Softmax,
    /// The variance divided by `len - correction`.
    Var(usize),
}

/// Which argument of `layer_norm` the current tensor is; the step's two operands are the other two, in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LayerNormArgument {
    Input,
    Gamma,
    Beta,
}

impl LayerNormArgument {
    /// `[input, gamma, beta]`, with `current` in its place and `others` in the other two, in order.
    pub fn arrange<T>(self, current: T, [first, second]: [T; 2]) -> [T; 3] {
        match self {
            LayerNormArgument::Input => [current, first, second],
            LayerNormArgument::Gamma => [first, current, second],
            LayerNormArgument::Beta => [first, second, current],
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compare {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IntCompare {
    Eq,
    Lt,
    Le,
    Gt,
    Ge,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IntBinary {
    Add,
    Sub,
    Mul,
    Div,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BoolBinary {
    And,
    Or,
}

/// One step. "current" is the value the previous step left; an operand is made fresh by the step.
#[derive(Clone, Debug)]
pub enum Step {
    // ---- float to float ----
    /// `current (op) other`, or `other (op) current` unless `current_first`. With `given_up`, an arithmetic op
    /// (add, sub, mul, div) takes its first operand by value (`add_into`): the current tensor or the fresh operand,
    /// which nothing else may hold, so a backend can write over it.
    Binary {
        op: Binary,
        other: FloatOperand,
        current_first: bool,
        given_up: bool,
    },
    /// With `given_up`, `add` and `mul` take the current tensor by value (`add_scalar_into`, `mul_scalar_into`).
    Scalar {
        op: Scalar,
        scalar: f64,
        given_up: bool,
    },
    Clamp {
        min: f64,
        max: f64,
    },
    Unary(Unary),
    /// `current.adam_step(gradient, moments, options)`: the current tensor as the parameter, the output its
    /// `[3, ...]` rows (parameter, first and second moment). Records no gradient.
    Adam {
        gradient: FloatOperand,
        moments: FloatOperand,
        options: AdamStep,
    },
    Reduce(Reduce),
    ReduceDim(ReduceDim, usize),
    /// `layer_norm(input, gamma, beta, eps)` over the last axis, the current tensor as the argument `current_as`
    /// names and `others` as the other two, in order.
    LayerNorm {
        current_as: LayerNormArgument,
        others: [FloatOperand; 2],
        eps: f64,
    },
    /// `current.cross_entropy(targets)`: the current tensor as the logits `[rows, classes]`, `targets` the class
    /// id of each row.
    CrossEntropy {
        targets: IntOperand,
    },
    Matmul {
        other: FloatOperand,
        current_first: bool,
    },
    /// `query.attention_weights(key, scale, causal)`, the current tensor as the query (`current_is_query`) or as the
    /// key, and `other` as the other one.
    AttentionWeights {
        other: FloatOperand,
        current_is_query: bool,
        scale: f64,
        causal: bool,
    },
    Reshape(Vec<usize>),
    Permute(Vec<usize>),
    SwapDims(usize, usize),
    Narrow {
        axis: usize,
        start: usize,
        len: usize,
    },
    Cat {
        axis: usize,
        other: FloatOperand,
        current_first: bool,
    },
    Stack {
        axis: usize,
        other: FloatOperand,
        current_first: bool,
    },
    Expand(Vec<usize>),
    Repeat(Vec<usize>),
    Flip(Vec<usize>),
    Squeeze(usize),
    Unsqueeze(usize),
    /// `current.slice_assign(axis, start, other)`, or `other.slice_assign(axis, start, current)` when
    /// `current_is_source`.
    SliceAssign {
        axis: usize,
        start: usize,
        other: FloatOperand,
        current_is_source: bool,
    },
    IndexSelect {
        axis: usize,
        indices: IntOperand,
    },
    Gather {
        axis: usize,
        indices: IntOperand,
    },
    ScatterAdd {
        axis: usize,
        indices: IntOperand,
        other: FloatOperand,
        current_is_source: bool,
    },
    SelectAdd {
        axis: usize,
        indices: IntOperand,
        other: FloatOperand,
        current_is_source: bool,
    },
    /// The current tensor as the `[vocabulary, width]` weights.
    Embedding {
        ids: IntOperand,
    },
    Conv2d {
        weight: FloatOperand,
        options: Conv2dOptions,
    },
    Conv1d {
        weight: FloatOperand,
        options: Conv1dOptions,
    },
    ConvTranspose2d {
        weight: FloatOperand,
        options: Conv2dOptions,
    },
    /// The current tensor as the input of a convolution whose output has `gradient`'s shape.
    Conv2dWeightGradient {
        gradient: FloatOperand,
        kernel: [usize; 2],
        options: Conv2dOptions,
    },
    MaxPool2d(Window2d),
    AvgPool2d(Window2d),
    AdaptiveAvgPool2d([usize; 2]),
    Unfold2d {
        window: Window2d,
        pad: f64,
    },
    Fold2d {
        size: [usize; 2],
        window: Window2d,
    },
    /// `mask_where(mask, current, other)`, or `mask_where(mask, other, current)` unless `current_on_true`.
    MaskWhere {
        mask: BoolOperand,
        other: FloatOperand,
        current_on_true: bool,
    },
    MaskFill {
        mask: BoolOperand,
        value: f64,
    },
    Cast(DType),
    /// `to_vec`, then `from_vec`: an `F32` tensor's values through host memory (another dtype is an error).
    ThroughHost,
    /// The identity host op, which sees the values exactly in every dtype.
    HostOp,
    /// `to_device` onto the device the tensor is on.
    ToDevice,
    // ---- float to bool or int ----
    Compare {
        op: Compare,
        other: FloatOperand,
    },
    CompareScalar {
        op: Compare,
        scalar: f64,
    },
    ArgMax(usize),
    ArgMin(usize),
    MaxPool2dIndices(Window2d),
    // ---- int to int, bool or float ----
    IntBinary {
        op: IntBinary,
        other: IntOperand,
        current_first: bool,
    },
    IntAddScalar(i64),
    IntMulScalar(i64),
    IntSum,
    IntCompare {
        op: IntCompare,
        other: IntOperand,
    },
    IntEqScalar(i64),
    IntReshape(Vec<usize>),
    IntToFloat(DType),
    /// `int_to_device` onto the device the tensor is on.
    IntToDevice,
    OneHot {
        classes: usize,
        dtype: DType,
    },
    /// The current ints as the ids of `weights.embedding(ids)`.
    EmbeddingOf {
        weights: FloatOperand,
    },
    // ---- bool to bool, int or float ----
    BoolBinary {
        op: BoolBinary,
        other: BoolOperand,
    },
    BoolNot,
    BoolAny,
    BoolAll,
    BoolToInt,
    BoolToFloat(DType),
    /// `bool_to_device` onto the device the tensor is on.
    BoolToDevice,
    /// `mask_where(current, on_true, on_false)`.
    SelectBy {
        on_true: FloatOperand,
        on_false: FloatOperand,
    },
    /// `tensor.mask_fill(current, value)`.
    FillBy {
        tensor: FloatOperand,
        value: f64,
    },
}

pub type Described<'a> = (Vec<&'a FloatOperand>, Vec<&'a IntOperand>, Vec<&'a BoolOperand>);

impl Step {
    /// The step's operand descriptions, floats, ints and bools, each in the order the step lists them.
    pub fn operands(&self) -> Described<'_> {
        match self {
            Step::Binary { other, .. }
            | Step::Matmul { other, .. }
            | Step::AttentionWeights { other, .. }
            | Step::Cat { other, .. }
            | Step::Stack { other, .. }
            | Step::SliceAssign { other, .. }
            | Step::Compare { other, .. } => (vec![other], vec![], vec![]),
            Step::Conv2d { weight, .. } | Step::Conv1d { weight, .. } | Step::ConvTranspose2d { weight, .. } => {
                (vec![weight], vec![], vec![])
            }
            Step::Conv2dWeightGradient { gradient, .. } => (vec![gradient], vec![], vec![]),
            Step::IndexSelect { indices, .. } | Step::Gather { indices, .. } => (vec![], vec![indices], vec![]),
            Step::ScatterAdd { indices, other, .. } | Step::SelectAdd { indices, other, .. } => {
                (vec![other], vec![indices], vec![])
            }
            Step::Embedding { ids } | Step::CrossEntropy { targets: ids } => (vec![], vec![ids], vec![]),
            Step::MaskWhere { mask, other, .. } => (vec![other], vec![], vec![mask]),
            Step::MaskFill { mask, .. } => (vec![], vec![], vec![mask]),
            Step::IntBinary { other, .. } | Step::IntCompare { other, .. } => (vec![], vec![other], vec![]),
            Step::EmbeddingOf { weights } => (vec![weights], vec![], vec![]),
            Step::BoolBinary { other, .. } => (vec![], vec![], vec![other]),
            Step::SelectBy { on_true, on_false } => (vec![on_true, on_false], vec![], vec![]),
            Step::LayerNorm { others: [first, second], .. } => (vec![first, second], vec![], vec![]),
            Step::FillBy { tensor, .. } => (vec![tensor], vec![], vec![]),
            Step::Adam { gradient, moments, .. } => (vec![gradient, moments], vec![], vec![]),
            _ => (vec![], vec![], vec![]),
        }
    }
}
