//! Element-wise ops. Binary ops broadcast with numpy rules, which candle's `broadcast_*` ops follow too; we check
//! devices and shapes first so that a mismatch is our typed error, not a candle string.

use candle_core::backend::BackendStorage;
use candle_core::{CpuStorage, CustomOp1, CustomOp2, DType, Layout, Tensor};
use num_traits::Float;

use super::error::{OrBackend, dtype_of, float_dtype};
use super::memory::{check_output, check_output_like, empty_like, empty_output};
use super::operands::check_operands;
use crate::error::Result;
use crate::kernels::{Kernels, gelu_derivative, gelu_derivative_constants, map_slice, zip_slices};
use crate::shape::Shape;

#[derive(Clone, Copy)]
pub(super) enum BinaryOp {
    Add,
    Sub,
    Mul,
    Div,
}

impl BinaryOp {
    fn name(self) -> &'static str {
        match self {
            Self::Add => "add",
            Self::Sub => "sub",
            Self::Mul => "mul",
            Self::Div => "div",
        }
    }
}

pub(super) fn binary(op: BinaryOp, lhs: &Tensor, rhs: &Tensor) -> Result<Tensor> {
    let name = op.name();
    check_operands(name, [lhs, rhs])?;
    let shape = Shape::broadcast(name, &Shape::new(lhs.dims()), &Shape::new(rhs.dims()))?;
    check_output(name, lhs.device(), shape.num_elements(), lhs.dtype())?;
    let result = match op {
        BinaryOp::Add => lhs.broadcast_add(rhs),
        BinaryOp::Sub => lhs.broadcast_sub(rhs),
        BinaryOp::Mul => lhs.broadcast_mul(rhs),
        BinaryOp::Div => lhs.broadcast_div(rhs),
    };
    result.or_backend(name)
}

/// Runs candle's one-tensor op `f`, whose output has the input's size, once there is room for that output.
pub(super) fn unary(
    op: &'static str,
    tensor: &Tensor,
    f: impl FnOnce(&Tensor) -> candle_core::Result<Tensor>,
) -> Result<Tensor> {
    float_dtype(op, tensor)?;
    check_output_like(op, tensor)?;
    if let Some(empty) = empty_like(op, tensor)? {
        return Ok(empty);
    }
    f(tensor).or_backend(op)
}

/// `scalar` rounded once to the tensor's dtype, so that candle's own conversion of it (which for `f16` and `bf16`
/// goes through `f32` and would round twice) is exact.
pub(super) fn scalar_for(tensor: &Tensor, scalar: f64) -> f64 {
    dtype_of(tensor).round(scalar)
}

pub(super) fn add_scalar(tensor: &Tensor, scalar: f64) -> Result<Tensor> {
    unary("add_scalar", tensor, |t| t.affine(1.0, scalar_for(t, scalar)))
}

pub(super) fn mul_scalar(tensor: &Tensor, scalar: f64) -> Result<Tensor> {
    unary("mul_scalar", tensor, |t| t.affine(scalar_for(t, scalar), 0.0))
}

/// The element functions that candle's CPU kernels compute one scalar call at a time (its GELU in `f32`, where
/// `1 + erf` cancels left of `-√2`). On a CPU tensor of `f32` or `f64` they run `crate::kernels` instead: the
/// vectorised loops and the values of the ndarray backend. Other devices and dtypes keep candle's kernels.
#[derive(Clone, Copy)]
pub(super) enum CpuKernel {
    Exp,
    Erf,
    Gelu,
}

impl CpuKernel {
    /// The kernel of `tensor`'s elements: this module's on a CPU tensor of `f32` or `f64`, else candle's.
    pub(super) fn apply(self, tensor: &Tensor) -> candle_core::Result<Tensor> {
        match self {
            // Contiguous first, as candle's own kernels would gather a strided tensor.
            _ if runs_cpu_kernels(tensor) => tensor.contiguous()?.apply_op1_no_bwd(&self),
            Self::Exp => tensor.exp(),
            Self::Erf => tensor.erf(),
            Self::Gelu => tensor.gelu_erf(),
        }
    }

    fn map_slice<T: Kernels>(self, inputs: &[T], outputs: &mut [T]) {
        match self {
            Self::Exp => map_slice(inputs, outputs, T::exp_of),
            Self::Erf => map_slice(inputs, outputs, T::erf_of),
            Self::Gelu => T::gelu_slice(inputs, outputs),
        }
    }

    /// The kernel of the contiguous elements `layout` picks from `values`.
    fn map_layout<T: Kernels + Default>(self, values: &[T], layout: &Layout) -> candle_core::Result<Vec<T>> {
        let inputs = contiguous_slice(self.name(), (values, layout))?;
        let mut outputs = vec![T::default(); inputs.len()];
        self.map_slice(inputs, &mut outputs);
        Ok(outputs)
    }
}

impl CustomOp1 for CpuKernel {
    fn name(&self) -> &'static str {
        match self {
            Self::Exp => "exp",
            Self::Erf => "erf",
            Self::Gelu => "gelu",
        }
    }

    fn cpu_fwd(&self, storage: &CpuStorage, layout: &Layout) -> candle_core::Result<(CpuStorage, candle_core::Shape)> {
        let outputs = match storage {
            CpuStorage::F32(values) => CpuStorage::F32(self.map_layout(values, layout)?),
            CpuStorage::F64(values) => CpuStorage::F64(self.map_layout(values, layout)?),
            other => return Err(candle_core::Error::UnsupportedDTypeForOp(other.dtype(), self.name())),
        };
        Ok((outputs, layout.shape().clone()))
    }
}

