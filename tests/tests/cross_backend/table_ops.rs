//! The ops of the backend's op table a program calls, by name: what the coverage check counts.

use crate::support::program::{
    Binary, BoolBinary, Compare, Fill, IntBinary, IntCompare, IntFill, LayerNormArgument, Program, Reduce, ReduceDim,
    Scalar, Step, Unary,
};
use dispatch_core::DType;

impl Program {
    /// Every op of the backend's op table a run of this program calls, for the coverage check: making the input
    /// and the operands, the steps, reading the result.
    pub fn table_ops(&self) -> Vec<&'static str> {
        let mut ops = vec!["from_f64_vec"];
        for step in &self.steps {
            ops.extend(step.table_ops());
            let (floats, ints, bools) = step.operands();
            ops.extend(floats.iter().map(|operand| match operand.fill {
                Fill::Grid { .. } if operand.dtype == DType::F32 => "from_vec",
                Fill::Grid { .. } => "from_f64_vec",
                Fill::Constant(_) => "full",
            }));
            ops.extend(ints.iter().map(|operand| match operand.fill {
                IntFill::Seeded { .. } => "int_from_vec",
                IntFill::Arange { .. } => "arange",
            }));
            ops.extend(bools.iter().map(|_| "bool_from_vec"));
        }
        ops.extend(["shape", "dtype", "to_f64_vec", "int_shape", "int_to_vec", "bool_shape", "bool_to_vec"]);
        ops
    }
}

impl Step {
    /// The ops of the backend's op table this step calls (beyond making its operands), for the coverage check.
    pub fn table_ops(&self) -> Vec<&'static str> {
        let ops: &[&str] = match self {
            Step::Binary { op, given_up, .. } => match (op, given_up) {
                (Binary::Add, true) => &["add_into"],
                (Binary::Sub, true) => &["sub_into"],
                (Binary::Mul, true) => &["mul_into"],
                (Binary::Div, true) => &["div_into"],
                (Binary::Add, false) => &["add"],
                (Binary::Sub, false) => &["sub"],
                (Binary::Mul, false) => &["mul"],
                (Binary::Div, false) => &["div"],
                (Binary::Maximum, _) => &["maximum"],
                (Binary::Minimum, _) => &["minimum"],
                (Binary::GeluBackward, _) => &["gelu_backward"],
            },
            Step::Scalar { op, given_up, .. } => match (op, given_up) {
                (Scalar::Add, true) => &["add_scalar_into"],
                (Scalar::Mul, true) => &["mul_scalar_into"],
                (Scalar::Add, false) => &["add_scalar"],
                (Scalar::Mul, false) => &["mul_scalar"],
                (Scalar::Powf, _) => &["powf_scalar"],
                (Scalar::Greater, _) => &["gt_scalar", "bool_to_float"],
            },
            Step::Clamp { .. } => &["clamp"],
            Step::Unary(op) => &[unary_name(*op)],
            Step::Adam { .. } => &["adam_step"],
            Step::Reduce(op) => match op {
                Reduce::Sum => &["sum"],
                Reduce::Mean => &["mean"],
                Reduce::Prod => &["prod"],
                Reduce::Max => &["max"],
                Reduce::Min => &["min"],
            },
            Step::ReduceDim(op, _) => match op {
                ReduceDim::Sum => &["sum_dim"],
                ReduceDim::Mean => &["mean_dim"],
                ReduceDim::Prod => &["prod_dim"],
                ReduceDim::Max => &["max_dim"],
                ReduceDim::Min => &["min_dim"],
                ReduceDim::LogSoftmax => &["log_softmax"],
                // With its backward rule's op, which the run calls when it takes the program's gradient.
                ReduceDim::Softmax => &["softmax", "softmax_backward"],
                ReduceDim::Var(_) => &["var_dim"],
            },
            Step::LayerNorm { current_as: LayerNormArgument::Input, .. } => &["layer_norm", "layer_norm_backward"],
            Step::LayerNorm { .. } => &["layer_norm", "layer_norm_parameter_gradients"],
            Step::CrossEntropy { .. } => &["cross_entropy"],
            Step::Matmul { .. } => &["matmul"],
            // With its backward rule's ops, which the run calls when it takes the program's gradient.
            Step::AttentionWeights { .. } => {
                &["attention_weights", "softmax_backward", "matmul", "swap_dims", "mul_scalar"]
            }
            Step::Reshape(_) => &["reshape"],
            Step::Permute(_) => &["permute"],
            Step::SwapDims(..) => &["swap_dims"],
            Step::Narrow { .. } => &["narrow"],
            Step::Cat { .. } => &["cat"],
            Step::Stack { .. } => &["stack"],
            Step::Expand(_) => &["expand"],
            Step::Repeat(_) => &["repeat"],
            Step::Flip(_) => &["flip"],
            Step::Squeeze(_) => &["squeeze"],
            Step::Unsqueeze(_) => &["unsqueeze"],
            Step::SliceAssign { .. } => &["slice_assign"],
            Step::IndexSelect { .. } => &["index_select"],
            Step::Gather { .. } => &["gather"],
            Step::ScatterAdd { .. } => &["scatter_add"],
            Step::SelectAdd { .. } => &["select_add"],
            Step::Embedding { .. } | Step::EmbeddingOf { .. } => &["embedding"],
            Step::Conv2d { .. } => &["conv2d"],
            Step::Conv1d { .. } => &["conv1d"],
            Step::ConvTranspose2d { .. } => &["conv_transpose2d"],
            Step::Conv2dWeightGradient { .. } => &["conv2d_weight_gradient"],
            Step::MaxPool2d(_) => &["max_pool2d"],
            Step::AvgPool2d(_) => &["avg_pool2d"],
            Step::AdaptiveAvgPool2d(_) => &["adaptive_avg_pool2d"],
            Step::Unfold2d { .. } => &["unfold2d"],
            Step::Fold2d { .. } => &["fold2d"],
            Step::MaskWhere { .. } | Step::SelectBy { .. } => &["mask_where"],
            Step::MaskFill { .. } | Step::FillBy { .. } => &["mask_fill"],
            Step::Cast(_) => &["cast"],
            Step::ThroughHost => &["to_vec", "from_vec"],
            Step::HostOp => &["host_op"],
            Step::ToDevice => &["to_device", "device"],
            Step::Compare { op, .. } => &[compare_name(*op, false)],
            Step::CompareScalar { op, .. } => &[compare_name(*op, true)],
            Step::ArgMax(_) => &["argmax"],
            Step::ArgMin(_) => &["argmin"],
            Step::MaxPool2dIndices(_) => &["max_pool2d_indices"],
            Step::IntBinary { op, .. } => match op {
                IntBinary::Add => &["int_add"],
                IntBinary::Sub => &["int_sub"],
                IntBinary::Mul => &["int_mul"],
                IntBinary::Div => &["int_div"],
            },
            Step::IntAddScalar(_) => &["int_add_scalar"],
            Step::IntMulScalar(_) => &["int_mul_scalar"],
            Step::IntSum => &["int_sum"],
            Step::IntCompare { op, .. } => &[int_compare_name(*op)],
            Step::IntEqScalar(_) => &["int_eq_scalar"],
            Step::IntReshape(_) => &["int_reshape"],
            Step::IntToFloat(_) => &["int_to_float"],
            Step::IntToDevice => &["int_to_device", "int_device"],
            Step::OneHot { .. } => &["one_hot"],
            Step::BoolBinary { op: BoolBinary::And, .. } => &["bool_and"],
            Step::BoolBinary { op: BoolBinary::Or, .. } => &["bool_or"],
            Step::BoolNot => &["bool_not"],
            Step::BoolAny => &["bool_any"],
            Step::BoolAll => &["bool_all"],
            Step::BoolToInt => &["bool_to_int"],
            Step::BoolToFloat(_) => &["bool_to_float"],
            Step::BoolToDevice => &["bool_to_device", "bool_device"],
        };
        ops.to_vec()
    }
}

