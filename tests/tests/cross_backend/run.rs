//! Runs a program on a backend through the public `Tensor` API, and reads what it gives back.

use std::sync::Arc;

use crate::support::program::{
    Binary, BoolBinary, BoolOperand, Compare, Fill, FloatOperand, IntBinary, IntCompare, IntFill, IntOperand, Program,
    Reduce, ReduceDim, Scalar, Step, Unary,
};
use crate::support::values::{self, count};
use dispatch_core::{AutodiffBackend, Backend, BoolTensor, DType, IntTensor, Result, Tensor};

/// What a program leaves, read back to the host.
#[derive(Clone, Debug, PartialEq)]
pub enum Output {
    Float { dims: Vec<usize>, dtype: DType, values: Vec<f64> },
    Int { dims: Vec<usize>, values: Vec<i64> },
    Bool { dims: Vec<usize>, values: Vec<bool> },
}

enum Current<B: Backend> {
    Float(Tensor<B>),
    Int(IntTensor<B>),
    Bool(BoolTensor<B>),
}

fn float_operand<B: Backend>(operand: &FloatOperand, device: &B::Device) -> Result<Tensor<B>> {
    let n = count(&operand.dims);
    match operand.fill {
        Fill::Grid { seed, low, high } => {
            let values = values::grid(seed, n, (low, high));
            if operand.dtype == DType::F32 {
                Tensor::from_vec(values.iter().map(|&x| x as f32).collect(), operand.dims.as_slice(), device)
            } else {
                Tensor::from_f64_vec(values, operand.dims.as_slice(), operand.dtype, device)
            }
        }
        Fill::Constant(value) => Tensor::full(operand.dims.as_slice(), value, operand.dtype, device),
    }
}

fn int_operand<B: Backend>(operand: &IntOperand, device: &B::Device) -> Result<IntTensor<B>> {
    let n = count(&operand.dims);
    match operand.fill {
        IntFill::Seeded { seed, low, high } => {
            IntTensor::from_vec(values::ints(seed, n, (low, high)), operand.dims.as_slice(), device)
        }
        IntFill::Arange { start } => IntTensor::arange(start, start + n as i64, device),
    }
}

fn bool_operand<B: Backend>(operand: &BoolOperand, device: &B::Device) -> Result<BoolTensor<B>> {
    BoolTensor::from_vec(values::bools(operand.seed, count(&operand.dims)), operand.dims.as_slice(), device)
}

pub fn program_input<B: Backend>(program: &Program, device: &B::Device) -> Result<Tensor<B>> {
    let values = values::grid(program.seed, count(&program.input), (-2.0, 2.0));
    Tensor::from_f64_vec(values, program.input.as_slice(), program.dtype, device)
}

/// The program's weights for `Σ w ⊙ output`: nonzero multiples of 1/8 in [-1, 1], exact in every dtype.
pub fn output_weights(program: &Program, n: usize) -> Vec<f64> {
    values::grid(program.seed ^ 0x5eed, n, (-1.0, 1.0)).into_iter().map(|w| if w == 0.0 { 0.5 } else { w }).collect()
}

fn read<B: Backend>(current: &Current<B>) -> Result<Output> {
    Ok(match current {
        Current::Float(t) => Output::Float { dims: t.dims(), dtype: t.dtype(), values: t.to_f64_vec()? },
        Current::Int(t) => Output::Int { dims: t.dims(), values: t.to_vec()? },
        Current::Bool(t) => Output::Bool { dims: t.dims(), values: t.to_vec()? },
    })
}

pub fn run<B: Backend>(program: &Program, device: &B::Device) -> Result<Output> {
    let input = program_input::<B>(program, device)?;
    read(&run_steps(program, Current::Float(input), device)?)
}

/// The output, and the gradient of `Σ w ⊙ output` by the input when the output is a float tensor (zeros where
/// the input gets none).
pub fn run_with_gradient<B: AutodiffBackend>(
    program: &Program,
    device: &B::Device,
) -> Result<(Output, Option<Vec<f64>>)> {
    let input = program_input::<B>(program, device)?.require_grad()?;
    let output = run_steps(program, Current::Float(input.clone()), device)?;
    let Current::Float(tensor) = &output else { return Ok((read(&output)?, None)) };
    let weights = output_weights(program, count(&tensor.dims()));
    let weights = Tensor::from_f64_vec(weights, tensor.dims(), tensor.dtype(), device)?;
    let gradients = tensor.mul(&weights)?.sum()?.backward()?;
    let gradient = match input.grad(&gradients) {
        Some(gradient) => {
            assert_eq!(gradient.dtype(), program.dtype, "{}: the gradient is not of the input's dtype", B::name());
            assert_eq!(gradient.dims(), program.input, "{}: the gradient is not of the input's dims", B::name());
            gradient.to_f64_vec()?
        }
        None => vec![0.0; count(&program.input)],
    };
    Ok((read(&output)?, Some(gradient)))
}

