//! Reductions: over every element (shape `[1]`), or along one axis keeping it with size 1.

use std::mem::MaybeUninit;
use std::ops::Range;

use candle_core::backend::BackendStorage;
use candle_core::{CpuStorage, DType, Layout, Tensor};

use super::elementwise::BinaryOp::{Add, Div, Mul, Sub};
use super::elementwise::scalar_for;
use super::elementwise::{
    CpuFloat, CpuKernel, CpuOperand, CpuPairKernel, CpuSingleKernel, CpuTripleKernel, Extreme, broadcast_binary,
    contiguous_slice, contiguous_slice_mut, cpu_custom_ops, runs_cpu_kernels,
};
use super::error::{OrBackend, dtype_of, float_dtype};
use super::index::gather;
use super::indices::{constant, counting, float_constant};
use super::layout::shape_of;
use super::matmul::matmul;
use super::memory::{check_output, check_output_like, empty_like, filled};
use super::operands::check_same_device;
use crate::backend::defaults::{
    AttentionSizes, EMPTY_AXIS, as_cross_entropy_error, check_gradient_operand, cross_entropy_rows, layer_norm_axis,
};
use crate::error::{Error, Result};
use crate::kernels::reduce::{
    Normalise, attention_row, layer_norm_backward_row, layer_norm_parameter_sums, layer_norm_row, normalise_row,
    row_pair, softmax_backward_row,
};
use crate::memory;
use crate::parallel::{self, Work, for_each_row};
use crate::shape::Shape;

pub(super) fn sum(tensor: &Tensor) -> Result<Tensor> {
    float_dtype("sum", tensor)?;
    if tensor.elem_count() == 0 {
        // The sum of no elements, without candle's kernel over none (see `empty_output`).
        return filled("sum", &Shape::new([1]), 0.0, dtype_of(tensor), tensor.device());
    }
    tensor.sum_all().and_then(|sum| sum.reshape(1)).or_backend("sum")
}

/// The mean of no elements is NaN (0 times 1/0), as on every backend.
pub(super) fn mean(tensor: &Tensor) -> Result<Tensor> {
    float_dtype("mean", tensor)?;
    let scale = reciprocal(tensor.elem_count());
    sum(tensor)?.affine(scale, 0.0).or_backend("mean")
}

pub(super) fn sum_dim(tensor: &Tensor, axis: usize) -> Result<Tensor> {
    float_dtype("sum_dim", tensor)?;
    check_reduced_output("sum_dim", tensor, axis, tensor.dtype())?;
    sum_keepdim(tensor, axis).or_backend("sum_dim")
}

pub(super) fn mean_dim(tensor: &Tensor, axis: usize) -> Result<Tensor> {
    float_dtype("mean_dim", tensor)?;
    check_reduced_output("mean_dim", tensor, axis, tensor.dtype())?;
    let scale = reciprocal(tensor.dims()[axis]);
    sum_keepdim(tensor, axis).and_then(|sums| sums.affine(scale, 0.0)).or_backend("mean_dim")
}

/// The sums along `axis`, which keeps size 1. candle's CPU kernel sums the last axis of a contiguous tensor with
/// vector instructions, but any other axis with integer divisions per element, some ten times slower: the bias
/// gradients' sums over the batch axes took a fifth of the candle GPT step. So on the CPU, a leading axis of a
/// contiguous `f32` or `f64` tensor is summed as a row of ones times the tensor viewed as a matrix (one GEMM that
/// reads it once, in order); another axis is moved last first, the others keeping their order: one strided copy, a
/// fast sum, and a free reshape back, since the kept axis has size 1. (candle's CUDA kernel reduces any axis where
/// it lies.)
fn sum_keepdim(tensor: &Tensor, axis: usize) -> candle_core::Result<Tensor> {
    let (rank, dims) = (tensor.rank(), tensor.dims());
    if tensor.elem_count() == 0 {
        // Sums of empty lanes, or no lanes: zeros, without candle's kernel (see `empty_output`).
        let mut kept = dims.to_vec();
        kept[axis] = 1;
        return Tensor::zeros(kept, tensor.dtype(), tensor.device());
    }
    if axis + 1 >= rank || dims[axis] == 1 || !tensor.device().is_cpu() {
        return tensor.sum_keepdim(axis);
    }
    let mut kept = dims.to_vec();
    kept[axis] = 1;
    // GEMM kernels are not handed a zero-sized dimension (see `matmul`).
    let leading = dims[..axis].iter().all(|&size| size == 1) && tensor.elem_count() > 0;
    if leading && tensor.is_contiguous() && matches!(tensor.dtype(), DType::F32 | DType::F64) {
        let (length, rest) = (dims[axis], dims[axis + 1..].iter().product::<usize>());
        let ones = Tensor::ones((1, length), tensor.dtype(), tensor.device())?;
        return ones.matmul(&tensor.reshape((length, rest))?)?.reshape(kept);
    }
    let order: Vec<usize> = (0..rank).filter(|&other| other != axis).chain([axis]).collect();
    tensor.permute(order)?.contiguous()?.sum_keepdim(rank - 1)?.reshape(kept)
}

