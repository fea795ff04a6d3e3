//! Runs a program on the reference: each step's op in exact `f64`, its float result rounded once to its dtype, and
//! a note of which results every backend must hold exactly (then comparisons and ties on them are decidable).

use crate::support::error_bound;
use crate::support::program::{
    Binary, BoolOperand, Fill, FloatOperand, IntFill, IntOperand, Program, Reduce, ReduceDim, Scalar, Step, Unary,
};
use crate::support::reference::{attention, elementwise, index, int_bool, layout, reduce, window};
use crate::support::values::{
    self, Bools, Floats, Ints, Outcome, Value, count, granularity, invalid, precision_bits, representable, round_to,
};
use dispatch_core::DType;

/// A step's operands, made from their descriptions, in the order the step lists them.
#[derive(Clone, Debug, Default)]
pub struct Operands {
    pub floats: Vec<Floats>,
    pub ints: Vec<Ints>,
    pub bools: Vec<Bools>,
}

pub fn float_operand(operand: &FloatOperand) -> Floats {
    let n = count(&operand.dims);
    let raw = match operand.fill {
        Fill::Grid { seed, low, high } => values::grid(seed, n, (low, high)),
        Fill::Constant(value) => vec![value; n],
    };
    let rounded = raw.iter().map(|&x| round_to(operand.dtype, x)).collect();
    Floats { dims: operand.dims.clone(), values: rounded, dtype: operand.dtype, exact: true }
}

pub fn int_operand(operand: &IntOperand) -> Ints {
    let n = count(&operand.dims);
    let values = match operand.fill {
        IntFill::Seeded { seed, low, high } => values::ints(seed, n, (low, high)),
        IntFill::Arange { start } => (0..n as i64).map(|offset| start + offset).collect(),
    };
    Ints { dims: operand.dims.clone(), values }
}

pub fn bool_operand(operand: &BoolOperand) -> Bools {
    Bools { dims: operand.dims.clone(), values: values::bools(operand.seed, count(&operand.dims)) }
}

pub fn operands(step: &Step) -> Operands {
    let mut made = Operands::default();
    let (floats, ints, bools) = step.operands();
    made.floats = floats.into_iter().map(float_operand).collect();
    made.ints = ints.into_iter().map(int_operand).collect();
    made.bools = bools.into_iter().map(bool_operand).collect();
    made
}

/// The program's input: seeded multiples of 1/8 in [-2, 2]. A shape without dimensions is no tensor shape.
pub fn input(program: &Program) -> Outcome<Floats> {
    if program.input.is_empty() {
        return invalid("a tensor of the empty shape");
    }
    let values = values::grid(program.seed, count(&program.input), (-2.0, 2.0));
    Ok(Floats { dims: program.input.clone(), values, dtype: program.dtype, exact: true })
}

fn float(value: &Value) -> &Floats {
    match value {
        Value::Float(floats) => floats,
        other => panic!("the planner put a float step after {other:?}"),
    }
}

fn int(value: &Value) -> &Ints {
    match value {
        Value::Int(ints) => ints,
        other => panic!("the planner put an int step after {other:?}"),
    }
}

fn boolean(value: &Value) -> &Bools {
    match value {
        Value::Bool(bools) => bools,
        other => panic!("the planner put a bool step after {other:?}"),
    }
}

