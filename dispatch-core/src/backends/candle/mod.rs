//! The candle backend: tensors over `candle-core`, on the CPU or (with the `cuda` feature) a CUDA GPU.
//!
//! Shapes, axes and devices are checked before candle runs, so bad input gets our typed errors; what candle still
//! reports becomes `Error::Backend` with candle's error as the source. The ops are in one file per op family, the
//! names of the op list's; the impl below lists every op candle computes itself, the others keep their default.

mod comparison;
mod creation;
mod device;
mod elementwise;
mod error;
mod index;
mod indices;
mod int_bool;
mod layout;
mod matmul;
mod memory;
mod operands;
mod reduce;
mod window;

use candle_core::Tensor;
use candle_core::op::CmpOp;

pub use self::device::CandleDevice;
use self::elementwise::{BinaryOp, CpuKernel, Extreme, binary, unary};
use self::error::dtype_of;
use self::int_bool::IntOp;
use self::int_bool::Logic;
use self::layout::shape_of;
use crate::backend::defaults;
use crate::backend::{AdamStep, Backend, Conv1dOptions, Conv2dOptions, Window2d};
use crate::backends::BaseBackend;
use crate::dtype::DType;
use crate::error::Result;
use crate::shape::Shape;

/// The candle backend; its tensor primitive is `candle_core::Tensor`: `F32`, `F64`, `F16` or `BF16` for float
/// tensors (each computed natively), `I64` for int tensors and `U8` (0 or 1) for bool tensors.
#[derive(Clone, Copy, Debug, Default)]
pub struct Candle;

impl BaseBackend for Candle {}

impl Backend for Candle {
    type Device = CandleDevice;
    type FloatTensor = Tensor;
    // One candle tensor type for every kind: int tensors hold `I64`, bool tensors `U8` (0 or 1).
    type IntTensor = Tensor;
    type BoolTensor = Tensor;

    fn name() -> String {
        "candle".to_owned()
    }

    // ---- creation -----------------------------------------------------------------------------------------------

    fn from_vec(data: Vec<f32>, shape: Shape, device: &CandleDevice) -> Result<Tensor> {
        creation::from_vec(data, shape, device)
    }

    fn from_f64_vec(data: Vec<f64>, shape: Shape, dtype: DType, device: &CandleDevice) -> Result<Tensor> {
        creation::from_f64_vec(data, shape, dtype, device)
    }

    fn full(shape: Shape, value: f64, dtype: DType, device: &CandleDevice) -> Result<Tensor> {
        creation::full(shape, value, dtype, device)
    }

    fn to_vec(tensor: &Tensor) -> Result<Vec<f32>> {
        creation::to_vec(tensor)
    }

    fn to_f64_vec(tensor: &Tensor) -> Result<Vec<f64>> {
        creation::to_f64_vec(tensor)
    }

    fn dtype(tensor: &Tensor) -> DType {
        dtype_of(tensor)
    }

    fn cast(tensor: &Tensor, dtype: DType) -> Result<Tensor> {
        creation::cast(tensor, dtype)
    }

    fn shape(tensor: &Tensor) -> Shape {
        shape_of(tensor)
    }

    fn device(tensor: &Tensor) -> CandleDevice {
        creation::device(tensor)
    }

    fn to_device(tensor: &Tensor, device: &CandleDevice) -> Result<Tensor> {
        creation::to_device(tensor, device)
    }

    // ---- elementwise --------------------------------------------------------------------------------------------

    fn add(lhs: &Tensor, rhs: &Tensor) -> Result<Tensor> {
        binary(BinaryOp::Add, lhs, rhs)
    }

    fn sub(lhs: &Tensor, rhs: &Tensor) -> Result<Tensor> {
        binary(BinaryOp::Sub, lhs, rhs)
    }

    fn mul(lhs: &Tensor, rhs: &Tensor) -> Result<Tensor> {
        binary(BinaryOp::Mul, lhs, rhs)
    }

    fn div(lhs: &Tensor, rhs: &Tensor) -> Result<Tensor> {
        binary(BinaryOp::Div, lhs, rhs)
    }

    fn add_scalar(tensor: &Tensor, scalar: f64) -> Result<Tensor> {
        elementwise::add_scalar(tensor, scalar)
    }

    fn mul_scalar(tensor: &Tensor, scalar: f64) -> Result<Tensor> {
        elementwise::mul_scalar(tensor, scalar)
    }

    fn powf_scalar(tensor: &Tensor, exponent: f64) -> Result<Tensor> {
        elementwise::powf_scalar(tensor, exponent)
    }