/// `x - max - log(sum(exp(x - max)))` along `axis`.
pub(super) fn log_softmax(tensor: &Tensor, axis: usize) -> Result<Tensor> {
    normalised_lanes("log_softmax", tensor, axis, Normalise::Log)
}

/// `exp(x - max) / Σ exp(x - max)` along `axis`.
pub(super) fn softmax(tensor: &Tensor, axis: usize) -> Result<Tensor> {
    normalised_lanes("softmax", tensor, axis, Normalise::Exp)
}

/// Each lane along `axis` normalised as `which` says. A CPU tensor of `f32` or `f64` runs the ndarray backend's
/// row kernel (`kernels::reduce::normalise_row`) on a contiguous copy with `axis` last, so both CPU backends give
/// the same bits; on another device, candle's ops take the same steps (their sums in candle's order).
fn normalised_lanes(op: &'static str, tensor: &Tensor, axis: usize, which: Normalise) -> Result<Tensor> {
    float_dtype(op, tensor)?;
    shape_of(tensor).check_axis(op, axis)?;
    check_output_like(op, tensor)?;
    if tensor.elem_count() == 0 {
        // Nothing to normalise, and candle's max refuses an empty tensor.
        return Ok(tensor.clone());
    }
    let normalised = || {
        if runs_cpu_kernels(tensor) {
            let last = tensor.rank() - 1;
            let rows = tensor.transpose(axis, last)?.contiguous()?.apply_op1_no_bwd(&NormalisedRows(which))?;
            return rows.transpose(axis, last);
        }
        // Shifted by the max, so that `exp` cannot overflow.
        let shifted = broadcast_binary(Sub, tensor, &tensor.max_keepdim(axis)?)?;
        let exp = CpuKernel::Exp.apply(&shifted)?;
        match which {
            Normalise::Log => broadcast_binary(Sub, &shifted, &exp.sum_keepdim(axis)?.log()?),
            Normalise::Exp => broadcast_binary(Div, &exp, &exp.sum_keepdim(axis)?),
        }
    };
    normalised().or_backend(op)
}

/// `kernels::reduce::normalise_row` on each row of the last axis of a contiguous CPU tensor, rows across threads
/// when there are many.
struct NormalisedRows(Normalise);

impl CpuSingleKernel for NormalisedRows {
    fn op_name(&self) -> &'static str {
        match self.0 {
            Normalise::Log => "log_softmax",
            Normalise::Exp => "softmax",
        }
    }

    fn outputs<T: CpuFloat>(&self, (values, layout): CpuOperand<'_, T>) -> candle_core::Result<Vec<T>> {
        let op = self.op_name();
        let inputs = contiguous_slice(op, (values, layout))?;
        let mut rows = memory::try_vec(op, inputs.len()).map_err(candle_core::Error::wrap)?;
        rows.extend_from_slice(inputs);
        let width = layout.dims().last().copied().unwrap_or(0);
        for_each_row(&mut rows, width, |_, row| normalise_row(row, self.0));
        Ok(rows)
    }
}