/// The step's op on `current` and its operands, exact in `f64` (not rounded).
pub fn apply(step: &Step, current: &Value, operands: &Operands) -> Outcome<Value> {
    let other = || &operands.floats[0];
    let ordered = |first: bool| if first { [float(current), other()] } else { [other(), float(current)] };
    let floats = |result: Outcome<Floats>| result.map(Value::Float);
    match step {
        Step::Binary { op, current_first, .. } => {
            let [a, b] = ordered(*current_first);
            floats(elementwise::binary(*op, a, b))
        }
        Step::Scalar { op, scalar, .. } => Ok(Value::Float(elementwise::scalar(*op, float(current), *scalar))),
        Step::Clamp { min, max } => floats(elementwise::clamp(float(current), *min, *max)),
        Step::Unary(op) => Ok(Value::Float(elementwise::unary(*op, float(current)))),
        Step::Adam { options, .. } => {
            floats(elementwise::adam_step(float(current), other(), &operands.floats[1], options))
        }
        Step::Reduce(op) => floats(reduce::reduce(*op, float(current))),
        Step::ReduceDim(op, axis) => floats(reduce::reduce_dim(*op, float(current), *axis)),
        Step::LayerNorm { current_as, eps, .. } => {
            let [input, gamma, beta] = current_as.arrange(float(current), [other(), &operands.floats[1]]);
            floats(reduce::layer_norm(input, gamma, beta, *eps))
        }
        Step::CrossEntropy { .. } => floats(reduce::cross_entropy(float(current), &operands.ints[0])),
        Step::Matmul { current_first, .. } => {
            let [a, b] = ordered(*current_first);
            floats(layout::matmul(a, b))
        }
        Step::AttentionWeights { current_is_query, scale, causal, .. } => {
            let [query, key] = ordered(*current_is_query);
            floats(attention::attention_weights(query, key, *scale, *causal))
        }
        Step::Reshape(dims) => floats(layout::reshape(float(current), dims)),
        Step::Permute(axes) => floats(layout::permute(float(current), axes)),
        Step::SwapDims(a, b) => floats(layout::swap_dims(float(current), *a, *b)),
        Step::Narrow { axis, start, len } => floats(layout::narrow(float(current), *axis, *start, *len)),
        Step::Cat { axis, current_first, .. } => floats(layout::cat(&ordered(*current_first), *axis)),
        Step::Stack { axis, current_first, .. } => floats(layout::stack(&ordered(*current_first), *axis)),
        Step::Expand(dims) => floats(layout::expand(float(current), dims)),
        Step::Repeat(times) => floats(layout::repeat(float(current), times)),
        Step::Flip(axes) => floats(layout::flip(float(current), axes)),
        Step::Squeeze(axis) => floats(layout::squeeze(float(current), *axis)),
        Step::Unsqueeze(axis) => floats(layout::unsqueeze(float(current), *axis)),
        Step::SliceAssign { axis, start, current_is_source, .. } => {
            let [tensor, source] = ordered(!current_is_source);
            floats(layout::slice_assign(tensor, *axis, *start, source))
        }
        Step::IndexSelect { axis, .. } => floats(index::index_select(float(current), *axis, &operands.ints[0])),
        Step::Gather { axis, .. } => floats(index::gather(float(current), *axis, &operands.ints[0])),
        Step::ScatterAdd { axis, current_is_source, .. } => {
            let [tensor, source] = ordered(!current_is_source);
            floats(index::scatter_add(tensor, *axis, &operands.ints[0], source))
        }
        Step::SelectAdd { axis, current_is_source, .. } => {
            let [tensor, source] = ordered(!current_is_source);
            floats(index::select_add(tensor, *axis, &operands.ints[0], source))
        }
        Step::Embedding { .. } => floats(index::embedding(float(current), &operands.ints[0])),
        Step::Conv2d { options, .. } => floats(window::conv2d(float(current), other(), options)),
        Step::Conv1d { options, .. } => floats(window::conv1d(float(current), other(), options)),
        Step::ConvTranspose2d { options, .. } => floats(window::conv_transpose2d(float(current), other(), options)),
        Step::Conv2dWeightGradient { kernel, options, .. } => {
            floats(window::conv2d_weight_gradient(float(current), other(), *kernel, options))
        }
        Step::MaxPool2d(window) => floats(window::max_pool2d(float(current), window)),
        Step::AvgPool2d(window) => floats(window::avg_pool2d(float(current), window)),
        Step::AdaptiveAvgPool2d(size) => floats(window::adaptive_avg_pool2d(float(current), *size)),
        Step::Unfold2d { window, pad } => floats(window::unfold2d(float(current), window, *pad)),
        Step::Fold2d { size, window } => floats(window::fold2d(float(current), *size, window)),
        Step::MaskWhere { current_on_true, .. } => {
            let [on_true, on_false] = ordered(*current_on_true);
            floats(elementwise::mask_where(&operands.bools[0], on_true, on_false))
        }
        Step::MaskFill { value, .. } => floats(elementwise::mask_fill(float(current), &operands.bools[0], *value)),
        Step::Cast(dtype) => Ok(Value::Float(Floats { dtype: *dtype, ..float(current).clone() })),
        Step::ThroughHost => {
            let floats = float(current);
            values::dtype_expected(DType::F32, floats.dtype)?;
            Ok(Value::Float(floats.clone()))
        }
        // Host ops see every dtype's values exactly (f64 for F64, f32 for the others), so the identity keeps them.
        Step::HostOp => Ok(current.clone()),
        Step::ToDevice | Step::IntToDevice | Step::BoolToDevice => Ok(current.clone()),
        Step::Compare { op, .. } => elementwise::compare(*op, float(current), other()).map(Value::Bool),
        Step::CompareScalar { op, scalar } => {
            Ok(Value::Bool(elementwise::compare_scalar(*op, float(current), *scalar)))
        }
        Step::ArgMax(axis) => reduce::arg_extreme(float(current), *axis, true).map(Value::Int),
        Step::ArgMin(axis) => reduce::arg_extreme(float(current), *axis, false).map(Value::Int),
        Step::MaxPool2dIndices(window) => window::max_pool2d_indices(float(current), window).map(Value::Int),
        Step::IntBinary { op, current_first, .. } => {
            let (a, b) =
                if *current_first { (int(current), &operands.ints[0]) } else { (&operands.ints[0], int(current)) };
            int_bool::int_binary(*op, a, b).map(Value::Int)
        }
        Step::IntAddScalar(s) => Ok(Value::Int(int_bool::int_scalar(int(current), |x| x.wrapping_add(*s)))),
        Step::IntMulScalar(s) => Ok(Value::Int(int_bool::int_scalar(int(current), |x| x.wrapping_mul(*s)))),
        Step::IntSum => Ok(Value::Int(int_bool::int_sum(int(current)))),
        Step::IntCompare { op, .. } => int_bool::int_compare(*op, int(current), &operands.ints[0]).map(Value::Bool),
        Step::IntEqScalar(s) => {
            let ints = int(current);
            Ok(Value::Bool(Bools { dims: ints.dims.clone(), values: ints.values.iter().map(|x| x == s).collect() }))
        }
        Step::IntReshape(dims) => {
            let ints = int(current);
            if dims.is_empty() || count(dims) != ints.values.len() {
                return invalid(format!("reshape ints {:?} to {dims:?}", ints.dims));
            }
            Ok(Value::Int(Ints { dims: dims.clone(), values: ints.values.clone() }))
        }
        Step::IntToFloat(dtype) => Ok(Value::Float(int_bool::int_to_float(int(current), *dtype))),
        Step::OneHot { classes, dtype } => int_bool::one_hot(int(current), *classes, *dtype).map(Value::Float),
        Step::EmbeddingOf { .. } => floats(index::embedding(other(), int(current))),
        Step::BoolBinary { op, .. } => {
            int_bool::bool_binary(*op, boolean(current), &operands.bools[0]).map(Value::Bool)
        }
        Step::BoolNot => Ok(Value::Bool(int_bool::bool_map(boolean(current), |x| !x))),
        Step::BoolAny => Ok(Value::Bool(int_bool::bool_reduce(boolean(current), false))),
        Step::BoolAll => Ok(Value::Bool(int_bool::bool_reduce(boolean(current), true))),
        Step::BoolToInt => Ok(Value::Int(int_bool::bool_to_int(boolean(current)))),
        Step::BoolToFloat(dtype) => Ok(Value::Float(int_bool::bool_to_float(boolean(current), *dtype))),
        Step::SelectBy { .. } => {
            floats(elementwise::mask_where(boolean(current), &operands.floats[0], &operands.floats[1]))
        }
        Step::FillBy { value, .. } => floats(elementwise::mask_fill(&operands.floats[0], boolean(current), *value)),
    }
}

