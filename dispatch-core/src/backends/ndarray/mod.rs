//! The ndarray backend: CPU tensors over `ndarray`, with matrix products by `matrixmultiply`.

mod broadcast;
mod buffers;
mod comparison;
mod elementwise;
mod index;
mod int_bool;
mod layout;
mod matmul;
mod parallel;
mod reduce;
mod tensor;
#[cfg(test)]
mod tests;
mod window;

use std::fmt;
use std::str::FromStr;

use self::elementwise::{binary, binary_into, unary, unary_into};
pub use self::int_bool::{NdArrayBoolTensor, NdArrayIntTensor};
pub use self::tensor::NdArrayTensor;
use self::tensor::{Element, with_array, with_arrays};
use crate::backend::{AdamStep, Backend, Conv1dOptions, Conv2dOptions, Window2d};
use crate::backends::BaseBackend;
use crate::device::{BackendDevice, DeviceOf, ParseDeviceError};
use crate::dtype::DType;
use crate::error::Result;
use crate::kernels::Kernels;
use crate::math;
use crate::shape::Shape;
use crate::transfers::{counted_read, counted_write};

/// The ndarray backend. Its one device is the host CPU, [`NdArrayDevice`].
#[derive(Clone, Copy, Debug, Default)]
pub struct NdArray;

/// The host CPU, the only device of [`NdArray`]. Displayed and parsed as `cpu`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct NdArrayDevice;

impl fmt::Display for NdArrayDevice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("cpu")
    }
}

impl FromStr for NdArrayDevice {
    type Err = ParseDeviceError;

    fn from_str(name: &str) -> Result<Self, Self::Err> {
        match name {
            "cpu" => Ok(Self),
            _ => Err(ParseDeviceError::unknown(name, &["cpu"])),
        }
    }
}

/// The host CPU is always there.
impl BackendDevice for NdArrayDevice {
    fn available() -> Vec<Self> {
        vec![Self]
    }
}

/// Every backend whose device is the ndarray CPU accepts it, e.g. `NdArray` and `Autodiff<NdArray>`.
impl<B: Backend<Device = NdArrayDevice>> DeviceOf<B> for NdArrayDevice {
    fn as_device(&self) -> &NdArrayDevice {
        self
    }
}

impl NdArray {
    /// Frees the buffers the calling thread keeps for reuse, and returns how many bytes they held. Large outputs
    /// (element-wise ops, matrix products) are written into the storage of tensors dropped earlier on the same
    /// thread instead of fresh memory, and a thread keeps up to 64 such buffers, at most 64 MiB of each float
    /// type. A thread that has stopped computing can hand them back to the allocator; a measure of the memory a
    /// step needs calls it first, so that what the step keeps is counted as the step's.
    pub fn release_kept_buffers() -> usize {
        buffers::release_kept()
    }
}

impl BaseBackend for NdArray {}

impl Backend for NdArray {
    type Device = NdArrayDevice;
    type FloatTensor = NdArrayTensor;
    type IntTensor = NdArrayIntTensor;
    type BoolTensor = NdArrayBoolTensor;

    fn name() -> String {
        "ndarray".to_owned()
    }

    fn from_vec(data: Vec<f32>, shape: Shape, _device: &NdArrayDevice) -> Result<NdArrayTensor> {
        counted_write(data.len(), NdArrayTensor::from_vec(data, &shape))
    }

    fn from_f64_vec(data: Vec<f64>, shape: Shape, dtype: DType, _device: &NdArrayDevice) -> Result<NdArrayTensor> {
        counted_write(data.len(), NdArrayTensor::from_f64_vec(data, &shape, dtype))
    }

    fn full(shape: Shape, value: f64, dtype: DType, _device: &NdArrayDevice) -> Result<NdArrayTensor> {
        NdArrayTensor::full(&shape, value, dtype)
    }

