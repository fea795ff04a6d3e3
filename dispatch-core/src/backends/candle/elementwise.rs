//! Element-wise ops. Binary ops broadcast with numpy rules, which candle's `broadcast_*` ops follow too; we check
//! devices and shapes first so that a mismatch is our typed error, not a candle string.

use std::mem::MaybeUninit;
use std::ops::AddAssign;

use candle_core::backend::BackendStorage;
use candle_core::{CpuStorage, DType, Layout, Tensor};
use num_traits::Float;

use super::error::{OrBackend, dtype_of, float_dtype};
use super::layout::shape_of;
use super::memory::{check_output, check_output_like, empty_like, empty_output};
use super::operands::check_operands;
use crate::backend::{AdamScalars, AdamStep, adam_output_shape};
use crate::error::Result;
use crate::kernels::matmul::Gemm;
use crate::kernels::{
    AdamConstants, Kernels, Slot, all_nan, gelu_derivative, gelu_derivative_constants, map_slice, zip_slices,
};
use crate::memory;
use crate::parallel::{self, Work};
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
    broadcast_binary(op, lhs, rhs).or_backend(name)
}

/// `lhs op rhs`, the two broadcast together (numpy rules), once checked: on a CPU tensor of `f32` or `f64` by
/// `CpuBinary`, elsewhere by candle's own kernels. candle's CPU kernels split a pass of 64k elements or more over
/// a pool of their own, whose threads spin after each op and take the cores from rayon's, which the matrix
/// products and the other kernels run on: on two cores the GPT step ran faster with that pool off.
pub(super) fn broadcast_binary(op: BinaryOp, lhs: &Tensor, rhs: &Tensor) -> candle_core::Result<Tensor> {
    if runs_cpu_kernels(lhs) && lhs.elem_count() > 0 && rhs.elem_count() > 0 {
        let shape = lhs.shape().broadcast_shape_binary_op(rhs.shape(), op.name())?;
        let (lhs, rhs) = (lhs.broadcast_as(&shape)?, rhs.broadcast_as(&shape)?);
        if block_and_repeat(lhs.layout()).is_some() && block_and_repeat(rhs.layout()).is_some() {
            return lhs.apply_op2_no_bwd(&rhs, &CpuBinary(op));
        }
        // Any other layout (an axis between broadcast ones read through a permutation, say) is candle's.
        return match op {
            BinaryOp::Add => lhs.add(&rhs),
            BinaryOp::Sub => lhs.sub(&rhs),
            BinaryOp::Mul => lhs.mul(&rhs),
            BinaryOp::Div => lhs.div(&rhs),
        };
    }
    match op {
        BinaryOp::Add => lhs.broadcast_add(rhs),
        BinaryOp::Sub => lhs.broadcast_sub(rhs),
        BinaryOp::Mul => lhs.broadcast_mul(rhs),
        BinaryOp::Div => lhs.broadcast_div(rhs),
    }
}

/// The four arithmetic ops of two CPU tensors of `f32` or `f64` broadcast to one shape, each element one IEEE
/// operation as candle's kernel computes it (so the same values), on rayon's threads when the output is large.
struct CpuBinary(BinaryOp);

impl CpuBinary {
    fn zip<T: CpuFloat>(
        &self,
        lhs: (&[T], &Layout),
        rhs: (&[T], &Layout),
        f: impl Fn(T, T) -> T + Copy + Send + Sync,
    ) -> candle_core::Result<Vec<T>> {
        let unread = || candle_core::Error::Msg(format!("{}: a layout the CPU kernel does not read", self.0.name()));
        let (lhs_reading, rhs_reading) = (Reading::of(lhs).ok_or_else(unread)?, Reading::of(rhs).ok_or_else(unread)?);
        let len = lhs.1.shape().elem_count();
        // SAFETY: `zip_readings` writes every output of the part it is handed.
        unsafe {
            written_in_parts(self.0.name(), len, Work::Light, |start, part| {
                zip_readings(&lhs_reading, &rhs_reading, start, part, f);
            })
        }
    }
}