/// How a step's float result relates to its inputs, for deciding whether every backend holds it exactly.
enum Exactness {
    /// Each output element is an input element (or a constant rounded once): exact when the inputs are.
    Moves,
    /// One correctly rounded operation per element: exact when the inputs are and the result is a value of the
    /// dtype (then there was nothing to round, in any precision a backend computes in).
    CorrectlyRounded,
    /// Sums of products of inputs: exact when, on top, every partial sum in any order is a value of the dtype.
    Accumulates,
    /// Anything else (transcendental functions, divisions by counts).
    Approximate,
}

fn exactness(step: &Step) -> Exactness {
    match step {
        Step::Binary { op: Binary::Maximum | Binary::Minimum, .. }
        | Step::Unary(Unary::Neg | Unary::Relu | Unary::Abs)
        | Step::Scalar { op: Scalar::Greater, .. }
        | Step::Clamp { .. }
        | Step::Reduce(Reduce::Max | Reduce::Min)
        | Step::ReduceDim(ReduceDim::Max | ReduceDim::Min, _)
        | Step::MaxPool2d(_)
        | Step::Reshape(_)
        | Step::Permute(_)
        | Step::SwapDims(..)
        | Step::Narrow { .. }
        | Step::Cat { .. }
        | Step::Stack { .. }
        | Step::Expand(_)
        | Step::Repeat(_)
        | Step::Flip(_)
        | Step::Squeeze(_)
        | Step::Unsqueeze(_)
        | Step::SliceAssign { .. }
        | Step::IndexSelect { .. }
        | Step::Gather { .. }
        | Step::Embedding { .. }
        | Step::EmbeddingOf { .. }
        | Step::Unfold2d { .. }
        | Step::MaskWhere { .. }
        | Step::MaskFill { .. }
        | Step::SelectBy { .. }
        | Step::FillBy { .. }
        | Step::Cast(_)
        | Step::ThroughHost
        | Step::HostOp
        | Step::ToDevice
        | Step::IntToFloat(_)
        | Step::OneHot { .. }
        | Step::BoolToFloat(_) => Exactness::Moves,
        Step::Binary { op: Binary::GeluBackward, .. } => Exactness::Approximate,
        Step::Binary { .. }
        | Step::Scalar { op: Scalar::Add | Scalar::Mul, .. }
        | Step::Unary(Unary::Sqrt | Unary::Recip) => Exactness::CorrectlyRounded,
        Step::Reduce(Reduce::Sum)
        | Step::ReduceDim(ReduceDim::Sum, _)
        | Step::Matmul { .. }
        | Step::Conv2d { .. }
        | Step::Conv1d { .. }
        | Step::ConvTranspose2d { .. }
        | Step::Conv2dWeightGradient { .. }
        | Step::Fold2d { .. }
        | Step::ScatterAdd { .. }
        | Step::SelectAdd { .. } => Exactness::Accumulates,
        _ => Exactness::Approximate,
    }
}