    fn to_vec(tensor: &NdArrayTensor) -> Result<Vec<f32>> {
        counted_read(tensor.to_vec())
    }

    fn to_f64_vec(tensor: &NdArrayTensor) -> Result<Vec<f64>> {
        counted_read(tensor.to_f64_vec())
    }

    fn dtype(tensor: &NdArrayTensor) -> DType {
        tensor.dtype()
    }

    fn cast(tensor: &NdArrayTensor, dtype: DType) -> Result<NdArrayTensor> {
        tensor.cast(dtype)
    }

    fn shape(tensor: &NdArrayTensor) -> Shape {
        tensor.shape()
    }

    fn device(_tensor: &NdArrayTensor) -> NdArrayDevice {
        NdArrayDevice
    }

    fn to_device(tensor: &NdArrayTensor, _device: &NdArrayDevice) -> Result<NdArrayTensor> {
        Ok(tensor.clone())
    }

    fn add(lhs: &NdArrayTensor, rhs: &NdArrayTensor) -> Result<NdArrayTensor> {
        binary!("add", lhs, rhs, |a, b| a + b)
    }

    fn sub(lhs: &NdArrayTensor, rhs: &NdArrayTensor) -> Result<NdArrayTensor> {
        binary!("sub", lhs, rhs, |a, b| a - b)
    }

    fn mul(lhs: &NdArrayTensor, rhs: &NdArrayTensor) -> Result<NdArrayTensor> {
        binary!("mul", lhs, rhs, |a, b| a * b)
    }

    fn div(lhs: &NdArrayTensor, rhs: &NdArrayTensor) -> Result<NdArrayTensor> {
        binary!("div", lhs, rhs, |a, b| a / b)
    }

    fn add_into(lhs: NdArrayTensor, rhs: &NdArrayTensor) -> Result<NdArrayTensor> {
        binary_into!("add", lhs, rhs, |a, b| a + b)
    }

    fn sub_into(lhs: NdArrayTensor, rhs: &NdArrayTensor) -> Result<NdArrayTensor> {
        binary_into!("sub", lhs, rhs, |a, b| a - b)
    }

    fn mul_into(lhs: NdArrayTensor, rhs: &NdArrayTensor) -> Result<NdArrayTensor> {
        binary_into!("mul", lhs, rhs, |a, b| a * b)
    }

    fn div_into(lhs: NdArrayTensor, rhs: &NdArrayTensor) -> Result<NdArrayTensor> {
        binary_into!("div", lhs, rhs, |a, b| a / b)
    }

    // Scalars are rounded once to the tensor's dtype (`NdArrayTensor::scalar`), then to the element it computes in.
    fn add_scalar(tensor: &NdArrayTensor, scalar: f64) -> Result<NdArrayTensor> {
        let scalar = tensor.scalar(scalar);
        unary!("add_scalar", tensor, {
            let scalar = E::of_f64(scalar);
            move |x| x + scalar
        })
    }

    fn mul_scalar(tensor: &NdArrayTensor, scalar: f64) -> Result<NdArrayTensor> {
        let scalar = tensor.scalar(scalar);
        unary!("mul_scalar", tensor, {
            let scalar = E::of_f64(scalar);
            move |x| x * scalar
        })
    }

    fn add_scalar_into(tensor: NdArrayTensor, scalar: f64) -> Result<NdArrayTensor> {
        let scalar = tensor.scalar(scalar);
        unary_into!("add_scalar", tensor, {
            let scalar = E::of_f64(scalar);
            move |x| x + scalar
        })
    }

    fn mul_scalar_into(tensor: NdArrayTensor, scalar: f64) -> Result<NdArrayTensor> {
        let scalar = tensor.scalar(scalar);
        unary_into!("mul_scalar", tensor, {
            let scalar = E::of_f64(scalar);
            move |x| x * scalar
        })
    }