    fn sigmoid(tensor: &Tensor) -> Result<Tensor> {
        elementwise::sigmoid(tensor)
    }

    fn clamp(tensor: &Tensor, min: f64, max: f64) -> Result<Tensor> {
        elementwise::clamp(tensor, min, max)
    }

    fn neg(tensor: &Tensor) -> Result<Tensor> {
        unary("neg", tensor, |t| CpuKernel::Neg.apply(t))
    }

    fn exp(tensor: &Tensor) -> Result<Tensor> {
        unary("exp", tensor, |t| CpuKernel::Exp.apply(t))
    }

    fn log(tensor: &Tensor) -> Result<Tensor> {
        unary("log", tensor, Tensor::log)
    }

    fn relu(tensor: &Tensor) -> Result<Tensor> {
        unary("relu", tensor, |t| CpuKernel::Relu.apply(t))
    }

    fn tanh(tensor: &Tensor) -> Result<Tensor> {
        unary("tanh", tensor, Tensor::tanh)
    }

    fn sqrt(tensor: &Tensor) -> Result<Tensor> {
        unary("sqrt", tensor, |t| CpuKernel::Sqrt.apply(t))
    }

    fn recip(tensor: &Tensor) -> Result<Tensor> {
        unary("recip", tensor, |t| CpuKernel::Recip.apply(t))
    }

    fn abs(tensor: &Tensor) -> Result<Tensor> {
        unary("abs", tensor, |t| CpuKernel::Abs.apply(t))
    }

    fn sin(tensor: &Tensor) -> Result<Tensor> {
        unary("sin", tensor, Tensor::sin)
    }

    fn cos(tensor: &Tensor) -> Result<Tensor> {
        unary("cos", tensor, Tensor::cos)
    }

    fn erf(tensor: &Tensor) -> Result<Tensor> {
        unary("erf", tensor, |t| CpuKernel::Erf.apply(t))
    }

    fn gelu(tensor: &Tensor) -> Result<Tensor> {
        unary("gelu", tensor, |t| CpuKernel::Gelu.apply(t))
    }

    fn gelu_backward(tensor: &Tensor, gradient: &Tensor) -> Result<Tensor> {
        match elementwise::fused_gelu_backward(tensor, gradient)? {
            Some(fused) => Ok(fused),
            None => defaults::gelu_backward::<Self>(tensor, gradient),
        }
    }

    fn adam_step(parameter: &Tensor, gradient: &Tensor, moments: &Tensor, options: AdamStep) -> Result<Tensor> {
        match elementwise::fused_adam_step(parameter, gradient, moments, options)? {
            Some(fused) => Ok(fused),
            None => defaults::adam_step::<Self>(parameter, gradient, moments, options),
        }
    }

    fn silu(tensor: &Tensor) -> Result<Tensor> {
        unary("silu", tensor, Tensor::silu)
    }

    fn maximum(lhs: &Tensor, rhs: &Tensor) -> Result<Tensor> {
        elementwise::extreme("maximum", Extreme::Max, lhs, rhs)
    }

    fn minimum(lhs: &Tensor, rhs: &Tensor) -> Result<Tensor> {
        elementwise::extreme("minimum", Extreme::Min, lhs, rhs)
    }

    // ---- matmul -------------------------------------------------------------------------------------------------

    fn matmul(lhs: &Tensor, rhs: &Tensor) -> Result<Tensor> {
        matmul::matmul(lhs, rhs)
    }

    // ---- layout -------------------------------------------------------------------------------------------------

    fn swap_dims(tensor: &Tensor, dim0: usize, dim1: usize) -> Result<Tensor> {
        layout::swap_dims(tensor, dim0, dim1)
    }

    fn reshape(tensor: &Tensor, shape: Shape) -> Result<Tensor> {
        layout::reshape(tensor, &shape)
    }

    fn narrow(tensor: &Tensor, axis: usize, start: usize, len: usize) -> Result<Tensor> {
        layout::narrow(tensor, axis, start, len)
    }

    fn cat(tensors: &[Tensor], axis: usize) -> Result<Tensor> {
        layout::cat(tensors, axis)
    }

    fn permute(tensor: &Tensor, axes: Vec<usize>) -> Result<Tensor> {
        layout::permute(tensor, axes)
    }

    fn flip(tensor: &Tensor, axes: Vec<usize>) -> Result<Tensor> {
        layout::flip(tensor, &axes)
    }

    // ---- reduce -------------------------------------------------------------------------------------------------

    fn sum(tensor: &Tensor) -> Result<Tensor> {
        reduce::sum(tensor)
    }

    fn mean(tensor: &Tensor) -> Result<Tensor> {
        reduce::mean(tensor)
    }