/// Whether `tensor`'s elements go through `crate::kernels` (a CPU tensor of `f32` or `f64`) rather than candle's own.
fn runs_cpu_kernels(tensor: &Tensor) -> bool {
    tensor.device().is_cpu() && matches!(tensor.dtype(), DType::F32 | DType::F64)
}

/// The elements of a contiguous `layout` in `values`; an error for a strided layout or one past the storage, which the
/// CPU kernels' callers never pass (they make their operands contiguous first).
fn contiguous_slice<'a, T>(op: &str, (values, layout): (&'a [T], &Layout)) -> candle_core::Result<&'a [T]> {
    let slice = layout.contiguous_offsets().and_then(|(start, end)| values.get(start..end));
    slice.ok_or_else(|| {
        candle_core::Error::Msg(format!("{op}: a strided or out-of-range layout reached the CPU kernel"))
    })
}

/// `gelu_backward` in one pass on a CPU tensor of `f32` or `f64` with a gradient of its shape: the default's steps per
/// element (`kernels::gelu_derivative`), the values of ndarray's kernel, without the default's ten intermediate
/// tensors. `None` for other devices, dtypes and broadcast gradients, which take the composed default.
pub(super) fn fused_gelu_backward(tensor: &Tensor, gradient: &Tensor) -> Result<Option<Tensor>> {
    check_operands("gelu_backward", [tensor, gradient])?;
    if !runs_cpu_kernels(tensor) || tensor.dims() != gradient.dims() {
        return Ok(None);
    }
    check_output_like("gelu_backward", tensor)?;
    let fused = || tensor.contiguous()?.apply_op2_no_bwd(&gradient.contiguous()?, &GeluBackward);
    fused().map(Some).or_backend("gelu_backward")
}

struct GeluBackward;

impl GeluBackward {
    fn zip<T: Kernels + Float>(values: (&[T], &Layout), gradients: (&[T], &Layout)) -> candle_core::Result<Vec<T>> {
        let (x, g) = (contiguous_slice("gelu_backward", values)?, contiguous_slice("gelu_backward", gradients)?);
        let constants = gelu_derivative_constants(|value| T::from(value).unwrap_or_else(T::nan));
        let mut outputs = vec![T::zero(); x.len().min(g.len())];
        zip_slices(x, g, &mut outputs, |x, g| gelu_derivative(x, g, constants, |y| y));
        Ok(outputs)
    }
}

impl CustomOp2 for GeluBackward {
    fn name(&self) -> &'static str {
        "gelu_backward"
    }

    fn cpu_fwd(
        &self,
        values: &CpuStorage,
        layout: &Layout,
        gradients: &CpuStorage,
        gradient_layout: &Layout,
    ) -> candle_core::Result<(CpuStorage, candle_core::Shape)> {
        let outputs = match (values, gradients) {
            (CpuStorage::F32(x), CpuStorage::F32(g)) => CpuStorage::F32(Self::zip((x, layout), (g, gradient_layout))?),
            (CpuStorage::F64(x), CpuStorage::F64(g)) => CpuStorage::F64(Self::zip((x, layout), (g, gradient_layout))?),
            (other, _) => return Err(candle_core::Error::UnsupportedDTypeForOp(other.dtype(), self.name())),
        };
        Ok((outputs, layout.shape().clone()))
    }
}

/// `1 / (1 + exp(-x))`: candle-core has no sigmoid, and this is the expression the ndarray backend evaluates, so
/// both round alike.
pub(super) fn sigmoid(tensor: &Tensor) -> Result<Tensor> {
    unary("sigmoid", tensor, |t| t.neg()?.exp()?.affine(1.0, 1.0)?.recip())
}

pub(super) fn powf_scalar(tensor: &Tensor, exponent: f64) -> Result<Tensor> {
    unary("powf_scalar", tensor, |t| t.powf(scalar_for(t, exponent)))
}

/// Which of two values `extreme` keeps, or of a lane `reduce::extreme_dim`.
#[derive(Clone, Copy)]
pub(super) enum Extreme {
    Max,
    Min,
}

/// The larger (`lhs >= rhs` keeps `lhs`) or smaller (`lhs <= rhs` keeps `lhs`) of two operands, broadcasting; NaN
/// where either is NaN. Written as a comparison and a pick, since candle's own `maximum` and `minimum` drop a NaN
/// (of the second operand on the CPU, of either in CUDA's `fmax`) and CUDA's may pick either of two signed zeros.
pub(super) fn extreme(op: &'static str, which: Extreme, lhs: &Tensor, rhs: &Tensor) -> Result<Tensor> {
    check_operands(op, [lhs, rhs])?;
    let shape = Shape::broadcast(op, &Shape::new(lhs.dims()), &Shape::new(rhs.dims()))?;
    check_output(op, lhs.device(), shape.num_elements(), lhs.dtype())?;
    if let Some(empty) = empty_output(op, &shape, lhs.dtype(), lhs.device())? {
        return Ok(empty);
    }
    let picked = || {
        let (lhs, rhs) = (lhs.broadcast_as(shape.dims())?, rhs.broadcast_as(shape.dims())?);
        let keeps_lhs = match which {
            Extreme::Max => lhs.ge(&rhs)?,
            Extreme::Min => lhs.le(&rhs)?,
        };
        // Neither comparison holds with a NaN: `rhs` is picked, unless the NaN is `lhs`.
        let keeps_lhs = keeps_lhs.maximum(&lhs.ne(&lhs)?)?;
        keeps_lhs.where_cond(&lhs, &rhs)
    };
    picked().or_backend(op)
}

/// `clamp` keeps NaN in candle, as on every backend.
pub(super) fn clamp(tensor: &Tensor, min: f64, max: f64) -> Result<Tensor> {
    crate::math::check_clamp_bounds(min, max)?;
    unary("clamp", tensor, |t| t.clamp(scalar_for(t, min), scalar_for(t, max)))
}