impl CpuPairKernel for CpuBinary {
    fn op_name(&self) -> &'static str {
        self.0.name()
    }

    fn outputs<T: CpuFloat>(&self, lhs: (&[T], &Layout), rhs: (&[T], &Layout)) -> candle_core::Result<Vec<T>> {
        match self.0 {
            BinaryOp::Add => self.zip(lhs, rhs, |x, y| x + y),
            BinaryOp::Sub => self.zip(lhs, rhs, |x, y| x - y),
            BinaryOp::Mul => self.zip(lhs, rhs, |x, y| x * y),
            BinaryOp::Div => self.zip(lhs, rhs, |x, y| x / y),
        }
    }
}

/// The element types whose CPU tensors run `crate::kernels` rather than candle's kernels: `f32` and `f64`.
pub(super) trait CpuFloat: Kernels + Float + Gemm + AddAssign {}

impl CpuFloat for f32 {}
impl CpuFloat for f64 {}

/// A CPU kernel of one operand, written once for `f32` and `f64`; `cpu_custom_ops!` makes it a `CustomOp1`, whose
/// `cpu_fwd` picks the element type of candle's storage (`storage`) and refuses any other dtype.
pub(super) trait CpuSingleKernel {
    /// The op's name, in candle's errors.
    fn op_name(&self) -> &'static str;

    /// The output's elements from the operand's elements and layout, of the operand's shape.
    fn outputs<T: CpuFloat>(&self, input: CpuOperand<'_, T>) -> candle_core::Result<Vec<T>>;

    fn storage(&self, (input, layout): (&CpuStorage, &Layout)) -> candle_core::Result<CpuStorage> {
        match input {
            CpuStorage::F32(values) => Ok(CpuStorage::F32(self.outputs((values, layout))?)),
            CpuStorage::F64(values) => Ok(CpuStorage::F64(self.outputs((values, layout))?)),
            other => Err(candle_core::Error::UnsupportedDTypeForOp(other.dtype(), self.op_name())),
        }
    }
}

/// A CPU kernel of two operands of one dtype, written once for `f32` and `f64`; `cpu_custom_ops!` makes it a
/// `CustomOp2`, whose `cpu_fwd` picks the element type of candle's storages (`storage`) and refuses any other dtype.
pub(super) trait CpuPairKernel {
    /// The op's name, in candle's errors.
    fn op_name(&self) -> &'static str;

    /// The output's shape, from the first operand's layout: that layout's shape unless the op says otherwise.
    fn output_shape(&self, first: &Layout) -> candle_core::Shape {
        first.shape().clone()
    }

    /// The output's elements from the operands' elements and layouts.
    fn outputs<T: CpuFloat>(&self, lhs: (&[T], &Layout), rhs: (&[T], &Layout)) -> candle_core::Result<Vec<T>>;

    fn storage(
        &self,
        (lhs, lhs_layout): (&CpuStorage, &Layout),
        (rhs, rhs_layout): (&CpuStorage, &Layout),
    ) -> candle_core::Result<CpuStorage> {
        match (lhs, rhs) {
            (CpuStorage::F32(a), CpuStorage::F32(b)) => {
                Ok(CpuStorage::F32(self.outputs((a, lhs_layout), (b, rhs_layout))?))
            }
            (CpuStorage::F64(a), CpuStorage::F64(b)) => {
                Ok(CpuStorage::F64(self.outputs((a, lhs_layout), (b, rhs_layout))?))
            }
            (other, _) => Err(candle_core::Error::UnsupportedDTypeForOp(other.dtype(), self.op_name())),
        }
    }
}

/// A CPU operand of a custom op: its storage's elements and its layout.
pub(super) type CpuOperand<'a, T> = (&'a [T], &'a Layout);

/// `CpuPairKernel` for three operands (a `CustomOp3`).
pub(super) trait CpuTripleKernel {
    /// The op's name, in candle's errors.
    fn op_name(&self) -> &'static str;

    /// The output's shape, from the first operand's layout: that layout's shape unless the op says otherwise.
    fn output_shape(&self, first: &Layout) -> candle_core::Shape {
        first.shape().clone()
    }