    fn powf_scalar(tensor: &NdArrayTensor, exponent: f64) -> Result<NdArrayTensor> {
        let exponent = tensor.scalar(exponent);
        unary!(heavy "powf_scalar", tensor, {
            let exponent = E::of_f64(exponent);
            move |x| x.powf(exponent)
        })
    }

    fn neg(tensor: &NdArrayTensor) -> Result<NdArrayTensor> {
        unary!("neg", tensor, |x: E| -x)
    }

    fn exp(tensor: &NdArrayTensor) -> Result<NdArrayTensor> {
        unary!(heavy "exp", tensor, <E as Kernels>::exp_of)
    }

    fn log(tensor: &NdArrayTensor) -> Result<NdArrayTensor> {
        unary!(heavy "log", tensor, |x: E| x.ln())
    }

    fn relu(tensor: &NdArrayTensor) -> Result<NdArrayTensor> {
        unary!("relu", tensor, elementwise::relu::<E>)
    }

    fn sigmoid(tensor: &NdArrayTensor) -> Result<NdArrayTensor> {
        unary!(heavy "sigmoid", tensor, elementwise::sigmoid::<E>)
    }

    fn tanh(tensor: &NdArrayTensor) -> Result<NdArrayTensor> {
        unary!(heavy "tanh", tensor, |x: E| x.tanh())
    }

    fn sqrt(tensor: &NdArrayTensor) -> Result<NdArrayTensor> {
        unary!("sqrt", tensor, |x: E| x.sqrt())
    }

    fn recip(tensor: &NdArrayTensor) -> Result<NdArrayTensor> {
        unary!("recip", tensor, |x: E| x.recip())
    }

    fn abs(tensor: &NdArrayTensor) -> Result<NdArrayTensor> {
        unary!("abs", tensor, |x: E| x.abs())
    }

    fn sin(tensor: &NdArrayTensor) -> Result<NdArrayTensor> {
        unary!(heavy "sin", tensor, |x: E| x.sin())
    }

    fn cos(tensor: &NdArrayTensor) -> Result<NdArrayTensor> {
        unary!(heavy "cos", tensor, |x: E| x.cos())
    }

    fn erf(tensor: &NdArrayTensor) -> Result<NdArrayTensor> {
        unary!(heavy "erf", tensor, <E as Kernels>::erf_of)
    }

    fn gelu(tensor: &NdArrayTensor) -> Result<NdArrayTensor> {
        elementwise::gelu(tensor)
    }

    fn gelu_backward(tensor: &NdArrayTensor, gradient: &NdArrayTensor) -> Result<NdArrayTensor> {
        elementwise::gelu_backward(tensor, gradient)
    }

    fn adam_step(
        parameter: &NdArrayTensor,
        gradient: &NdArrayTensor,
        moments: &NdArrayTensor,
        options: AdamStep,
    ) -> Result<NdArrayTensor> {
        elementwise::adam_step(parameter, gradient, moments, options)
    }

    fn mask_where(
        mask: &NdArrayBoolTensor,
        on_true: &NdArrayTensor,
        on_false: &NdArrayTensor,
    ) -> Result<NdArrayTensor> {
        with_arrays!("mask_where", on_true, on_false, |a, b| {
            comparison::select_where::<E>(on_true.dtype(), mask.array(), a, b)
        })
    }

    fn mask_fill(tensor: &NdArrayTensor, mask: &NdArrayBoolTensor, value: f64) -> Result<NdArrayTensor> {
        let value = tensor.scalar(value);
        with_array!(tensor, |array| comparison::fill_where::<E>(tensor.dtype(), array, mask.array(), E::of_f64(value)))
    }

    // ---- comparison: IEEE comparisons, so `ne` holds where either side is NaN ----------------------------------

    fn eq(lhs: &NdArrayTensor, rhs: &NdArrayTensor) -> Result<NdArrayBoolTensor> {
        with_arrays!("eq", lhs, rhs, |a, b| comparison::compare::<E>("eq", a, b, |x, y| x == y))
    }