fn run_steps<B: Backend>(program: &Program, mut current: Current<B>, device: &B::Device) -> Result<Current<B>> {
    for step in &program.steps {
        current = run_step(step, current, device)?;
    }
    Ok(current)
}

fn float<B: Backend>(current: &Current<B>) -> &Tensor<B> {
    match current {
        Current::Float(t) => t,
        _ => panic!("the planner put a float step after another kind"),
    }
}

fn into_float<B: Backend>(current: Current<B>) -> Tensor<B> {
    match current {
        Current::Float(t) => t,
        _ => panic!("the planner put a float step after another kind"),
    }
}

fn int<B: Backend>(current: &Current<B>) -> &IntTensor<B> {
    match current {
        Current::Int(t) => t,
        _ => panic!("the planner put an int step after another kind"),
    }
}

fn boolean<B: Backend>(current: &Current<B>) -> &BoolTensor<B> {
    match current {
        Current::Bool(t) => t,
        _ => panic!("the planner put a bool step after another kind"),
    }
}

fn ordered<B: Backend>(current: &Tensor<B>, other: Tensor<B>, current_first: bool) -> [Tensor<B>; 2] {
    if current_first { [current.clone(), other] } else { [other, current.clone()] }
}

/// The step, given the current value: a step that gives up its first operand passes it on by value (nothing else
/// holds it, unless it is the program's input or a graph keeps it).
fn run_step<B: Backend>(step: &Step, current: Current<B>, device: &B::Device) -> Result<Current<B>> {
    use Current::{Bool as B_, Float as F, Int as I};
    let operand = |operand: &FloatOperand| float_operand::<B>(operand, device);
    match step {
        Step::Binary {
            op: op @ (Binary::Add | Binary::Sub | Binary::Mul | Binary::Div),
            other,
            current_first,
            given_up: true,
        } => {
            let current = into_float(current);
            let [a, b] = if *current_first { [current, operand(other)?] } else { [operand(other)?, current] };
            return Ok(F(match op {
                Binary::Add => a.add_into(&b)?,
                Binary::Sub => a.sub_into(&b)?,
                Binary::Mul => a.mul_into(&b)?,
                _ => a.div_into(&b)?,
            }));
        }
        Step::Scalar { op: op @ (Scalar::Add | Scalar::Mul), scalar, given_up: true } => {
            let current = into_float(current);
            return Ok(F(match op {
                Scalar::Add => current.add_scalar_into(*scalar)?,
                _ => current.mul_scalar_into(*scalar)?,
            }));
        }
        _ => {}
    }
    let current = &current;
    Ok(match step {
        Step::Binary { op, other, current_first, .. } => {
            let [a, b] = ordered(float(current), operand(other)?, *current_first);
            F(match op {
                Binary::Add => a.add(&b)?,
                Binary::Sub => a.sub(&b)?,
                Binary::Mul => a.mul(&b)?,
                Binary::Div => a.div(&b)?,
                Binary::Maximum => a.maximum(&b)?,
                Binary::Minimum => a.minimum(&b)?,
                Binary::GeluBackward => a.gelu_backward(&b)?,
            })
        }
        Step::Scalar { op, scalar, .. } => {
            let t = float(current);
            F(match op {
                Scalar::Add => t.add_scalar(*scalar)?,
                Scalar::Mul => t.mul_scalar(*scalar)?,
                Scalar::Powf => t.powf_scalar(*scalar)?,
                Scalar::Greater => t.gt_scalar(*scalar)?.float(t.dtype())?,
            })
        }
        Step::Clamp { min, max } => F(float(current).clamp(*min, *max)?),
        Step::Unary(op) => F(unary(*op, float(current))?),
        Step::Reduce(op) => {
            let t = float(current);
            F(match op {
                Reduce::Sum => t.sum()?,
                Reduce::Mean => t.mean()?,
                Reduce::Prod => t.prod()?,
                Reduce::Max => t.max()?,
                Reduce::Min => t.min()?,
            })
        }
        Step::ReduceDim(op, axis) => {
            let (t, axis) = (float(current), *axis);
            F(match op {
                ReduceDim::Sum => t.sum_dim(axis)?,
                ReduceDim::Mean => t.mean_dim(axis)?,
                ReduceDim::Prod => t.prod_dim(axis)?,
                ReduceDim::Max => t.max_dim(axis)?,
                ReduceDim::Min => t.min_dim(axis)?,
                ReduceDim::LogSoftmax => t.log_softmax(axis)?,
                ReduceDim::Softmax => t.softmax(axis)?,
                ReduceDim::Var(correction) => t.var_dim(axis, *correction)?,
            })
        }
        Step::LayerNorm { current_as, others: [first, second], eps } => {
            let [input, gamma, beta] = current_as.arrange(float(current).clone(), [operand(first)?, operand(second)?]);
            F(input.layer_norm(&gamma, &beta, *eps)?)
        }
        Step::CrossEntropy { targets } => F(float(current).cross_entropy(&int_operand(targets, device)?)?),
        Step::Matmul { other, current_first } => {
            let [a, b] = ordered(float(current), operand(other)?, *current_first);
            F(a.matmul(&b)?)
        }
        Step::AttentionWeights { other, current_is_query, scale, causal } => {
            let [query, key] = ordered(float(current), operand(other)?, *current_is_query);
            F(query.attention_weights(&key, *scale, *causal)?)
        }
        Step::Reshape(dims) => F(float(current).reshape(dims.clone())?),
        Step::Permute(axes) => F(float(current).permute(axes.clone())?),
        Step::SwapDims(a, b) => F(float(current).swap_dims(*a, *b)?),
        Step::Narrow { axis, start, len } => F(float(current).narrow(*axis, *start, *len)?),
        Step::Cat { axis, other, current_first } => {
            F(Tensor::cat(&ordered(float(current), operand(other)?, *current_first), *axis)?)
        }
        Step::Stack { axis, other, current_first } => {
            F(Tensor::stack(&ordered(float(current), operand(other)?, *current_first), *axis)?)
        }
        Step::Expand(dims) => F(float(current).expand(dims.clone())?),
        Step::Repeat(times) => F(float(current).repeat(times.clone())?),
        Step::Flip(axes) => F(float(current).flip(axes.clone())?),
        Step::Squeeze(axis) => F(float(current).squeeze(*axis)?),
        Step::Unsqueeze(axis) => F(float(current).unsqueeze(*axis)?),
        Step::SliceAssign { axis, start, other, current_is_source } => {
            let [tensor, source] = ordered(float(current), operand(other)?, !current_is_source);
            F(tensor.slice_assign(*axis, *start, &source)?)
        }
        Step::IndexSelect { axis, indices } => F(float(current).index_select(*axis, &int_operand(indices, device)?)?),
        Step::Gather { axis, indices } => F(float(current).gather(*axis, &int_operand(indices, device)?)?),
        Step::ScatterAdd { axis, indices, other, current_is_source } => {
            let [tensor, source] = ordered(float(current), operand(other)?, !current_is_source);
            F(tensor.scatter_add(*axis, &int_operand(indices, device)?, &source)?)
        }
        Step::SelectAdd { axis, indices, other, current_is_source } => {
            let [tensor, source] = ordered(float(current), operand(other)?, !current_is_source);
            F(tensor.select_add(*axis, &int_operand(indices, device)?, &source)?)
        }
        Step::Embedding { ids } => F(float(current).embedding(&int_operand(ids, device)?)?),
        Step::Conv2d { weight, options } => F(float(current).conv2d(&operand(weight)?, *options)?),
        Step::Conv1d { weight, options } => F(float(current).conv1d(&operand(weight)?, *options)?),
        Step::ConvTranspose2d { weight, options } => F(float(current).conv_transpose2d(&operand(weight)?, *options)?),
        Step::Adam { gradient, moments, options } => {
            F(float(current).adam_step(&operand(gradient)?, &operand(moments)?, *options)?)
        }
        Step::Conv2dWeightGradient { gradient, kernel, options } => {
            F(float(current).conv2d_weight_gradient(&operand(gradient)?, *kernel, *options)?)
        }
        Step::MaxPool2d(window) => F(float(current).max_pool2d(*window)?),
        Step::AvgPool2d(window) => F(float(current).avg_pool2d(*window)?),
        Step::AdaptiveAvgPool2d(size) => F(float(current).adaptive_avg_pool2d(*size)?),
        Step::Unfold2d { window, pad } => F(float(current).unfold2d(*window, *pad)?),
        Step::Fold2d { size, window } => F(float(current).fold2d(size[0], size[1], *window)?),
        Step::MaskWhere { mask, other, current_on_true } => {
            let [on_true, on_false] = ordered(float(current), operand(other)?, *current_on_true);
            F(Tensor::mask_where(&bool_operand(mask, device)?, &on_true, &on_false)?)
        }
        Step::MaskFill { mask, value } => F(float(current).mask_fill(&bool_operand(mask, device)?, *value)?),
        Step::Cast(dtype) => F(float(current).cast(*dtype)?),
        Step::ThroughHost => {
            let t = float(current);
            F(Tensor::from_vec(t.to_vec()?, t.dims(), device)?)
        }
        Step::HostOp => F(float(current).host_op(Arc::new(dispatch_tests::IdentityHostOp))?),
        Step::ToDevice => {
            let t = float(current);
            F(t.to_device(&t.device())?)
        }
        Step::Compare { op, other } => {
            let (a, b) = (float(current), operand(other)?);
            B_(match op {
                Compare::Eq => a.eq(&b)?,
                Compare::Ne => a.ne(&b)?,
                Compare::Lt => a.lt(&b)?,
                Compare::Le => a.le(&b)?,
                Compare::Gt => a.gt(&b)?,
                Compare::Ge => a.ge(&b)?,
            })
        }
        Step::CompareScalar { op, scalar } => {
            let (a, s) = (float(current), *scalar);
            B_(match op {
                Compare::Eq => a.eq_scalar(s)?,
                Compare::Ne => a.ne_scalar(s)?,
                Compare::Lt => a.lt_scalar(s)?,
                Compare::Le => a.le_scalar(s)?,
                Compare::Gt => a.gt_scalar(s)?,
                Compare::Ge => a.ge_scalar(s)?,
            })
        }
        Step::ArgMax(axis) => I(float(current).argmax(*axis)?),
        Step::ArgMin(axis) => I(float(current).argmin(*axis)?),
        Step::MaxPool2dIndices(window) => I(float(current).max_pool2d_with_indices(*window)?.1),
        Step::IntBinary { op, other, current_first } => {
            let other = int_operand(other, device)?;
            let (a, b) = if *current_first { (int(current), &other) } else { (&other, int(current)) };
            I(match op {
                IntBinary::Add => a.add(b)?,
                IntBinary::Sub => a.sub(b)?,
                IntBinary::Mul => a.mul(b)?,
                IntBinary::Div => a.div(b)?,
            })
        }
        Step::IntAddScalar(s) => I(int(current).add_scalar(*s)?),
        Step::IntMulScalar(s) => I(int(current).mul_scalar(*s)?),
        Step::IntSum => I(int(current).sum()?),
        Step::IntCompare { op, other } => {
            let (a, b) = (int(current), int_operand(other, device)?);
            B_(match op {
                IntCompare::Eq => a.eq(&b)?,
                IntCompare::Lt => a.lt(&b)?,
                IntCompare::Le => a.le(&b)?,
                IntCompare::Gt => a.gt(&b)?,
                IntCompare::Ge => a.ge(&b)?,
            })
        }
        Step::IntEqScalar(s) => B_(int(current).eq_scalar(*s)?),
        Step::IntReshape(dims) => I(int(current).reshape(dims.clone())?),
        Step::IntToFloat(dtype) => F(int(current).float(*dtype)?),
        Step::IntToDevice => {
            let t = int(current);
            I(t.to_device(&t.device())?)
        }
        Step::OneHot { classes, dtype } => F(int(current).one_hot(*classes, *dtype)?),
        Step::EmbeddingOf { weights } => F(operand(weights)?.embedding(int(current))?),
        Step::BoolBinary { op, other } => {
            let (a, b) = (boolean(current), bool_operand(other, device)?);
            B_(match op {
                BoolBinary::And => a.and(&b)?,
                BoolBinary::Or => a.or(&b)?,
            })
        }
        Step::BoolNot => B_(boolean(current).not()?),
        Step::BoolAny => B_(boolean(current).any()?),
        Step::BoolAll => B_(boolean(current).all()?),
        Step::BoolToInt => I(boolean(current).int()?),
        Step::BoolToFloat(dtype) => F(boolean(current).float(*dtype)?),
        Step::BoolToDevice => {
            let t = boolean(current);
            B_(t.to_device(&t.device())?)
        }
        Step::SelectBy { on_true, on_false } => {
            F(Tensor::mask_where(boolean(current), &operand(on_true)?, &operand(on_false)?)?)
        }
        Step::FillBy { tensor, value } => F(operand(tensor)?.mask_fill(boolean(current), *value)?),
    })
}

fn unary<B: Backend>(op: Unary, t: &Tensor<B>) -> Result<Tensor<B>> {
    match op {
        Unary::Neg => t.neg(),
        Unary::Exp => t.exp(),
        Unary::Log => t.log(),
        Unary::Relu => t.relu(),
        Unary::Sigmoid => t.sigmoid(),
        Unary::Tanh => t.tanh(),
        Unary::Sqrt => t.sqrt(),
        Unary::Recip => t.recip(),
        Unary::Abs => t.abs(),
        Unary::Sin => t.sin(),
        Unary::Cos => t.cos(),
        Unary::Erf => t.erf(),
        Unary::Gelu => t.gelu(),
        Unary::Silu => t.silu(),
    }
}