    /// The output's elements from the operands' elements and layouts.
    fn outputs<T: CpuFloat>(
        &self,
        operands: (CpuOperand<'_, T>, CpuOperand<'_, T>, CpuOperand<'_, T>),
    ) -> candle_core::Result<Vec<T>>;

    fn storage(
        &self,
        (first, first_layout): (&CpuStorage, &Layout),
        (second, second_layout): (&CpuStorage, &Layout),
        (third, third_layout): (&CpuStorage, &Layout),
    ) -> candle_core::Result<CpuStorage> {
        match (first, second, third) {
            (CpuStorage::F32(a), CpuStorage::F32(b), CpuStorage::F32(c)) => {
                Ok(CpuStorage::F32(self.outputs(((a, first_layout), (b, second_layout), (c, third_layout)))?))
            }
            (CpuStorage::F64(a), CpuStorage::F64(b), CpuStorage::F64(c)) => {
                Ok(CpuStorage::F64(self.outputs(((a, first_layout), (b, second_layout), (c, third_layout)))?))
            }
            (other, ..) => Err(candle_core::Error::UnsupportedDTypeForOp(other.dtype(), self.op_name())),
        }
    }
}

/// candle's `CustomOp1` for each `single` kernel, `CustomOp2` for each `pair` one and `CustomOp3` for each `triple`
/// one: the kernel's name, and a `cpu_fwd` of its `storage` and output shape.
macro_rules! cpu_custom_ops {
    ($(single: $($single:ty),*;)? pair: $($pair:ty),*; triple: $($triple:ty),* $(;)?) => {
        $($(impl candle_core::CustomOp1 for $single {
            fn name(&self) -> &'static str {
                $crate::backends::candle::elementwise::CpuSingleKernel::op_name(self)
            }

            fn cpu_fwd(
                &self,
                input: &candle_core::CpuStorage,
                layout: &candle_core::Layout,
            ) -> candle_core::Result<(candle_core::CpuStorage, candle_core::Shape)> {
                use $crate::backends::candle::elementwise::CpuSingleKernel;
                Ok((self.storage((input, layout))?, layout.shape().clone()))
            }
        })*)?
        $(impl candle_core::CustomOp2 for $pair {
            fn name(&self) -> &'static str {
                $crate::backends::candle::elementwise::CpuPairKernel::op_name(self)
            }

            fn cpu_fwd(
                &self,
                lhs: &candle_core::CpuStorage,
                lhs_layout: &candle_core::Layout,
                rhs: &candle_core::CpuStorage,
                rhs_layout: &candle_core::Layout,
            ) -> candle_core::Result<(candle_core::CpuStorage, candle_core::Shape)> {
                use $crate::backends::candle::elementwise::CpuPairKernel;
                Ok((self.storage((lhs, lhs_layout), (rhs, rhs_layout))?, self.output_shape(lhs_layout)))
            }
        })*
        $(impl candle_core::CustomOp3 for $triple {
            fn name(&self) -> &'static str {
                $crate::backends::candle::elementwise::CpuTripleKernel::op_name(self)
            }

            fn cpu_fwd(
                &self,
                first: &candle_core::CpuStorage,
                first_layout: &candle_core::Layout,
                second: &candle_core::CpuStorage,
                second_layout: &candle_core::Layout,
                third: &candle_core::CpuStorage,
                third_layout: &candle_core::Layout,
            ) -> candle_core::Result<(candle_core::CpuStorage, candle_core::Shape)> {
                use $crate::backends::candle::elementwise::CpuTripleKernel;
                let operands = ((first, first_layout), (second, second_layout), (third, third_layout));
                Ok((self.storage(operands.0, operands.1, operands.2)?, self.output_shape(first_layout)))
            }
        })*
    };
}
pub(super) use cpu_custom_ops;

/// How a broadcast operand gives output element `i`: `block[(i / repeat) % block.len()]`. A tensor of the output's
/// shape is one block read in order; a row broadcast over leading axes (a bias) is a block read again and again; a
/// column broadcast along trailing axes (a lane's max) holds each element of its block for `repeat` outputs.
struct Reading<'a, T> {
    block: &'a [T],
    repeat: usize,
}