/// The exponent of the smallest positive value (the subnormal quantum) of each dtype, negated.
pub fn quantum_exponent(dtype: DType) -> i32 {
    match dtype {
        DType::F64 => 1074,
        DType::F32 => 149,
        DType::F16 => 24,
        DType::BF16 => 133,
    }
}

fn max_granularity(values: &[f64]) -> i32 {
    values.iter().map(|&x| granularity(x)).max().unwrap_or(0)
}

/// The step on `current`, its float result rounded to its dtype and marked exact where every backend must agree
/// to the bit.
pub fn evaluate(step: &Step, current: &Value, operands: &Operands) -> Outcome<Value> {
    let raw = match apply(step, current, operands)? {
        Value::Float(raw) => raw,
        other => return Ok(other),
    };
    let mut inputs: Vec<&Floats> = operands.floats.iter().collect();
    if let Value::Float(floats) = current {
        inputs.push(floats);
    }
    let inputs_exact = inputs.iter().all(|floats| floats.exact);
    let dtype = raw.dtype;
    let fits = |values: &[f64]| values.iter().all(|&x| representable(dtype, x));
    let exact = inputs_exact
        && match exactness(step) {
            Exactness::Moves => true,
            Exactness::CorrectlyRounded => fits(&raw.values),
            Exactness::Accumulates => {
                // The same op on magnitudes bounds every partial sum; the terms are multiples of 2^-q.
                let magnitudes = |floats: &Floats| Floats {
                    values: floats.values.iter().map(|x| x.abs()).collect(),
                    ..floats.clone()
                };
                let absolute =
                    Operands { floats: operands.floats.iter().map(magnitudes).collect(), ..operands.clone() };
                let current = match current {
                    Value::Float(floats) => Value::Float(magnitudes(floats)),
                    other => other.clone(),
                };
                let q: i32 = inputs.iter().map(|floats| max_granularity(&floats.values)).sum();
                let bound = match apply(step, &current, &absolute) {
                    Ok(Value::Float(bounds)) => bounds.values.iter().fold(0.0, |m: f64, &x| m.max(x)),
                    _ => f64::INFINITY,
                };
                q <= quantum_exponent(dtype) && bound * 2f64.powi(q) <= 2f64.powi(precision_bits(dtype))
            }
            Exactness::Approximate => false,
        };
    let values = raw.values.iter().map(|&x| round_to(dtype, x)).collect();
    Ok(Value::Float(Floats { values, exact, ..raw }))
}

/// A program run on the reference: the value after each step (the input first) with its error estimate (empty for
/// ints and bools), or the failure that ended it.
#[derive(Clone, Debug)]
pub struct Trace {
    pub values: Vec<Value>,
    pub errors: Vec<Vec<f64>>,
    pub operands: Vec<Operands>,
    pub failure: Option<values::Failure>,
}

impl Trace {
    pub fn start(program: &Program) -> Self {
        match input(program) {
            Ok(floats) => {
                let errors = vec![vec![0.0; floats.values.len()]];
                Self { values: vec![Value::Float(floats)], errors, operands: vec![], failure: None }
            }
            Err(failure) => Self { values: vec![], errors: vec![], operands: vec![], failure: Some(failure) },
        }
    }

    /// Runs `step` on the last value; false once the program has failed.
    pub fn push(&mut self, step: &Step) -> bool {
        let Some(current) = self.values.last().filter(|_| self.failure.is_none()) else { return false };
        let operands = operands(step);
        match evaluate(step, current, &operands) {
            Ok(value) => {
                let error = self.errors.last().map_or(&[][..], Vec::as_slice);
                self.errors.push(error_bound::propagate(step, current, error, &operands, &value));
                self.values.push(value);
                self.operands.push(operands);
                true
            }
            Err(failure) => {
                self.failure = Some(failure);
                false
            }
        }
    }

    pub fn run(program: &Program) -> Self {
        let mut trace = Self::start(program);
        for step in &program.steps {
            if !trace.push(step) {
                break;
            }
        }
        trace
    }

    pub fn last(&self) -> Option<&Value> {
        self.values.last().filter(|_| self.failure.is_none())
    }
}