/// Attention weights on a CPU tensor of `f32` or `f64`: one product, then the ndarray backend's row kernel
/// (`kernels::reduce::attention_row`: the scale, the causal mask and the softmax in one pass), so both CPU backends
/// give the same bits. `None` for another device or dtype, which takes the composed default (every op of it is
/// native there).
pub(super) fn fused_attention_weights(
    query: &Tensor,
    key: &Tensor,
    scale: f64,
    causal: bool,
) -> Result<Option<Tensor>> {
    let op = "attention_weights";
    let sizes = AttentionSizes::of(op, (&shape_of(query), dtype_of(query)), (&shape_of(key), dtype_of(key)))?;
    check_same_device(op, query, key)?;
    if !runs_cpu_kernels(query) || sizes.output.num_elements() == 0 {
        return Ok(None);
    }
    let rank = sizes.output.rank();
    let scores = matmul(query, &key.transpose(rank - 2, rank - 1).or_backend(op)?)?.contiguous().or_backend(op)?;
    // The product's output is this function's alone, so its rows become the weights where they are (as on
    // ndarray), without a second buffer of the scores' size.
    let rows = AttentionRows { scale: scalar_for(query, scale), causal, sizes };
    scores.inplace_op1(&rows).or_backend(op)?;
    Ok(Some(scores))
}

/// `kernels::reduce::attention_row` on each row of contiguous scores, in place, rows across threads when there are
/// many.
struct AttentionRows {
    /// The scale, already rounded to the scores' dtype.
    scale: f64,
    causal: bool,
    sizes: AttentionSizes,
}

impl AttentionRows {
    fn write<T: CpuFloat>(&self, (values, layout): (&mut [T], &Layout)) -> candle_core::Result<()> {
        let rows = contiguous_slice_mut("attention_weights", (values, layout))?;
        let scale = T::from(self.scale).unwrap_or_else(T::nan);
        let sizes = &self.sizes;
        for_each_row(rows, sizes.keys, |index, row| attention_row(row, sizes.attended(index, self.causal), scale));
        Ok(())
    }
}

impl candle_core::InplaceOp1 for AttentionRows {
    fn name(&self) -> &'static str {
        "attention_weights"
    }

    fn cpu_fwd(&self, storage: &mut CpuStorage, layout: &Layout) -> candle_core::Result<()> {
        match storage {
            CpuStorage::F32(values) => self.write((values, layout)),
            CpuStorage::F64(values) => self.write((values, layout)),
            other => Err(candle_core::Error::UnsupportedDTypeForOp(other.dtype(), self.name())),
        }
    }
}

/// `softmax_backward` on a CPU tensor of `f32` or `f64`: the ndarray backend's row kernel
/// (`kernels::reduce::softmax_backward_row`) on contiguous copies with `axis` last, so both CPU backends give the same
/// bits. `None` elsewhere, which takes the composed default.
pub(super) fn fused_softmax_backward(output: &Tensor, gradient: &Tensor, axis: usize) -> Result<Option<Tensor>> {
    let op = "softmax_backward";
    let shape = shape_of(output);
    check_gradient_operand(op, (&shape, float_dtype(op, output)?), (&shape_of(gradient), float_dtype(op, gradient)?))?;
    shape.check_axis(op, axis)?;
    check_same_device(op, output, gradient)?;
    if !runs_cpu_kernels(output) {
        return Ok(None);
    }
    check_output_like(op, output)?;
    if output.elem_count() == 0 {
        return Ok(Some(output.clone()));
    }
    let last = output.rank() - 1;
    let rows = |tensor: &Tensor| tensor.transpose(axis, last)?.contiguous();
    let fused = || rows(output)?.apply_op2_no_bwd(&rows(gradient)?, &SoftmaxBackward)?.transpose(axis, last);
    fused().map(Some).or_backend(op)
}

struct SoftmaxBackward;

impl CpuPairKernel for SoftmaxBackward {
    fn op_name(&self) -> &'static str {
        "softmax_backward"
    }

    fn outputs<T: CpuFloat>(
        &self,
        outputs: (&[T], &Layout),
        gradients: (&[T], &Layout),
    ) -> candle_core::Result<Vec<T>> {
        let op = "softmax_backward";
        let (y, g, width) = (contiguous_slice(op, outputs)?, contiguous_slice(op, gradients)?, last_size(outputs.1));
        // SAFETY: `softmax_backward_row` writes every output of the row (NaN for rows of other lengths).
        unsafe {
            written_in_rows(op, (y.len(), width), |rows, outputs| row_pair((y, g), rows, outputs, softmax_backward_row))
        }
    }
}

