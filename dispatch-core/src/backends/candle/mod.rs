//! The candle backend: tensors over `candle-core`, on the CPU or (with the `cuda` feature) a CUDA GPU.
//!
//! Shapes, axes and devices are checked before candle runs, so bad input gets our typed errors; what candle still
//! reports becomes `Error::Backend` with candle's error as the source.

mod device;
mod elementwise;
mod error;
mod layout;
mod memory;
mod reduce;

use candle_core::Tensor;

pub use self::device::CandleDevice;
use self::elementwise::{BinaryOp, binary, unary};
use self::error::{OrBackend, candle_dtype, check_operands, dtype_of};
use self::layout::shape_of;
use self::memory::{check_output, filled, from_f64_values};
use crate::backend::{Backend, BaseBackend, Conv2dOptions, module_ops};
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

    fn from_vec(data: Vec<f32>, shape: Shape, device: &CandleDevice) -> Result<Tensor> {
        shape.check_tensor_shape("from_vec")?;
        shape.check_data_len("from_vec", data.len())?;
        Tensor::from_vec(data, shape.dims(), device.as_candle()).or_backend("from_vec")
    }

    fn from_f64_vec(data: Vec<f64>, shape: Shape, dtype: DType, device: &CandleDevice) -> Result<Tensor> {
        shape.check_tensor_shape("from_f64_vec")?;
        shape.check_data_len("from_f64_vec", data.len())?;
        from_f64_values("from_f64_vec", data, &shape, dtype, device.as_candle())
    }

    fn full(shape: Shape, value: f64, dtype: DType, device: &CandleDevice) -> Result<Tensor> {
        shape.check_tensor_shape("full")?;
        filled("full", &shape, value, dtype, device.as_candle())
    }

    fn to_vec(tensor: &Tensor) -> Result<Vec<f32>> {
        crate::dtype::check_expected("to_vec", DType::F32, dtype_of(tensor))?;
        host_values("to_vec", tensor, candle_core::DType::F32)
    }

    fn to_f64_vec(tensor: &Tensor) -> Result<Vec<f64>> {
        host_values("to_f64_vec", tensor, candle_core::DType::F64)
    }

    fn dtype(tensor: &Tensor) -> DType {
        dtype_of(tensor)
    }

    /// candle's own conversion, but from `F64` to `F16` or `BF16`: candle (through `half`) rounds those twice, so
    /// they are converted on the host, rounding once.
    fn cast(tensor: &Tensor, dtype: DType) -> Result<Tensor> {
        let target = candle_dtype(dtype);
        check_output("cast", tensor.device(), tensor.elem_count(), target)?;
        if dtype_of(tensor) == DType::F64 && matches!(dtype, DType::F16 | DType::BF16) {
            let values = host_values("cast", tensor, candle_core::DType::F64)?;
            return from_f64_values("cast", values, &shape_of(tensor), dtype, tensor.device());
        }
        tensor.to_dtype(target).or_backend("cast")
    }

    fn shape(tensor: &Tensor) -> Shape {
        shape_of(tensor)
    }

    fn device(tensor: &Tensor) -> CandleDevice {
        CandleDevice::from_candle(tensor.device().clone())
    }

    fn to_device(tensor: &Tensor, device: &CandleDevice) -> Result<Tensor> {
        if !tensor.device().same_device(device.as_candle()) {
            check_output("to_device", device.as_candle(), tensor.elem_count(), tensor.dtype())?;
        }
        tensor.to_device(device.as_candle()).or_backend("to_device")
    }

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
        unary("powf_scalar", tensor, |t| t.powf(elementwise::scalar_for(t, exponent)))
    }

    fn greater_scalar(tensor: &Tensor, threshold: f64) -> Result<Tensor> {
        elementwise::greater_scalar(tensor, threshold)
    }

    fn neg(tensor: &Tensor) -> Result<Tensor> {
        unary("neg", tensor, Tensor::neg)
    }

    fn exp(tensor: &Tensor) -> Result<Tensor> {
        unary("exp", tensor, Tensor::exp)
    }

    fn log(tensor: &Tensor) -> Result<Tensor> {
        unary("log", tensor, Tensor::log)
    }

    fn relu(tensor: &Tensor) -> Result<Tensor> {
        unary("relu", tensor, Tensor::relu)
    }

    fn sigmoid(tensor: &Tensor) -> Result<Tensor> {
        elementwise::sigmoid(tensor)
    }

    fn tanh(tensor: &Tensor) -> Result<Tensor> {
        unary("tanh", tensor, Tensor::tanh)
    }

    fn sqrt(tensor: &Tensor) -> Result<Tensor> {
        unary("sqrt", tensor, Tensor::sqrt)
    }

    fn recip(tensor: &Tensor) -> Result<Tensor> {
        unary("recip", tensor, Tensor::recip)
    }

    fn abs(tensor: &Tensor) -> Result<Tensor> {
        unary("abs", tensor, Tensor::abs)
    }

    fn sin(tensor: &Tensor) -> Result<Tensor> {
        unary("sin", tensor, Tensor::sin)
    }

    fn cos(tensor: &Tensor) -> Result<Tensor> {
        unary("cos", tensor, Tensor::cos)
    }

    fn erf(tensor: &Tensor) -> Result<Tensor> {
        unary("erf", tensor, Tensor::erf)
    }

    fn gelu(tensor: &Tensor) -> Result<Tensor> {
        unary("gelu", tensor, Tensor::gelu_erf)
    }

    fn mask_where(mask: &Tensor, on_true: &Tensor, on_false: &Tensor) -> Result<Tensor> {
        elementwise::mask_where(mask, on_true, on_false)
    }

    fn mask_fill(tensor: &Tensor, mask: &Tensor, value: f64) -> Result<Tensor> {
        elementwise::mask_fill(tensor, mask, value)
    }

    fn silu(tensor: &Tensor) -> Result<Tensor> {
        unary("silu", tensor, Tensor::silu)
    }

    // candle's own `maximum` and `minimum` drop a NaN in the second operand; the host default propagates it, as
    // ndarray does. `clamp` keeps NaN in candle too.
    fn clamp(tensor: &Tensor, min: f64, max: f64) -> Result<Tensor> {
        crate::math::check_clamp_bounds(min, max)?;
        unary("clamp", tensor, |t| t.clamp(elementwise::scalar_for(t, min), elementwise::scalar_for(t, max)))
    }

    /// candle's own kernel where stride, padding and dilation are the same on both sides (as it takes them), else
    /// the default. The room for candle's unfolded input and the output is checked first.
    fn conv2d(input: &Tensor, weight: &Tensor, options: Conv2dOptions) -> Result<Tensor> {
        // Devices and dtypes first, as the default checks them: operands that mix dtypes and do not fit are the
        // same error on every backend.
        check_operands("conv2d", [input, weight])?;
        let geometry = module_ops::conv2d_geometry(&shape_of(input), &shape_of(weight), &options)?;
        // candle's kernel panics on an empty batch; nothing to compute goes through the default. So does an input
        // whose channels, height and width are equal: candle 0.9.2's tiled kernel then takes its row-major strides
        // for the channels-last layout it wants (they coincide) and computes wrong values.
        let dims = input.dims();
        if geometry.columns == 0 || dims[1] == dims[2] && dims[2] == dims[3] {
            return module_ops::conv2d::<Self>(input, weight, options);
        }
        let same = |pair: [usize; 2]| (pair[0] == pair[1]).then_some(pair[0]);
        let (Some(stride), Some(padding), Some(dilation)) =
            (same(options.stride), same(options.padding), same(options.dilation))
        else {
            return module_ops::conv2d::<Self>(input, weight, options);
        };
        if let Some(output) =
            layout::bf16_through_f32("conv2d", [input, weight], |[input, weight]| Self::conv2d(input, weight, options))
        {
            return output;
        }
        check_output("conv2d", input.device(), geometry.columns, input.dtype())?;
        check_output("conv2d", input.device(), geometry.output.iter().product(), input.dtype())?;
        input.conv2d(weight, padding, stride, dilation, options.groups).or_backend("conv2d")
    }

    fn matmul(lhs: &Tensor, rhs: &Tensor) -> Result<Tensor> {
        layout::matmul(lhs, rhs)
    }

    fn swap_dims(tensor: &Tensor, dim0: usize, dim1: usize) -> Result<Tensor> {
        layout::swap_dims(tensor, dim0, dim1)
    }

    fn reshape(tensor: &Tensor, shape: Shape) -> Result<Tensor> {
        layout::reshape(tensor, &shape)
    }

    fn narrow(tensor: &Tensor, axis: usize, start: usize, len: usize) -> Result<Tensor> {
        layout::narrow(tensor, axis, start, len)
    }

    fn permute(tensor: &Tensor, axes: Vec<usize>) -> Result<Tensor> {
        shape_of(tensor).permute(&axes)?;
        tensor.permute(axes).or_backend("permute")
    }

    fn cat(tensors: &[Tensor], axis: usize) -> Result<Tensor> {
        layout::cat(tensors, axis)
    }

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

    fn argmax(tensor: &Tensor, axis: usize) -> Result<Tensor> {
        reduce::argmax(tensor, axis)
    }

    fn int_from_vec(data: Vec<i64>, shape: Shape, device: &CandleDevice) -> Result<Tensor> {
        shape.check_tensor_shape("int_from_vec")?;
        shape.check_data_len("int_from_vec", data.len())?;
        Tensor::from_vec(data, shape.dims(), device.as_candle()).or_backend("int_from_vec")
    }

    fn int_to_vec(tensor: &Tensor) -> Result<Vec<i64>> {
        check_output("int_to_vec", &candle_core::Device::Cpu, tensor.elem_count(), tensor.dtype())?;
        tensor.flatten_all().and_then(|flat| flat.to_vec1()).or_backend("int_to_vec")
    }

    fn int_shape(tensor: &Tensor) -> Shape {
        shape_of(tensor)
    }

    fn int_device(tensor: &Tensor) -> CandleDevice {
        CandleDevice::from_candle(tensor.device().clone())
    }

    fn int_to_device(tensor: &Tensor, device: &CandleDevice) -> Result<Tensor> {
        Self::to_device(tensor, device)
    }

    fn bool_from_vec(data: Vec<bool>, shape: Shape, device: &CandleDevice) -> Result<Tensor> {
        shape.check_tensor_shape("bool_from_vec")?;
        shape.check_data_len("bool_from_vec", data.len())?;
        let mut bytes = crate::memory::try_vec("bool_from_vec", data.len())?;
        bytes.extend(data.into_iter().map(u8::from));
        Tensor::from_vec(bytes, shape.dims(), device.as_candle()).or_backend("bool_from_vec")
    }

    fn bool_to_vec(tensor: &Tensor) -> Result<Vec<bool>> {
        check_output("bool_to_vec", &candle_core::Device::Cpu, tensor.elem_count(), tensor.dtype())?;
        let bytes: Vec<u8> = tensor.flatten_all().and_then(|flat| flat.to_vec1()).or_backend("bool_to_vec")?;
        Ok(bytes.into_iter().map(|byte| byte != 0).collect())
    }

    fn bool_shape(tensor: &Tensor) -> Shape {
        shape_of(tensor)
    }

    fn bool_device(tensor: &Tensor) -> CandleDevice {
        CandleDevice::from_candle(tensor.device().clone())
    }

    fn bool_to_device(tensor: &Tensor, device: &CandleDevice) -> Result<Tensor> {
        Self::to_device(tensor, device)
    }

    /// 0 and 1 are exact in every dtype, so candle's own conversion of its `U8` tensor serves.
    fn bool_to_float(tensor: &Tensor, dtype: DType) -> Result<Tensor> {
        check_output("bool_to_float", tensor.device(), tensor.elem_count(), candle_dtype(dtype))?;
        tensor.to_dtype(candle_dtype(dtype)).or_backend("bool_to_float")
    }

    /// candle's conversion rounds an `i64` once to `F32` or `F64`; for `F16` and `BF16` it would round twice (through
    /// `f64` and `f32`), so those take the exact default.
    fn int_to_float(tensor: &Tensor, dtype: DType) -> Result<Tensor> {
        if matches!(dtype, DType::F16 | DType::BF16) {
            return crate::backend::defaults::int_to_float::<Self>(tensor, dtype);
        }
        check_output("int_to_float", tensor.device(), tensor.elem_count(), candle_dtype(dtype))?;
        tensor.to_dtype(candle_dtype(dtype)).or_backend("int_to_float")
    }
}

/// The elements of a tensor in host memory, row-major, as `dtype` (`F32` or `F64`, converted from the tensor's own).
fn host_values<T: candle_core::WithDType>(
    op: &'static str,
    tensor: &Tensor,
    dtype: candle_core::DType,
) -> Result<Vec<T>> {
    // The values land in host memory, wherever the tensor lives.
    check_output(op, &candle_core::Device::Cpu, tensor.elem_count(), dtype)?;
    tensor.flatten_all().and_then(|flat| flat.to_dtype(dtype)).and_then(|flat| flat.to_vec1()).or_backend(op)
}