/// The length of a layout's block and how often each of its elements repeats, for a layout made of trailing
/// broadcast axes, a row-major block before them and leading broadcast axes (axes of size 1 anywhere); `None` for
/// any other layout.
fn block_and_repeat(layout: &Layout) -> Option<(usize, usize)> {
    let (dims, strides) = (layout.dims(), layout.stride());
    let mut axis = dims.len();
    let mut repeat = 1usize;
    while axis > 0 && (dims[axis - 1] == 1 || strides[axis - 1] == 0) {
        axis -= 1;
        repeat = repeat.checked_mul(dims[axis])?;
    }
    let mut len = 1usize;
    while axis > 0 && (dims[axis - 1] == 1 || strides[axis - 1] == len) {
        axis -= 1;
        len = len.checked_mul(dims[axis])?;
    }
    let leading_broadcast = dims[..axis].iter().zip(&strides[..axis]).all(|(&size, &stride)| size == 1 || stride == 0);
    leading_broadcast.then_some((len, repeat))
}

impl<'a, T> Reading<'a, T> {
    /// The reading of `values` by `layout`, when `block_and_repeat` reads the layout and its block is not empty.
    fn of((values, layout): (&'a [T], &Layout)) -> Option<Self> {
        let (len, repeat) = block_and_repeat(layout)?;
        let start = layout.start_offset();
        let block = values.get(start..start.checked_add(len)?)?;
        // A zero repeat or an empty block would leave an output unread (candle's layouts of non-empty tensors have
        // neither).
        (!block.is_empty() && repeat > 0).then_some(Self { block, repeat })
    }

    /// How many outputs from `i` on read this operand the same way (in order through its block, or one element
    /// held), and the slice they read, its first element the one output `i` reads.
    fn run(&self, i: usize) -> (usize, &'a [T]) {
        let index = (i / self.repeat) % self.block.len();
        if self.repeat == 1 {
            let rest = self.block.get(index..).unwrap_or_default();
            (rest.len(), rest)
        } else {
            (self.repeat - i % self.repeat, self.block.get(index..=index).unwrap_or_default())
        }
    }
}

/// Outputs `start..start + outputs.len()` of `f(lhs, rhs)`, in runs over which each operand either advances through
/// its block or holds one element: loops that vectorise.
fn zip_readings<T: Float, O: Slot<T>>(
    lhs: &Reading<'_, T>,
    rhs: &Reading<'_, T>,
    start: usize,
    outputs: &mut [O],
    f: impl Fn(T, T) -> T + Copy,
) {
    let mut done = 0;
    while done < outputs.len() {
        let i = start + done;
        let ((lhs_run, a), (rhs_run, b)) = (lhs.run(i), rhs.run(i));
        let run = lhs_run.min(rhs_run).min(outputs.len() - done).max(1);
        let (Some(out), Some(&first_a), Some(&first_b)) = (outputs.get_mut(done..done + run), a.first(), b.first())
        else {
            // No reading of a non-empty block ends it, so this is never reached; NaN keeps every output written.
            all_nan::<T, _>(outputs.get_mut(done..).unwrap_or_default());
            return;
        };
        // Each slice read below holds at least `run` elements, as `Reading::run` gives them.
        match (lhs.repeat == 1, rhs.repeat == 1) {
            (true, true) => zip_slices(Work::Light, a, b, out, f),
            (true, false) => map_slice(Work::Light, a, out, |a| f(a, first_b)),
            (false, true) => map_slice(Work::Light, b, out, |b| f(first_a, b)),
            (false, false) => out.iter_mut().for_each(|output| output.put(f(first_a, first_b))),
        }
        done += run;
    }
}

/// `len` outputs that `write(start, part)` writes part by part, in memory not cleared first: candle frees each output
/// to the allocator, which hands recycled memory to the next, and clearing it cost about 6% of the candle GPT step
/// (0.938 of its time without: BENCHMARKS.md, group 7).
///
/// # Safety
///
/// `write` writes every element of each part it is handed.
unsafe fn written_in_parts<T: Send>(
    op: &'static str,
    len: usize,
    work: Work,
    write: impl Fn(usize, &mut [MaybeUninit<T>]) + Sync + Send,
) -> candle_core::Result<Vec<T>> {
    let values = memory::try_vec(op, len).map_err(candle_core::Error::wrap)?;
    // SAFETY: `write` writes every element of each part, as this function's caller promises.
    let written = unsafe { parallel::written_in_parts(values, len, work, write) };
    written.ok_or_else(|| candle_core::Error::Msg(format!("{op}: an output buffer shorter than asked")))
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

/// Element functions that on a CPU tensor of `f32` or `f64` run `crate::kernels`'s loops, split over rayon's threads
/// as the ndarray backend splits its passes, rather than candle's kernels: those compute `exp`, `erf` and GELU one
/// scalar call at a time (its GELU in `f32` cancelling left of `-√2`), and split the others over a pool of their own
/// (see `broadcast_binary`). The first three take the ndarray backend's values; the others are exact, so candle's
/// too. Other devices and dtypes keep candle's kernels.
#[derive(Clone, Copy)]
pub(super) enum CpuKernel {
    Exp,
    Erf,
    Gelu,
    Neg,
    Abs,
    Relu,
    Sqrt,
    Recip,
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
            Self::Neg => tensor.neg(),
            Self::Abs => tensor.abs(),
            Self::Relu => tensor.relu(),
            Self::Sqrt => tensor.sqrt(),
            Self::Recip => tensor.recip(),
        }
    }