    fn ne(lhs: &NdArrayTensor, rhs: &NdArrayTensor) -> Result<NdArrayBoolTensor> {
        with_arrays!("ne", lhs, rhs, |a, b| comparison::compare::<E>("ne", a, b, |x, y| x != y))
    }

    fn lt(lhs: &NdArrayTensor, rhs: &NdArrayTensor) -> Result<NdArrayBoolTensor> {
        with_arrays!("lt", lhs, rhs, |a, b| comparison::compare::<E>("lt", a, b, |x, y| x < y))
    }

    fn le(lhs: &NdArrayTensor, rhs: &NdArrayTensor) -> Result<NdArrayBoolTensor> {
        with_arrays!("le", lhs, rhs, |a, b| comparison::compare::<E>("le", a, b, |x, y| x <= y))
    }

    fn gt(lhs: &NdArrayTensor, rhs: &NdArrayTensor) -> Result<NdArrayBoolTensor> {
        with_arrays!("gt", lhs, rhs, |a, b| comparison::compare::<E>("gt", a, b, |x, y| x > y))
    }

    fn ge(lhs: &NdArrayTensor, rhs: &NdArrayTensor) -> Result<NdArrayBoolTensor> {
        with_arrays!("ge", lhs, rhs, |a, b| comparison::compare::<E>("ge", a, b, |x, y| x >= y))
    }

    fn eq_scalar(tensor: &NdArrayTensor, scalar: f64) -> Result<NdArrayBoolTensor> {
        let scalar = tensor.scalar(scalar);
        with_array!(tensor, |array| {
            comparison::compare_scalar::<E>("eq_scalar", array, E::of_f64(scalar), |x, y| x == y)
        })
    }

    fn ne_scalar(tensor: &NdArrayTensor, scalar: f64) -> Result<NdArrayBoolTensor> {
        let scalar = tensor.scalar(scalar);
        with_array!(tensor, |array| {
            comparison::compare_scalar::<E>("ne_scalar", array, E::of_f64(scalar), |x, y| x != y)
        })
    }

    fn lt_scalar(tensor: &NdArrayTensor, scalar: f64) -> Result<NdArrayBoolTensor> {
        let scalar = tensor.scalar(scalar);
        with_array!(tensor, |array| {
            comparison::compare_scalar::<E>("lt_scalar", array, E::of_f64(scalar), |x, y| x < y)
        })
    }

    fn le_scalar(tensor: &NdArrayTensor, scalar: f64) -> Result<NdArrayBoolTensor> {
        let scalar = tensor.scalar(scalar);
        with_array!(tensor, |array| {
            comparison::compare_scalar::<E>("le_scalar", array, E::of_f64(scalar), |x, y| x <= y)
        })
    }

    fn gt_scalar(tensor: &NdArrayTensor, scalar: f64) -> Result<NdArrayBoolTensor> {
        let scalar = tensor.scalar(scalar);
        with_array!(tensor, |array| {
            comparison::compare_scalar::<E>("gt_scalar", array, E::of_f64(scalar), |x, y| x > y)
        })
    }

    fn ge_scalar(tensor: &NdArrayTensor, scalar: f64) -> Result<NdArrayBoolTensor> {
        let scalar = tensor.scalar(scalar);
        with_array!(tensor, |array| {
            comparison::compare_scalar::<E>("ge_scalar", array, E::of_f64(scalar), |x, y| x >= y)
        })
    }

    fn silu(tensor: &NdArrayTensor) -> Result<NdArrayTensor> {
        unary!(heavy "silu", tensor, math::silu::<E>)
    }

    fn clamp(tensor: &NdArrayTensor, min: f64, max: f64) -> Result<NdArrayTensor> {
        math::check_clamp_bounds(min, max)?;
        let (min, max) = (tensor.scalar(min), tensor.scalar(max));
        unary!("clamp", tensor, {
            let (min, max) = (E::of_f64(min), E::of_f64(max));
            move |x| math::clamp(x, min, max)
        })
    }