/// `layer_norm_backward` on a CPU tensor of `f32` or `f64`: the ndarray backend's row kernel
/// (`kernels::reduce::layer_norm_backward_row`), so both CPU backends give the same bits. `eps` is rounded to the
/// dtype first, as a scalar operand is everywhere. `None` elsewhere, which takes the composed default.
pub(super) fn fused_layer_norm_backward(
    tensor: &Tensor,
    gamma: &Tensor,
    gradient: &Tensor,
    eps: f64,
) -> Result<Option<Tensor>> {
    let op = "layer_norm_backward";
    let (input, gamma_of) = ((shape_of(tensor), float_dtype(op, tensor)?), (shape_of(gamma), float_dtype(op, gamma)?));
    layer_norm_axis(op, (&input.0, input.1), (&gamma_of.0, gamma_of.1), (&gamma_of.0, gamma_of.1))?;
    check_gradient_operand(op, (&input.0, input.1), (&shape_of(gradient), float_dtype(op, gradient)?))?;
    check_same_device(op, tensor, gamma)?;
    check_same_device(op, tensor, gradient)?;
    if !runs_cpu_kernels(tensor) {
        return Ok(None);
    }
    check_output_like(op, tensor)?;
    if tensor.elem_count() == 0 {
        return Ok(Some(tensor.clone()));
    }
    let eps = scalar_for(tensor, eps);
    let fused = || {
        let (gamma, gradient) = (gamma.contiguous()?, gradient.contiguous()?);
        tensor.contiguous()?.apply_op3_no_bwd(&gamma, &gradient, &LayerNormBackward { eps })
    };
    fused().map(Some).or_backend(op)
}

/// `layer_norm_parameter_gradients` on a CPU tensor of `f32` or `f64`: the ndarray backend's kernel
/// (`kernels::reduce::layer_norm_parameter_sums`), so both CPU backends give the same bits. `eps` is rounded to the
/// dtype first, as a scalar operand is everywhere. `None` elsewhere, which takes the composed default.
pub(super) fn fused_layer_norm_parameter_gradients(
    tensor: &Tensor,
    gradient: &Tensor,
    eps: f64,
) -> Result<Option<Tensor>> {
    let op = "layer_norm_parameter_gradients";
    let shape = shape_of(tensor);
    check_gradient_operand(op, (&shape, float_dtype(op, tensor)?), (&shape_of(gradient), float_dtype(op, gradient)?))?;
    check_same_device(op, tensor, gradient)?;
    if !runs_cpu_kernels(tensor) || tensor.rank() == 0 {
        return Ok(None);
    }
    let eps = scalar_for(tensor, eps);
    let fused = || tensor.contiguous()?.apply_op2_no_bwd(&gradient.contiguous()?, &LayerNormParameterGradients { eps });
    fused().map(Some).or_backend(op)
}

struct LayerNormParameterGradients {
    /// Already rounded to the tensor's dtype.
    eps: f64,
}

impl CpuPairKernel for LayerNormParameterGradients {
    fn op_name(&self) -> &'static str {
        "layer_norm_parameter_gradients"
    }

    fn output_shape(&self, values: &Layout) -> candle_core::Shape {
        candle_core::Shape::from((2, last_size(values)))
    }

    fn outputs<T: CpuFloat>(
        &self,
        values: CpuOperand<'_, T>,
        gradients: CpuOperand<'_, T>,
    ) -> candle_core::Result<Vec<T>> {
        let op = "layer_norm_parameter_gradients";
        let width = last_size(values.1);
        let (x, g) = (contiguous_slice(op, values)?, contiguous_slice(op, gradients)?);
        let eps = T::from(self.eps).unwrap_or_else(T::nan);
        layer_norm_parameter_sums(op, (x, g), width, eps).map_err(candle_core::Error::wrap)
    }
}

/// `layer_norm` of a contiguous CPU tensor of `f32` or `f64`: the ndarray backend's row kernel
/// (`kernels::reduce::layer_norm_row`) on each row of a copy, so both CPU backends give the same bits.
struct LayerNormRows {
    /// Already rounded to the tensor's dtype.
    eps: f64,
}