fn unary_name(op: Unary) -> &'static str {
    match op {
        Unary::Neg => "neg",
        Unary::Exp => "exp",
        Unary::Log => "log",
        Unary::Relu => "relu",
        Unary::Sigmoid => "sigmoid",
        Unary::Tanh => "tanh",
        Unary::Sqrt => "sqrt",
        Unary::Recip => "recip",
        Unary::Abs => "abs",
        Unary::Sin => "sin",
        Unary::Cos => "cos",
        Unary::Erf => "erf",
        Unary::Gelu => "gelu",
        Unary::Silu => "silu",
    }
}

fn compare_name(op: Compare, scalar: bool) -> &'static str {
    match (op, scalar) {
        (Compare::Eq, false) => "eq",
        (Compare::Ne, false) => "ne",
        (Compare::Lt, false) => "lt",
        (Compare::Le, false) => "le",
        (Compare::Gt, false) => "gt",
        (Compare::Ge, false) => "ge",
        (Compare::Eq, true) => "eq_scalar",
        (Compare::Ne, true) => "ne_scalar",
        (Compare::Lt, true) => "lt_scalar",
        (Compare::Le, true) => "le_scalar",
        (Compare::Gt, true) => "gt_scalar",
        (Compare::Ge, true) => "ge_scalar",
    }
}

fn int_compare_name(op: IntCompare) -> &'static str {
    match op {
        IntCompare::Eq => "int_eq",
        IntCompare::Lt => "int_lt",
        IntCompare::Le => "int_le",
        IntCompare::Gt => "int_gt",
        IntCompare::Ge => "int_ge",
    }
}