    fn map_slice<T: Kernels + Float, O: Slot<T>>(self, inputs: &[T], outputs: &mut [O]) {
        match self {
            Self::Exp => map_slice(self.work(), inputs, outputs, T::exp_of),
            Self::Erf => map_slice(self.work(), inputs, outputs, T::erf_of),
            Self::Gelu => T::gelu_slice(inputs, outputs),
            Self::Neg => map_slice(self.work(), inputs, outputs, |x| -x),
            Self::Abs => map_slice(self.work(), inputs, outputs, T::abs),
            // `max` drops NaN, as candle's relu does (and ndarray's).
            Self::Relu => map_slice(self.work(), inputs, outputs, |x| x.max(T::zero())),
            Self::Sqrt => map_slice(self.work(), inputs, outputs, T::sqrt),
            Self::Recip => map_slice(self.work(), inputs, outputs, T::recip),
        }
    }

    /// What an element costs, which sets from how many elements a pass is split.
    fn work(self) -> Work {
        match self {
            Self::Exp | Self::Erf | Self::Gelu => Work::Heavy,
            Self::Neg | Self::Abs | Self::Relu | Self::Sqrt | Self::Recip => Work::Light,
        }
    }

    /// The kernel of the contiguous elements `layout` picks from `values`, across threads when they are many (as
    /// the ndarray backend splits its heavy passes).
    fn map_layout<T: Kernels + Float>(self, values: &[T], layout: &Layout) -> candle_core::Result<Vec<T>> {
        let inputs = contiguous_slice(self.op_name(), (values, layout))?;
        // SAFETY: a part gets as many inputs as it has outputs (else NaN), and `map_slice` writes one output per input.
        unsafe {
            written_in_parts(self.op_name(), inputs.len(), self.work(), |start, part| {
                match inputs.get(start..start.saturating_add(part.len())) {
                    Some(inputs) => self.map_slice(inputs, part),
                    None => all_nan::<T, _>(part),
                }
            })
        }
    }
}

impl CpuSingleKernel for CpuKernel {
    fn op_name(&self) -> &'static str {
        match self {
            Self::Exp => "exp",
            Self::Erf => "erf",
            Self::Gelu => "gelu",
            Self::Neg => "neg",
            Self::Abs => "abs",
            Self::Relu => "relu",
            Self::Sqrt => "sqrt",
            Self::Recip => "recip",
        }
    }

    fn outputs<T: CpuFloat>(&self, input: CpuOperand<'_, T>) -> candle_core::Result<Vec<T>> {
        self.map_layout(input.0, input.1)
    }
}

/// Whether `tensor` goes through `crate::kernels` (a CPU tensor of `f32` or `f64`) rather than candle's own kernels.
pub(super) fn runs_cpu_kernels(tensor: &Tensor) -> bool {
    tensor.device().is_cpu() && matches!(tensor.dtype(), DType::F32 | DType::F64)
}

/// The elements of a contiguous `layout` in `values`; an error for a strided layout or one past the storage, which the
/// CPU kernels' callers never pass (they make their operands contiguous first).
pub(super) fn contiguous_slice<'a, T>(op: &str, (values, layout): (&'a [T], &Layout)) -> candle_core::Result<&'a [T]> {
    let slice = layout.contiguous_offsets().and_then(|(start, end)| values.get(start..end));
    slice.ok_or_else(|| not_contiguous(op))
}