impl CpuTripleKernel for LayerNormRows {
    fn op_name(&self) -> &'static str {
        "layer_norm"
    }

    fn outputs<T: CpuFloat>(
        &self,
        (x, gamma, beta): (CpuOperand<'_, T>, CpuOperand<'_, T>, CpuOperand<'_, T>),
    ) -> candle_core::Result<Vec<T>> {
        let op = "layer_norm";
        let width = last_size(x.1);
        let (x, gamma, beta) = (contiguous_slice(op, x)?, contiguous_slice(op, gamma)?, contiguous_slice(op, beta)?);
        let mut rows = memory::try_vec(op, x.len()).map_err(candle_core::Error::wrap)?;
        rows.extend_from_slice(x);
        let eps = T::from(self.eps).unwrap_or_else(T::nan);
        for_each_row(&mut rows, width, |_, row| layer_norm_row(row, (gamma, beta), eps));
        Ok(rows)
    }
}

struct LayerNormBackward {
    /// Already rounded to the tensor's dtype.
    eps: f64,
}

impl CpuTripleKernel for LayerNormBackward {
    fn op_name(&self) -> &'static str {
        "layer_norm_backward"
    }

    fn outputs<T: CpuFloat>(
        &self,
        (x, gamma, g): (CpuOperand<'_, T>, CpuOperand<'_, T>, CpuOperand<'_, T>),
    ) -> candle_core::Result<Vec<T>> {
        let op = "layer_norm_backward";
        let width = last_size(x.1);
        let (x, gamma, g) = (contiguous_slice(op, x)?, contiguous_slice(op, gamma)?, contiguous_slice(op, g)?);
        let eps = T::from(self.eps).unwrap_or_else(T::nan);
        // SAFETY: `layer_norm_backward_row` writes every output of the row (NaN for rows of other lengths).
        unsafe {
            written_in_rows(op, (x.len(), width), |rows, outputs| {
                row_pair((x, g), rows, outputs, |x, g, outputs| layer_norm_backward_row((x, g, gamma), eps, outputs))
            })
        }
    }
}

/// The size of a layout's last axis: the width of its rows (1 for a scalar).
fn last_size(layout: &Layout) -> usize {
    layout.dims().last().copied().unwrap_or(1)
}

/// `len` outputs written a `width`-long row at a time by `write(rows, outputs)`, `rows` being the row's range of
/// indices, in memory not cleared first; rows across threads when there are many.
///
/// # Safety
///
/// `write` writes every element of each row it is handed.
unsafe fn written_in_rows<T: Send>(
    op: &'static str,
    (len, width): (usize, usize),
    write: impl Fn(Range<usize>, &mut [MaybeUninit<T>]) + Sync + Send,
) -> candle_core::Result<Vec<T>> {
    let values = memory::try_vec(op, len).map_err(candle_core::Error::wrap)?;
    // SAFETY: `write` writes every element of each row, as this function's caller promises.
    let written = unsafe { parallel::written_in_rows(values, (len, width), Work::Heavy, write) };
    written.ok_or_else(|| candle_core::Error::Msg(format!("{op}: an output buffer shorter than asked")))
}

/// `-mean(gather(log_softmax(logits), targets))` from candle's kernels: the same values as the composition. `gather`
/// checks the targets (once: on a GPU each check reads a verdict back), and its error is renamed to this op.
pub(super) fn cross_entropy(logits: &Tensor, targets: &Tensor) -> Result<Tensor> {
    let op = "cross_entropy";
    float_dtype(op, logits)?;
    let (rows, _) = cross_entropy_rows(op, &shape_of(logits), &shape_of(targets))?;
    check_same_device(op, logits, targets)?;
    let column = targets.reshape((rows, 1)).or_backend(op)?;
    let picked = gather(&log_softmax(logits, 1)?, 1, &column).map_err(as_cross_entropy_error)?;
    mean(&picked)?.neg().or_backend(op)
}