    fn maximum(lhs: &NdArrayTensor, rhs: &NdArrayTensor) -> Result<NdArrayTensor> {
        binary!("maximum", lhs, rhs, math::maximum::<E>)
    }

    fn minimum(lhs: &NdArrayTensor, rhs: &NdArrayTensor) -> Result<NdArrayTensor> {
        binary!("minimum", lhs, rhs, math::minimum::<E>)
    }

    fn matmul(lhs: &NdArrayTensor, rhs: &NdArrayTensor) -> Result<NdArrayTensor> {
        matmul::matmul(lhs, rhs)
    }

    fn swap_dims(tensor: &NdArrayTensor, dim0: usize, dim1: usize) -> Result<NdArrayTensor> {
        layout::swap_dims(tensor, dim0, dim1)
    }

    fn reshape(tensor: &NdArrayTensor, shape: Shape) -> Result<NdArrayTensor> {
        layout::reshape(tensor, &shape)
    }

    fn narrow(tensor: &NdArrayTensor, axis: usize, start: usize, len: usize) -> Result<NdArrayTensor> {
        layout::narrow(tensor, axis, start, len)
    }

    fn permute(tensor: &NdArrayTensor, axes: Vec<usize>) -> Result<NdArrayTensor> {
        layout::permute(tensor, axes)
    }

    fn cat(tensors: &[NdArrayTensor], axis: usize) -> Result<NdArrayTensor> {
        layout::cat(tensors, axis)
    }

    fn flip(tensor: &NdArrayTensor, axes: Vec<usize>) -> Result<NdArrayTensor> {
        layout::flip(tensor, &axes)
    }

    fn index_select(tensor: &NdArrayTensor, axis: usize, indices: &NdArrayIntTensor) -> Result<NdArrayTensor> {
        index::index_select(tensor, axis, indices)
    }

    fn select_add(
        tensor: &NdArrayTensor,
        axis: usize,
        indices: &NdArrayIntTensor,
        source: &NdArrayTensor,
    ) -> Result<NdArrayTensor> {
        index::select_add(tensor, axis, indices, source)
    }

    fn gather(tensor: &NdArrayTensor, axis: usize, indices: &NdArrayIntTensor) -> Result<NdArrayTensor> {
        index::gather(tensor, axis, indices)
    }

    fn scatter_add(
        tensor: &NdArrayTensor,
        axis: usize,
        indices: &NdArrayIntTensor,
        source: &NdArrayTensor,
    ) -> Result<NdArrayTensor> {
        index::scatter_add(tensor, axis, indices, source)
    }

    fn embedding(weights: &NdArrayTensor, ids: &NdArrayIntTensor) -> Result<NdArrayTensor> {
        index::embedding(weights, ids)
    }

    fn one_hot(indices: &NdArrayIntTensor, classes: usize, dtype: DType) -> Result<NdArrayTensor> {
        index::one_hot(indices, classes, dtype)
    }

    fn sum(tensor: &NdArrayTensor) -> Result<NdArrayTensor> {
        Ok(reduce::sum(tensor))
    }

    fn mean(tensor: &NdArrayTensor) -> Result<NdArrayTensor> {
        Ok(reduce::mean(tensor))
    }

    fn sum_dim(tensor: &NdArrayTensor, axis: usize) -> Result<NdArrayTensor> {
        reduce::sum_dim(tensor, axis)
    }

    fn mean_dim(tensor: &NdArrayTensor, axis: usize) -> Result<NdArrayTensor> {
        reduce::mean_dim(tensor, axis)
    }

    fn log_softmax(tensor: &NdArrayTensor, axis: usize) -> Result<NdArrayTensor> {
        reduce::log_softmax(tensor, axis)
    }