/// `contiguous_slice`, to write in place.
pub(super) fn contiguous_slice_mut<'a, T>(
    op: &str,
    (values, layout): (&'a mut [T], &Layout),
) -> candle_core::Result<&'a mut [T]> {
    let slice = layout.contiguous_offsets().and_then(|(start, end)| values.get_mut(start..end));
    slice.ok_or_else(|| not_contiguous(op))
}

fn not_contiguous(op: &str) -> candle_core::Error {
    candle_core::Error::Msg(format!("{op}: a strided or out-of-range layout reached the CPU kernel"))
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

impl CpuPairKernel for GeluBackward {
    fn op_name(&self) -> &'static str {
        "gelu_backward"
    }

    fn outputs<T: CpuFloat>(&self, values: (&[T], &Layout), gradients: (&[T], &Layout)) -> candle_core::Result<Vec<T>> {
        let (x, g) = (contiguous_slice("gelu_backward", values)?, contiguous_slice("gelu_backward", gradients)?);
        let constants = gelu_derivative_constants(|value| T::from(value).unwrap_or_else(T::nan));
        // SAFETY: a part gets as many of each input as it has outputs (else NaN), and `zip_slices` writes one output
        // per pair.
        unsafe {
            written_in_parts("gelu_backward", x.len().min(g.len()), Work::Heavy, |start, part| {
                let range = start..start.saturating_add(part.len());
                match (x.get(range.clone()), g.get(range)) {
                    (Some(x), Some(g)) => {
                        zip_slices(Work::Heavy, x, g, part, |x, g| gelu_derivative(x, g, constants, |y| y))
                    }
                    _ => all_nan::<T, _>(part),
                }
            })
        }
    }
}