    fn sum_dim(tensor: &Tensor, axis: usize) -> Result<Tensor> {
        reduce::sum_dim(tensor, axis)
    }

    fn mean_dim(tensor: &Tensor, axis: usize) -> Result<Tensor> {
        reduce::mean_dim(tensor, axis)
    }

    fn log_softmax(tensor: &Tensor, axis: usize) -> Result<Tensor> {
        reduce::log_softmax(tensor, axis)
    }

    fn softmax(tensor: &Tensor, axis: usize) -> Result<Tensor> {
        reduce::softmax(tensor, axis)
    }

    fn softmax_backward(output: &Tensor, gradient: &Tensor, axis: usize) -> Result<Tensor> {
        match reduce::fused_softmax_backward(output, gradient, axis)? {
            Some(fused) => Ok(fused),
            None => defaults::softmax_backward::<Self>(output, gradient, axis),
        }
    }

    fn attention_weights(query: &Tensor, key: &Tensor, scale: f64, causal: bool) -> Result<Tensor> {
        match reduce::fused_attention_weights(query, key, scale, causal)? {
            Some(fused) => Ok(fused),
            None => defaults::attention_weights::<Self>(query, key, scale, causal),
        }
    }

    fn cross_entropy(logits: &Tensor, targets: &Tensor) -> Result<Tensor> {
        reduce::cross_entropy(logits, targets)
    }

    fn layer_norm(tensor: &Tensor, gamma: &Tensor, beta: &Tensor, eps: f64) -> Result<Tensor> {
        reduce::layer_norm(tensor, gamma, beta, eps)
    }

    fn layer_norm_backward(tensor: &Tensor, gamma: &Tensor, gradient: &Tensor, eps: f64) -> Result<Tensor> {
        match reduce::fused_layer_norm_backward(tensor, gamma, gradient, eps)? {
            Some(fused) => Ok(fused),
            None => defaults::layer_norm_backward::<Self>(tensor, gamma, gradient, eps),
        }
    }

    fn layer_norm_parameter_gradients(tensor: &Tensor, gradient: &Tensor, eps: f64) -> Result<Tensor> {
        match reduce::fused_layer_norm_parameter_gradients(tensor, gradient, eps)? {
            Some(fused) => Ok(fused),
            None => defaults::layer_norm_parameter_gradients::<Self>(tensor, gradient, eps),
        }
    }

    fn max_dim(tensor: &Tensor, axis: usize) -> Result<Tensor> {
        reduce::extreme_dim("max_dim", Extreme::Max, tensor, axis)
    }

    fn min_dim(tensor: &Tensor, axis: usize) -> Result<Tensor> {
        reduce::extreme_dim("min_dim", Extreme::Min, tensor, axis)
    }

    fn prod_dim(tensor: &Tensor, axis: usize) -> Result<Tensor> {
        reduce::prod_dim(tensor, axis)
    }

    fn argmax(tensor: &Tensor, axis: usize) -> Result<Tensor> {
        reduce::argmax(tensor, axis)
    }

    fn argmin(tensor: &Tensor, axis: usize) -> Result<Tensor> {
        reduce::argmin(tensor, axis)
    }

    // ---- comparison ---------------------------------------------------------------------------------------------

    fn eq(lhs: &Tensor, rhs: &Tensor) -> Result<Tensor> {
        comparison::compare("eq", CmpOp::Eq, lhs, rhs)
    }

    fn ne(lhs: &Tensor, rhs: &Tensor) -> Result<Tensor> {
        comparison::compare("ne", CmpOp::Ne, lhs, rhs)
    }

    fn lt(lhs: &Tensor, rhs: &Tensor) -> Result<Tensor> {
        comparison::compare("lt", CmpOp::Lt, lhs, rhs)
    }

    fn le(lhs: &Tensor, rhs: &Tensor) -> Result<Tensor> {
        comparison::compare("le", CmpOp::Le, lhs, rhs)
    }

    fn gt(lhs: &Tensor, rhs: &Tensor) -> Result<Tensor> {
        comparison::compare("gt", CmpOp::Gt, lhs, rhs)
    }

    fn ge(lhs: &Tensor, rhs: &Tensor) -> Result<Tensor> {
        comparison::compare("ge", CmpOp::Ge, lhs, rhs)
    }

    fn eq_scalar(tensor: &Tensor, scalar: f64) -> Result<Tensor> {
        comparison::compare_scalar("eq_scalar", CmpOp::Eq, tensor, scalar)
    }