/// Normalised over the last axis: a CPU tensor of `f32` or `f64` by the ndarray backend's row kernel
/// (`kernels::reduce::layer_norm_row`), so both CPU backends give the same bits; another by candle's ops, in the
/// tensor's dtype, or in f32 for F16 and BF16 and rounded once at the end, as the ndarray backend does. candle-core
/// has no fused kernel for it (candle-nn's records no backward, and this one needs none: `Autodiff` has the rule).
pub(super) fn layer_norm(tensor: &Tensor, gamma: &Tensor, beta: &Tensor, eps: f64) -> Result<Tensor> {
    let op = "layer_norm";
    let of =
        |tensor: &Tensor| -> Result<(Shape, crate::dtype::DType)> { Ok((shape_of(tensor), float_dtype(op, tensor)?)) };
    let (input, gamma_of, beta_of) = (of(tensor)?, of(gamma)?, of(beta)?);
    let (axis, _) = layer_norm_axis(op, (&input.0, input.1), (&gamma_of.0, gamma_of.1), (&beta_of.0, beta_of.1))?;
    check_same_device(op, tensor, gamma)?;
    check_same_device(op, tensor, beta)?;
    let exact = match input.1 {
        crate::dtype::DType::F16 | crate::dtype::DType::BF16 => DType::F32,
        crate::dtype::DType::F32 | crate::dtype::DType::F64 => tensor.dtype(),
    };
    // The working copy and the output.
    check_output(op, tensor.device(), tensor.elem_count(), exact)?;
    check_output_like(op, tensor)?;
    if let Some(empty) = empty_like(op, tensor)? {
        return Ok(empty);
    }
    let eps = scalar_for(tensor, eps);
    if runs_cpu_kernels(tensor) {
        let rows = || {
            let (gamma, beta) = (gamma.contiguous()?, beta.contiguous()?);
            tensor.contiguous()?.apply_op3_no_bwd(&gamma, &beta, &LayerNormRows { eps })
        };
        return rows().or_backend(op);
    }
    let normalised = || {
        let x = tensor.to_dtype(exact)?;
        let centred = broadcast_binary(Sub, &x, &x.mean_keepdim(axis)?)?;
        let deviation = broadcast_binary(Mul, &centred, &centred)?.mean_keepdim(axis)?.affine(1.0, eps)?.sqrt()?;
        let scaled = broadcast_binary(Mul, &broadcast_binary(Div, &centred, &deviation)?, &gamma.to_dtype(exact)?)?;
        broadcast_binary(Add, &scaled, &beta.to_dtype(exact)?)?.to_dtype(tensor.dtype())
    };
    normalised().or_backend(op)
}

pub(super) fn argmax(tensor: &Tensor, axis: usize) -> Result<Tensor> {
    first_extreme_position("argmax", Extreme::Max, tensor, axis)
}

pub(super) fn argmin(tensor: &Tensor, axis: usize) -> Result<Tensor> {
    first_extreme_position("argmin", Extreme::Min, tensor, axis)
}

/// The largest or smallest entry of each lane, NaN where the lane holds NaN (which candle's reductions skip or
/// not, by kernel): lanes with a NaN are found with `x != x` and filled.
pub(super) fn extreme_dim(op: &'static str, which: Extreme, tensor: &Tensor, axis: usize) -> Result<Tensor> {
    let output = picked_lanes(op, tensor, axis, tensor.dtype())?;
    if tensor.elem_count() == 0 {
        return filled(op, &output, 0.0, dtype_of(tensor), tensor.device());
    }
    let extremes = || {
        let extremes = match which {
            Extreme::Max => tensor.max_keepdim(axis)?,
            Extreme::Min => tensor.min_keepdim(axis)?,
        };
        let has_nan = tensor.ne(tensor)?.max_keepdim(axis)?;
        has_nan.where_cond(&float_constant(f64::NAN, tensor)?.broadcast_as(output.dims())?, &extremes)
    };
    extremes().or_backend(op)
}

/// The checks of an op that picks an entry of each lane along `axis` (there must be one), and the room for its
/// output of `dtype`; the output's shape. An empty tensor has empty lanes along another axis, and an empty output.
fn picked_lanes(op: &'static str, tensor: &Tensor, axis: usize, dtype: DType) -> Result<Shape> {
    float_dtype(op, tensor)?;
    let shape = shape_of(tensor);
    shape.check_axis(op, axis)?;
    if shape.dims()[axis] == 0 {
        return Err(Error::unexpected_shape(op, EMPTY_AXIS, &shape));
    }
    check_reduced_output(op, tensor, axis, dtype)?;
    shape.with_dim(op, axis, 1)
}