/// `1 / (1 + exp(-x))`: candle-core has no sigmoid, and this is the expression the ndarray backend evaluates, so
/// both round alike.
pub(super) fn sigmoid(tensor: &Tensor) -> Result<Tensor> {
    unary("sigmoid", tensor, |t| {
        let exp = CpuKernel::Exp.apply(&CpuKernel::Neg.apply(t)?)?;
        CpuKernel::Recip.apply(&exp.affine(1.0, 1.0)?)
    })
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

/// `adam_step` in one pass on CPU tensors of `f32` or `f64`: the ndarray backend's kernel
/// (`kernels::AdamConstants::write_rows`), so both CPU backends give the same bits, without the default's fourteen
/// intermediate tensors. `None` for other devices and dtypes and for empty tensors, which take the composed default.
pub(super) fn fused_adam_step(
    parameter: &Tensor,
    gradient: &Tensor,
    moments: &Tensor,
    options: AdamStep,
) -> Result<Option<Tensor>> {
    let op = "adam_step";
    check_operands(op, [parameter, gradient, moments])?;
    let output = adam_output_shape(&shape_of(parameter), &shape_of(gradient), &shape_of(moments))?;
    let scalars = options.scalars(op)?;
    if !runs_cpu_kernels(parameter) || parameter.elem_count() == 0 {
        return Ok(None);
    }
    check_output(op, parameter.device(), output.num_elements(), parameter.dtype())?;
    let update = AdamUpdate { scalars, dtype: dtype_of(parameter) };
    let fused = || parameter.contiguous()?.apply_op3_no_bwd(&gradient.contiguous()?, &moments.contiguous()?, &update);
    fused().map(Some).or_backend(op)
}

struct AdamUpdate {
    scalars: AdamScalars,
    /// The tensors' dtype, to which each scalar rounds as a scalar operand does.
    dtype: crate::dtype::DType,
}

impl CpuTripleKernel for AdamUpdate {
    fn op_name(&self) -> &'static str {
        "adam_step"
    }

    fn output_shape(&self, parameter: &Layout) -> candle_core::Shape {
        candle_core::Shape::from([&[3], parameter.dims()].concat())
    }

    fn outputs<T: CpuFloat>(
        &self,
        (parameter, gradient, moments): (CpuOperand<'_, T>, CpuOperand<'_, T>, CpuOperand<'_, T>),
    ) -> candle_core::Result<Vec<T>> {
        let op = "adam_step";
        let (p, g) = (contiguous_slice(op, parameter)?, contiguous_slice(op, gradient)?);
        let moments = contiguous_slice(op, moments)?;
        let (first, second) = moments.split_at(p.len().min(moments.len()));
        let constants =
            AdamConstants::new(&self.scalars, |value| T::from(self.dtype.round(value)).unwrap_or_else(T::nan));
        // SAFETY: `write_rows` writes every output it is handed (NaN past the three rows).
        unsafe {
            written_in_parts(op, p.len().saturating_mul(3), Work::Light, |start, part| {
                constants.write_rows((p, g, first, second), start, part, |y| y)
            })
        }
    }
}

cpu_custom_ops!(single: CpuKernel; pair: CpuBinary, GeluBackward; triple: AdamUpdate);

#[cfg(test)]
mod tests {
    use candle_core::{DType, Device, Tensor};

    use super::{BinaryOp, CpuKernel, broadcast_binary};

    /// `rows x columns` values spread over [-2, 2), with zeros among them.
    fn ramp(rows: usize, columns: usize) -> Tensor {
        let count = (rows * columns) as f64;
        let values = Tensor::arange(0f32, count as f32, &Device::Cpu).unwrap();
        values.affine(4.0 / count, -2.0).unwrap().reshape((rows, columns)).unwrap()
    }

    fn bits(tensor: &Tensor) -> Vec<u32> {
        let values: Vec<f32> = tensor.flatten_all().unwrap().to_vec1().unwrap();
        values.into_iter().map(f32::to_bits).collect()
    }

    /// Every way an operand broadcasts, on outputs large enough (from 2^18 elements) to split over rayon's threads:
    /// the same bits as candle's own kernels.
    #[test]
    fn cpu_binary_ops_give_candle_s_bits_on_every_broadcast() {
        let full = ramp(600, 512);
        let row = ramp(1, 512).squeeze(0).unwrap();
        let column = ramp(600, 1);
        let middle = ramp(300, 1);
        let batched = Tensor::cat(&[&full, &full], 0).unwrap().reshape((4, 300, 512)).unwrap();
        let pairs = [
            (full.clone(), full.clone()),
            (full.clone(), row.clone()),
            (row.clone(), full.clone()),
            (full.clone(), column.clone()),
            (column.clone(), row.clone()),
            (batched.clone(), middle.clone()),
            (middle, batched),
            (full.t().unwrap(), column.t().unwrap()),
        ];
        for (lhs, rhs) in &pairs {
            for op in [BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul, BinaryOp::Div] {
                let candle = match op {
                    BinaryOp::Add => lhs.broadcast_add(rhs),
                    BinaryOp::Sub => lhs.broadcast_sub(rhs),
                    BinaryOp::Mul => lhs.broadcast_mul(rhs),
                    BinaryOp::Div => lhs.broadcast_div(rhs),
                }
                .unwrap();
                let ours = broadcast_binary(op, lhs, rhs).unwrap();
                assert_eq!(ours.dims(), candle.dims());
                assert!(bits(&ours) == bits(&candle), "{} of {:?} and {:?}", op.name(), lhs.dims(), rhs.dims());
            }
        }
    }

    /// The exact element functions, NaN and signed zeros among the inputs: candle's bits.
    #[test]
    fn exact_cpu_kernels_give_candle_s_bits() {
        let specials = Tensor::new(&[f32::NAN, -0.0, 0.0, f32::INFINITY, f32::NEG_INFINITY], &Device::Cpu).unwrap();
        let values = Tensor::cat(&[&ramp(1, 1 << 19).flatten_all().unwrap(), &specials], 0).unwrap();
        type CandleKernel = fn(&Tensor) -> candle_core::Result<Tensor>;
        let cases: [(CpuKernel, CandleKernel); 5] = [
            (CpuKernel::Neg, Tensor::neg),
            (CpuKernel::Abs, Tensor::abs),
            (CpuKernel::Relu, Tensor::relu),
            (CpuKernel::Sqrt, Tensor::sqrt),
            (CpuKernel::Recip, Tensor::recip),
        ];
        for (kernel, candle) in cases {
            let ours = kernel.apply(&values).unwrap();
            assert!(bits(&ours) == bits(&candle(&values).unwrap()), "{}", candle_core::CustomOp1::name(&kernel));
        }
        assert_eq!(values.dtype(), DType::F32);
    }
}