    fn softmax(tensor: &NdArrayTensor, axis: usize) -> Result<NdArrayTensor> {
        reduce::softmax(tensor, axis)
    }

    fn softmax_backward(output: &NdArrayTensor, gradient: &NdArrayTensor, axis: usize) -> Result<NdArrayTensor> {
        match reduce::fused_softmax_backward(output, gradient, axis)? {
            Some(fused) => Ok(fused),
            None => crate::backend::defaults::softmax_backward::<Self>(output, gradient, axis),
        }
    }

    fn attention_weights(
        query: &NdArrayTensor,
        key: &NdArrayTensor,
        scale: f64,
        causal: bool,
    ) -> Result<NdArrayTensor> {
        reduce::attention_weights(query, key, scale, causal)
    }

    fn cross_entropy(logits: &NdArrayTensor, targets: &NdArrayIntTensor) -> Result<NdArrayTensor> {
        reduce::cross_entropy(logits, targets)
    }

    fn layer_norm(
        tensor: &NdArrayTensor,
        gamma: &NdArrayTensor,
        beta: &NdArrayTensor,
        eps: f64,
    ) -> Result<NdArrayTensor> {
        reduce::layer_norm(tensor, gamma, beta, eps)
    }

    fn layer_norm_backward(
        tensor: &NdArrayTensor,
        gamma: &NdArrayTensor,
        gradient: &NdArrayTensor,
        eps: f64,
    ) -> Result<NdArrayTensor> {
        reduce::layer_norm_backward(tensor, gamma, gradient, eps)
    }

    fn layer_norm_parameter_gradients(
        tensor: &NdArrayTensor,
        gradient: &NdArrayTensor,
        eps: f64,
    ) -> Result<NdArrayTensor> {
        reduce::layer_norm_parameter_gradients(tensor, gradient, eps)
    }

    fn argmax(tensor: &NdArrayTensor, axis: usize) -> Result<NdArrayIntTensor> {
        reduce::argmax(tensor, axis)
    }

    fn max_dim(tensor: &NdArrayTensor, axis: usize) -> Result<NdArrayTensor> {
        reduce::max_dim(tensor, axis)
    }

    fn min_dim(tensor: &NdArrayTensor, axis: usize) -> Result<NdArrayTensor> {
        reduce::min_dim(tensor, axis)
    }

    fn prod_dim(tensor: &NdArrayTensor, axis: usize) -> Result<NdArrayTensor> {
        reduce::prod_dim(tensor, axis)
    }

    fn prod(tensor: &NdArrayTensor) -> Result<NdArrayTensor> {
        Ok(reduce::prod(tensor))
    }

    fn max(tensor: &NdArrayTensor) -> Result<NdArrayTensor> {
        reduce::max(tensor)
    }

    fn min(tensor: &NdArrayTensor) -> Result<NdArrayTensor> {
        reduce::min(tensor)
    }

    fn argmin(tensor: &NdArrayTensor, axis: usize) -> Result<NdArrayIntTensor> {
        reduce::argmin(tensor, axis)
    }

    fn unfold2d(tensor: &NdArrayTensor, window: Window2d, pad_value: f64) -> Result<NdArrayTensor> {
        window::unfold2d(tensor, window, pad_value)
    }

    fn fold2d(tensor: &NdArrayTensor, height: usize, width: usize, window: Window2d) -> Result<NdArrayTensor> {
        window::fold2d(tensor, height, width, window)
    }

    fn conv2d(input: &NdArrayTensor, weight: &NdArrayTensor, options: Conv2dOptions) -> Result<NdArrayTensor> {
        window::conv2d(input, weight, options)
    }

    fn conv1d(input: &NdArrayTensor, weight: &NdArrayTensor, options: Conv1dOptions) -> Result<NdArrayTensor> {
        window::conv1d(input, weight, options)
    }