    fn ne_scalar(tensor: &Tensor, scalar: f64) -> Result<Tensor> {
        comparison::compare_scalar("ne_scalar", CmpOp::Ne, tensor, scalar)
    }

    fn lt_scalar(tensor: &Tensor, scalar: f64) -> Result<Tensor> {
        comparison::compare_scalar("lt_scalar", CmpOp::Lt, tensor, scalar)
    }

    fn le_scalar(tensor: &Tensor, scalar: f64) -> Result<Tensor> {
        comparison::compare_scalar("le_scalar", CmpOp::Le, tensor, scalar)
    }

    fn gt_scalar(tensor: &Tensor, scalar: f64) -> Result<Tensor> {
        comparison::compare_scalar("gt_scalar", CmpOp::Gt, tensor, scalar)
    }

    fn ge_scalar(tensor: &Tensor, scalar: f64) -> Result<Tensor> {
        comparison::compare_scalar("ge_scalar", CmpOp::Ge, tensor, scalar)
    }

    fn mask_where(mask: &Tensor, on_true: &Tensor, on_false: &Tensor) -> Result<Tensor> {
        comparison::mask_where(mask, on_true, on_false)
    }

    fn mask_fill(tensor: &Tensor, mask: &Tensor, value: f64) -> Result<Tensor> {
        comparison::mask_fill(tensor, mask, value)
    }

    // ---- window -------------------------------------------------------------------------------------------------

    fn unfold2d(tensor: &Tensor, window: Window2d, pad_value: f64) -> Result<Tensor> {
        window::unfold("unfold2d", tensor, window, pad_value)
    }

    fn fold2d(tensor: &Tensor, height: usize, width: usize, window: Window2d) -> Result<Tensor> {
        window::fold2d(tensor, height, width, window)
    }

    fn conv2d(input: &Tensor, weight: &Tensor, options: Conv2dOptions) -> Result<Tensor> {
        window::conv2d::<Self>(input, weight, options)
    }

    fn conv1d(input: &Tensor, weight: &Tensor, options: Conv1dOptions) -> Result<Tensor> {
        window::conv1d::<Self>(input, weight, options)
    }

    fn conv2d_weight_gradient(
        input: &Tensor,
        gradient: &Tensor,
        kernel: [usize; 2],
        options: Conv2dOptions,
    ) -> Result<Tensor> {
        window::conv2d_weight_gradient::<Self>(input, gradient, kernel, options)
    }

    fn conv_transpose2d(input: &Tensor, weight: &Tensor, options: Conv2dOptions) -> Result<Tensor> {
        window::conv_transpose2d::<Self>(input, weight, options)
    }

    fn max_pool2d(input: &Tensor, window: Window2d) -> Result<Tensor> {
        window::max_pool2d(input, window)
    }

    fn max_pool2d_indices(input: &Tensor, window: Window2d) -> Result<Tensor> {
        window::max_pool2d_indices(input, window)
    }

    fn adaptive_avg_pool2d(input: &Tensor, output: [usize; 2]) -> Result<Tensor> {
        window::adaptive_avg_pool2d(input, output)
    }

    // ---- index --------------------------------------------------------------------------------------------------

    fn index_select(tensor: &Tensor, axis: usize, indices: &Tensor) -> Result<Tensor> {
        index::index_select(tensor, axis, indices)
    }

    fn select_add(tensor: &Tensor, axis: usize, indices: &Tensor, source: &Tensor) -> Result<Tensor> {
        index::select_add(tensor, axis, indices, source)
    }

    fn gather(tensor: &Tensor, axis: usize, indices: &Tensor) -> Result<Tensor> {
        index::gather(tensor, axis, indices)
    }

    fn scatter_add(tensor: &Tensor, axis: usize, indices: &Tensor, source: &Tensor) -> Result<Tensor> {
        index::scatter_add(tensor, axis, indices, source)
    }

    fn one_hot(indices: &Tensor, classes: usize, dtype: DType) -> Result<Tensor> {
        index::one_hot(indices, classes, dtype)
    }

    // ---- int_bool -----------------------------------------------------------------------------------------------

    fn int_from_vec(data: Vec<i64>, shape: Shape, device: &CandleDevice) -> Result<Tensor> {
        int_bool::int_from_vec(data, shape, device)
    }

    fn int_to_vec(tensor: &Tensor) -> Result<Vec<i64>> {
        int_bool::int_to_vec(tensor)
    }

    fn int_shape(tensor: &Tensor) -> Shape {
        shape_of(tensor)
    }

    fn int_device(tensor: &Tensor) -> CandleDevice {
        creation::device(tensor)
    }