/// The first largest (`Max`) or smallest (`Min`) entry of each lane, NaN skipped: NaN replaced by `-inf` (`+inf`)
/// for the lane's extreme, then the smallest position holding it (a lane of NaN alone has none, and gives 0, as on
/// the host). Positions are compared rather than read from candle's `argmax` and `argmin`, whose CUDA kernels need
/// not pick the first of equal entries.
fn first_extreme_position(op: &'static str, which: Extreme, tensor: &Tensor, axis: usize) -> Result<Tensor> {
    let output = picked_lanes(op, tensor, axis, DType::I64)?;
    if tensor.elem_count() == 0 {
        return Tensor::zeros(output.dims(), DType::I64, tensor.device()).or_backend(op);
    }
    let len = tensor.dims()[axis];
    check_output_like(op, tensor)?;
    check_output(op, tensor.device(), tensor.elem_count(), DType::I64)?;
    let positions = counting(op, len, tensor.device())?;
    let first = || {
        let is_nan = tensor.ne(tensor)?;
        let never_picked = match which {
            Extreme::Max => f64::NEG_INFINITY,
            Extreme::Min => f64::INFINITY,
        };
        let never_picked = float_constant(never_picked, tensor)?.broadcast_as(tensor.dims())?;
        let skipping_nan = is_nan.where_cond(&never_picked, tensor)?;
        let extreme = match which {
            Extreme::Max => skipping_nan.max_keepdim(axis)?,
            Extreme::Min => skipping_nan.min_keepdim(axis)?,
        };
        let mut along = vec![1; tensor.rank()];
        along[axis] = len;
        // `len` fits in `i64`: `counting` made `len` values.
        let beyond = constant(len as i64, tensor.device())?.broadcast_as(tensor.dims())?;
        let positions = positions.reshape(along)?.broadcast_as(tensor.dims())?;
        let first = tensor.broadcast_eq(&extreme)?.where_cond(&positions, &beyond)?.min_keepdim(axis)?;
        let none = first.broadcast_eq(&constant(len as i64, tensor.device())?)?;
        none.where_cond(&Tensor::zeros(output.dims(), DType::I64, tensor.device())?, &first)
    };
    first().or_backend(op)
}

/// The product of each lane, multiplied exactly as IEEE multiplies (no logarithms): the lane's halves multiplied
/// pairwise, halving its length each time, an odd entry carried; an empty lane's product is 1.
pub(super) fn prod_dim(tensor: &Tensor, axis: usize) -> Result<Tensor> {
    let op = "prod_dim";
    float_dtype(op, tensor)?;
    let shape = shape_of(tensor);
    shape.check_axis(op, axis)?;
    check_reduced_output(op, tensor, axis, tensor.dtype())?;
    let output = shape.with_dim(op, axis, 1)?;
    let len = shape.dims()[axis];
    if tensor.elem_count() == 0 {
        // Empty lanes, whose product is 1, or no lanes.
        return filled(op, &output, 1.0, dtype_of(tensor), tensor.device());
    }
    let multiplied = || {
        let (mut products, mut len) = (tensor.clone(), len);
        while len > 1 {
            let half = len / 2;
            let paired = products.narrow(axis, 0, half)?.mul(&products.narrow(axis, half, half)?)?;
            products =
                if len % 2 == 1 { Tensor::cat(&[&paired, &products.narrow(axis, len - 1, 1)?], axis)? } else { paired };
            len = products.dims()[axis];
        }
        Ok(products)
    };
    multiplied().or_backend(op)
}

/// Checks `axis` and the room for the output of a reduction along it, which keeps the axis with size 1. An
/// empty axis can make the output much larger than the input (`[0, n]` reduces to `[1, n]`).
fn check_reduced_output(op: &'static str, tensor: &Tensor, axis: usize, dtype: DType) -> Result<()> {
    let output = shape_of(tensor).with_dim(op, axis, 1)?;
    check_output(op, tensor.device(), output.num_elements(), dtype)
}

/// `1 / count`, rounded once, as the ndarray backend scales its means.
fn reciprocal(count: usize) -> f64 {
    1.0 / count as f64
}

cpu_custom_ops!(
    single: NormalisedRows;
    pair: SoftmaxBackward, LayerNormParameterGradients;
    triple: LayerNormRows, LayerNormBackward
);