    fn conv2d_weight_gradient(
        input: &NdArrayTensor,
        gradient: &NdArrayTensor,
        kernel: [usize; 2],
        options: Conv2dOptions,
    ) -> Result<NdArrayTensor> {
        window::conv2d_weight_gradient(input, gradient, kernel, options)
    }

    fn conv_transpose2d(
        input: &NdArrayTensor,
        weight: &NdArrayTensor,
        options: Conv2dOptions,
    ) -> Result<NdArrayTensor> {
        window::conv_transpose2d(input, weight, options)
    }

    fn max_pool2d(input: &NdArrayTensor, window: Window2d) -> Result<NdArrayTensor> {
        window::max_pool2d(input, window)
    }

    fn max_pool2d_indices(input: &NdArrayTensor, window: Window2d) -> Result<NdArrayIntTensor> {
        window::max_pool2d_indices(input, window)
    }

    fn avg_pool2d(input: &NdArrayTensor, window: Window2d) -> Result<NdArrayTensor> {
        window::avg_pool2d(input, window)
    }

    fn adaptive_avg_pool2d(input: &NdArrayTensor, output: [usize; 2]) -> Result<NdArrayTensor> {
        window::adaptive_avg_pool2d(input, output)
    }

    fn int_from_vec(data: Vec<i64>, shape: Shape, _device: &NdArrayDevice) -> Result<NdArrayIntTensor> {
        counted_write(data.len(), NdArrayIntTensor::from_vec(data, &shape))
    }

    fn int_to_vec(tensor: &NdArrayIntTensor) -> Result<Vec<i64>> {
        counted_read(tensor.to_vec())
    }

    fn int_shape(tensor: &NdArrayIntTensor) -> Shape {
        tensor.shape()
    }

    fn int_device(_tensor: &NdArrayIntTensor) -> NdArrayDevice {
        NdArrayDevice
    }

    fn int_to_device(tensor: &NdArrayIntTensor, _device: &NdArrayDevice) -> Result<NdArrayIntTensor> {
        Ok(tensor.clone())
    }

    fn arange(start: i64, end: i64, _device: &NdArrayDevice) -> Result<NdArrayIntTensor> {
        int_bool::arange(start, end)
    }

    fn int_add(lhs: &NdArrayIntTensor, rhs: &NdArrayIntTensor) -> Result<NdArrayIntTensor> {
        int_bool::int_binary("int_add", lhs, rhs, i64::wrapping_add)
    }

    fn int_sub(lhs: &NdArrayIntTensor, rhs: &NdArrayIntTensor) -> Result<NdArrayIntTensor> {
        int_bool::int_binary("int_sub", lhs, rhs, i64::wrapping_sub)
    }

    fn int_mul(lhs: &NdArrayIntTensor, rhs: &NdArrayIntTensor) -> Result<NdArrayIntTensor> {
        int_bool::int_binary("int_mul", lhs, rhs, i64::wrapping_mul)
    }

    fn int_div(lhs: &NdArrayIntTensor, rhs: &NdArrayIntTensor) -> Result<NdArrayIntTensor> {
        int_bool::int_div(lhs, rhs)
    }

    fn int_add_scalar(tensor: &NdArrayIntTensor, scalar: i64) -> Result<NdArrayIntTensor> {
        int_bool::int_map("int_add_scalar", tensor, |x| x.wrapping_add(scalar))
    }

    fn int_mul_scalar(tensor: &NdArrayIntTensor, scalar: i64) -> Result<NdArrayIntTensor> {
        int_bool::int_map("int_mul_scalar", tensor, |x| x.wrapping_mul(scalar))
    }

    fn int_sum(tensor: &NdArrayIntTensor) -> Result<NdArrayIntTensor> {
        Ok(int_bool::int_sum(tensor))
    }