    fn int_to_device(tensor: &Tensor, device: &CandleDevice) -> Result<Tensor> {
        creation::to_device(tensor, device)
    }

    fn arange(start: i64, end: i64, device: &CandleDevice) -> Result<Tensor> {
        int_bool::arange(start, end, device)
    }

    fn int_add(lhs: &Tensor, rhs: &Tensor) -> Result<Tensor> {
        int_bool::int_arithmetic(IntOp::Add, lhs, rhs)
    }

    fn int_sub(lhs: &Tensor, rhs: &Tensor) -> Result<Tensor> {
        int_bool::int_arithmetic(IntOp::Sub, lhs, rhs)
    }

    fn int_mul(lhs: &Tensor, rhs: &Tensor) -> Result<Tensor> {
        int_bool::int_arithmetic(IntOp::Mul, lhs, rhs)
    }

    fn int_div(lhs: &Tensor, rhs: &Tensor) -> Result<Tensor> {
        int_bool::int_div(lhs, rhs)
    }

    fn int_add_scalar(tensor: &Tensor, scalar: i64) -> Result<Tensor> {
        int_bool::int_add_scalar(tensor, scalar)
    }

    fn int_mul_scalar(tensor: &Tensor, scalar: i64) -> Result<Tensor> {
        int_bool::int_mul_scalar(tensor, scalar)
    }

    fn int_sum(tensor: &Tensor) -> Result<Tensor> {
        int_bool::int_sum(tensor)
    }

    fn int_eq(lhs: &Tensor, rhs: &Tensor) -> Result<Tensor> {
        int_bool::int_compare("int_eq", CmpOp::Eq, lhs, rhs)
    }

    fn int_eq_scalar(tensor: &Tensor, scalar: i64) -> Result<Tensor> {
        int_bool::int_eq_scalar(tensor, scalar)
    }

    fn int_lt(lhs: &Tensor, rhs: &Tensor) -> Result<Tensor> {
        int_bool::int_compare("int_lt", CmpOp::Lt, lhs, rhs)
    }

    fn int_le(lhs: &Tensor, rhs: &Tensor) -> Result<Tensor> {
        int_bool::int_compare("int_le", CmpOp::Le, lhs, rhs)
    }

    fn int_gt(lhs: &Tensor, rhs: &Tensor) -> Result<Tensor> {
        int_bool::int_compare("int_gt", CmpOp::Gt, lhs, rhs)
    }

    fn int_ge(lhs: &Tensor, rhs: &Tensor) -> Result<Tensor> {
        int_bool::int_compare("int_ge", CmpOp::Ge, lhs, rhs)
    }

    fn int_reshape(tensor: &Tensor, shape: Shape) -> Result<Tensor> {
        int_bool::int_reshape(tensor, &shape)
    }

    fn int_to_float(tensor: &Tensor, dtype: DType) -> Result<Tensor> {
        int_bool::int_to_float(tensor, dtype)
    }

    fn bool_from_vec(data: Vec<bool>, shape: Shape, device: &CandleDevice) -> Result<Tensor> {
        int_bool::bool_from_vec(data, shape, device)
    }

    fn bool_to_vec(tensor: &Tensor) -> Result<Vec<bool>> {
        int_bool::bool_to_vec(tensor)
    }

    fn bool_shape(tensor: &Tensor) -> Shape {
        shape_of(tensor)
    }

    fn bool_device(tensor: &Tensor) -> CandleDevice {
        creation::device(tensor)
    }

    fn bool_to_device(tensor: &Tensor, device: &CandleDevice) -> Result<Tensor> {
        creation::to_device(tensor, device)
    }

    fn bool_and(lhs: &Tensor, rhs: &Tensor) -> Result<Tensor> {
        int_bool::bool_logic(Logic::And, lhs, rhs)
    }

    fn bool_or(lhs: &Tensor, rhs: &Tensor) -> Result<Tensor> {
        int_bool::bool_logic(Logic::Or, lhs, rhs)
    }

    fn bool_not(tensor: &Tensor) -> Result<Tensor> {
        int_bool::bool_not(tensor)
    }

    fn bool_any(tensor: &Tensor) -> Result<Tensor> {
        int_bool::bool_reduce("bool_any", tensor, true)
    }

    fn bool_all(tensor: &Tensor) -> Result<Tensor> {
        int_bool::bool_reduce("bool_all", tensor, false)
    }

    fn bool_to_int(tensor: &Tensor) -> Result<Tensor> {
        int_bool::bool_to_int(tensor)
    }

    fn bool_to_float(tensor: &Tensor, dtype: DType) -> Result<Tensor> {
        int_bool::bool_to_float(tensor, dtype)
    }
}