    fn int_eq(lhs: &NdArrayIntTensor, rhs: &NdArrayIntTensor) -> Result<NdArrayBoolTensor> {
        int_bool::int_compare("int_eq", lhs, rhs, |a, b| a == b)
    }

    fn int_eq_scalar(tensor: &NdArrayIntTensor, scalar: i64) -> Result<NdArrayBoolTensor> {
        int_bool::int_eq_scalar(tensor, scalar)
    }

    fn int_lt(lhs: &NdArrayIntTensor, rhs: &NdArrayIntTensor) -> Result<NdArrayBoolTensor> {
        int_bool::int_compare("int_lt", lhs, rhs, |a, b| a < b)
    }

    fn int_le(lhs: &NdArrayIntTensor, rhs: &NdArrayIntTensor) -> Result<NdArrayBoolTensor> {
        int_bool::int_compare("int_le", lhs, rhs, |a, b| a <= b)
    }

    fn int_gt(lhs: &NdArrayIntTensor, rhs: &NdArrayIntTensor) -> Result<NdArrayBoolTensor> {
        int_bool::int_compare("int_gt", lhs, rhs, |a, b| a > b)
    }

    fn int_ge(lhs: &NdArrayIntTensor, rhs: &NdArrayIntTensor) -> Result<NdArrayBoolTensor> {
        int_bool::int_compare("int_ge", lhs, rhs, |a, b| a >= b)
    }

    fn int_reshape(tensor: &NdArrayIntTensor, shape: Shape) -> Result<NdArrayIntTensor> {
        int_bool::int_reshape(tensor, &shape)
    }

    fn int_to_float(tensor: &NdArrayIntTensor, dtype: DType) -> Result<NdArrayTensor> {
        int_bool::int_to_float(tensor, dtype)
    }

    fn bool_from_vec(data: Vec<bool>, shape: Shape, _device: &NdArrayDevice) -> Result<NdArrayBoolTensor> {
        counted_write(data.len(), NdArrayBoolTensor::from_vec(data, &shape))
    }

    fn bool_to_vec(tensor: &NdArrayBoolTensor) -> Result<Vec<bool>> {
        counted_read(tensor.to_vec())
    }

    fn bool_shape(tensor: &NdArrayBoolTensor) -> Shape {
        tensor.shape()
    }

    fn bool_device(_tensor: &NdArrayBoolTensor) -> NdArrayDevice {
        NdArrayDevice
    }

    fn bool_to_device(tensor: &NdArrayBoolTensor, _device: &NdArrayDevice) -> Result<NdArrayBoolTensor> {
        Ok(tensor.clone())
    }

    fn bool_and(lhs: &NdArrayBoolTensor, rhs: &NdArrayBoolTensor) -> Result<NdArrayBoolTensor> {
        int_bool::bool_binary("bool_and", lhs, rhs, |a, b| a && b)
    }

    fn bool_or(lhs: &NdArrayBoolTensor, rhs: &NdArrayBoolTensor) -> Result<NdArrayBoolTensor> {
        int_bool::bool_binary("bool_or", lhs, rhs, |a, b| a || b)
    }

    fn bool_not(tensor: &NdArrayBoolTensor) -> Result<NdArrayBoolTensor> {
        int_bool::bool_not(tensor)
    }

    fn bool_any(tensor: &NdArrayBoolTensor) -> Result<NdArrayBoolTensor> {
        Ok(int_bool::bool_reduce(tensor, false))
    }

    fn bool_all(tensor: &NdArrayBoolTensor) -> Result<NdArrayBoolTensor> {
        Ok(int_bool::bool_reduce(tensor, true))
    }

    fn bool_to_int(tensor: &NdArrayBoolTensor) -> Result<NdArrayIntTensor> {
        int_bool::bool_to_int(tensor)
    }

    fn bool_to_float(tensor: &NdArrayBoolTensor, dtype: DType) -> Result<NdArrayTensor> {
        int_bool::bool_to_float(tensor, dtype)
    }
}
