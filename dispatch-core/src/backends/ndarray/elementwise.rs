//! Element-wise ops: binary ops broadcast with numpy rules, unary ops map every element. Each is written once,
//! generic over the element type, and the result keeps the operands' dtype.

use std::borrow::Cow;
use std::mem::MaybeUninit;

use ndarray::{ArcArrayD, ArrayD, ArrayView1, ArrayViewD, ArrayViewMut1, ArrayViewMutD, Axis, Dimension, IxDyn, Zip};
use num_traits::Float;

use super::broadcast::broadcast_pair;
use super::buffers;
use super::parallel::zip_for_each;
use super::tensor::{Element, NdArrayTensor, check_output, ndarray_error, row_major, with_array, with_arrays};
use crate::backend::{AdamStep, adam_output_shape};
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::kernels::{
    AdamConstants, Kernels, all_nan, gelu_derivative, gelu_derivative_constants, map_in_place, map_slice, zip_in_place,
    zip_slices,
};
use crate::parallel::{self, Work};

/// The array of `|$arg, ...| $body` over the zipped arrays' elements (references to them), which share one shape:
/// across threads when large (`$work`), and `Err` only if the output's shape is refused. A large output with a
/// row-major operand (`$row_major`) is written row-major into a kept buffer; any other takes the operands' memory
/// order (a permuted tensor stays permuted, as walking it row-major would stride through it), in fresh memory.
macro_rules! zip_collect {
    ($op:expr, $work:expr, $row_major:expr, [$first:expr $(, $rest:expr)*], |$($arg:pat_param),+| $body:expr) => {{
        let first = $first;
        let len = first.len();
        if $crate::backends::ndarray::buffers::reused(len) && $row_major {
            $crate::backends::ndarray::buffers::written_whole(first.raw_dim())
                .map_err(|error| $crate::backends::ndarray::tensor::ndarray_error($op, error))
                .map(|mut output| {
                    $crate::backends::ndarray::parallel::zip_for_each!(
                        $work,
                        len,
                        ::ndarray::Zip::from(&mut output).and(first)$(.and($rest))*,
                        |out: &mut _, $($arg),+| *out = $body
                    );
                    output
                })
        } else {
            Ok($crate::backends::ndarray::parallel::zip_map_collect!(
                $work,
                len,
                ::ndarray::Zip::from(first)$(.and($rest))*,
                |$($arg),+| $body
            ))
        }
    }};
}
pub(super) use zip_collect;

/// `f` of the operands broadcast to their common shape: by the slice loops that vectorise when both are row-major
/// and large enough to keep, or when the work is heavy; else as `zip_collect!` writes it.
pub(super) fn zip_arrays<E: Element>(
    op: &'static str,
    dtype: DType,
    lhs: &ArcArrayD<E>,
    rhs: &ArcArrayD<E>,
    work: Work,
    f: impl Fn(E, E) -> E + Sync + Send,
) -> Result<NdArrayTensor> {
    let (lhs, rhs) = broadcast_pair(op, lhs, rhs)?;
    check_output::<E>(op, lhs.len())?;
    if let (Some(a), Some(b), true) = (lhs.as_slice(), rhs.as_slice(), buffers::reused(lhs.len())) {
        return zipped_slices(op, dtype, lhs.raw_dim(), (a, b), work, &f);
    }
    if let Some(output) = zip_by_rows(op, &lhs, &rhs, work, &f)? {
        return Ok(NdArrayTensor::output(dtype, output));
    }
    if matches!(work, Work::Heavy) {
        // One element at a time, each step of a kernel's polynomial would be a call to `fma` (about 50 ns an element
        // where the slice loops take under 1): the operands are copied row-major instead, broadcasts expanded.
        let (a, b) = (row_major(op, lhs.view())?, row_major(op, rhs.view())?);
        return zipped_slices(op, dtype, lhs.raw_dim(), (&a, &b), work, &f);
    }
    let row_major = lhs.is_standard_layout() || rhs.is_standard_layout();
    let output = zip_collect!(op, work, row_major, [&lhs, &rhs], |&a, &b| f(a, b))?;
    Ok(NdArrayTensor::output(dtype, output))
}

/// `f` of row-major operands of `dims`'s length into a row-major output, by the slice loops.
fn zipped_slices<E: Element>(
    op: &'static str,
    dtype: DType,
    dims: IxDyn,
    (a, b): (&[E], &[E]),
    work: Work,
    f: &(impl Fn(E, E) -> E + Sync + Send),
) -> Result<NdArrayTensor> {
    // SAFETY: a part gets as many inputs of each side as it has outputs (else NaN), and `zip_slices` writes one
    // output per pair.
    let output = unsafe {
        written_in_parts(op, dims, work, |start, part| {
            let range = start..start.saturating_add(part.len());
            match (a.get(range.clone()), b.get(range)) {
                (Some(a), Some(b)) => zip_slices(work, a, b, part, f),
                _ => all_nan::<E, _>(part),
            }
        })?
    };
    Ok(NdArrayTensor::output(dtype, output))
}

/// Rows of the last axis at least this long go through the slice loops one row at a time.
const ROWS_FROM_WIDTH: usize = 16;

/// `f` of operands broadcast along their leading axes (a bias, a row's statistic) row by row, with the slice loops
/// that vectorise: each operand's last axis is contiguous or a broadcast value. `None` where they are not, or where
/// rows are too short or the output too small to keep.
fn zip_by_rows<E: Element>(
    op: &'static str,
    lhs: &ArrayViewD<'_, E>,
    rhs: &ArrayViewD<'_, E>,
    work: Work,
    f: &(impl Fn(E, E) -> E + Sync + Send),
) -> Result<Option<ArrayD<E>>> {
    let last = Axis(lhs.ndim().saturating_sub(1));
    let contiguous_or_broadcast = |view: &ArrayViewD<'_, E>| matches!(view.strides().last(), Some(0 | 1));
    let width = lhs.len_of(last);
    if width < ROWS_FROM_WIDTH
        || !buffers::reused(lhs.len())
        || !contiguous_or_broadcast(lhs)
        || !contiguous_or_broadcast(rhs)
    {
        return Ok(None);
    }
    let mut output = buffers::written_whole(lhs.raw_dim()).map_err(|error| ndarray_error(op, error))?;
    let rows = Zip::from(output.lanes_mut(last)).and(lhs.lanes(last)).and(rhs.lanes(last));
    zip_for_each!(work, lhs.len(), rows, |mut outputs: ArrayViewMut1<'_, E>,
                                          a: ArrayView1<'_, E>,
                                          b: ArrayView1<'_, E>| {
        // The output is row-major, so its rows are slices.
        let Some(outputs) = outputs.as_slice_mut() else { return };
        match (a.as_slice(), b.as_slice(), a.first(), b.first()) {
            (Some(a), Some(b), ..) => zip_slices(work, a, b, outputs, f),
            (Some(a), None, _, Some(&b)) => map_slice(work, a, outputs, |a| f(a, b)),
            (None, Some(b), Some(&a), _) => map_slice(work, b, outputs, |b| f(a, b)),
            (.., Some(&a), Some(&b)) => outputs.fill(f(a, b)),
            _ => {}
        }
    });
    Ok(Some(output))
}

/// `f` of every element: by the slice loop that vectorises when the array is row-major and large enough to keep, or
/// when the work is heavy; else as `zip_collect!` writes it.
pub(super) fn map_array<E: Element>(
    op: &'static str,
    dtype: DType,
    array: &ArcArrayD<E>,
    work: Work,
    f: impl Fn(E) -> E + Sync + Send,
) -> Result<NdArrayTensor> {
    map_array_by(op, dtype, array, work, &f, |inputs, outputs| map_slice(work, inputs, outputs, &f))
}

/// `map_array`, with `slices` writing `f` of a row-major stretch of inputs into outputs of the same length: for an op
/// whose slice form is more than `f` in a loop (the GELU's left tail).
fn map_array_by<E: Element>(
    op: &'static str,
    dtype: DType,
    array: &ArcArrayD<E>,
    work: Work,
    f: impl Fn(E) -> E + Sync + Send,
    slices: impl Fn(&[E], &mut [MaybeUninit<E>]) + Sync + Send,
) -> Result<NdArrayTensor> {
    check_output::<E>(op, array.len())?;
    let values = match (array.as_slice(), buffers::reused(array.len()), work) {
        (Some(values), true, _) => Some(Cow::Borrowed(values)),
        // One element at a time, each step of a kernel's polynomial would be a call to `fma` (about 50 ns an element
        // where the slice loops take under 1): a small or strided array goes through them too, copied row-major.
        (.., Work::Heavy) => Some(row_major(op, array.view())?),
        _ => None,
    };
    if let Some(values) = values {
        // SAFETY: a part gets as many inputs as it has outputs (else NaN), and `slices` writes one output per input.
        let output = unsafe {
            written_in_parts(op, array.raw_dim(), work, |start, part| {
                match values.get(start..start.saturating_add(part.len())) {
                    Some(inputs) => slices(inputs, part),
                    None => all_nan::<E, _>(part),
                }
            })?
        };
        return Ok(NdArrayTensor::output(dtype, output));
    }
    let output = zip_collect!(op, work, array.is_standard_layout(), [array], |&x| f(x))?;
    Ok(NdArrayTensor::output(dtype, output))
}

/// A row-major array of `dims` in a kept buffer (or a fresh one), every element written by `write(start, part)`,
/// which fills `part` with the elements from index `start` on (from row-major operands, by the slice loops that
/// vectorise); parts across threads when `work` is worth splitting. Neither kind of buffer is cleared first: a fresh
/// one would be cleared by the allocator, about 3% of the GPT step (`memset` in a profile).
///
/// # Safety
///
/// `write` writes every element of each part it is handed.
pub(super) unsafe fn written_in_parts<E: Element>(
    op: &'static str,
    dims: IxDyn,
    work: Work,
    write: impl Fn(usize, &mut [MaybeUninit<E>]) + Sync + Send,
) -> Result<ArrayD<E>> {
    let len = dims.size();
    // SAFETY: `write` writes every element of each part, as this function's caller promises.
    let values = unsafe { parallel::written_in_parts(buffers::buffer(len), len, work, write) }
        .ok_or_else(|| Error::backend("ndarray", op, "an output buffer shorter than asked"))?;
    ArrayD::from_shape_vec(dims, values).map_err(|error| ndarray_error(op, error))
}

/// `adam_step` in one pass (`kernels::AdamConstants::write_rows`), each step rounded to the dtype as its op would
/// round it (a no-op for `F32` and `F64`): the composed default's values bit for bit, without its fourteen
/// intermediate tensors. Operands that are not row-major are copied row-major first.
pub(super) fn adam_step(
    parameter: &NdArrayTensor,
    gradient: &NdArrayTensor,
    moments: &NdArrayTensor,
    options: AdamStep,
) -> Result<NdArrayTensor> {
    let op = "adam_step";
    let dtype = parameter.dtype();
    DType::check_same(op, dtype, moments.dtype())?;
    let output = IxDyn(adam_output_shape(&parameter.shape(), &gradient.shape(), &moments.shape())?.dims());
    let scalars = options.scalars(op)?;
    with_arrays!(op, parameter, gradient, |p, g| {
        let moments =
            E::stored(moments.values()).ok_or(Error::DTypeMismatch { op, lhs: dtype, rhs: moments.dtype() })?;
        let constants = AdamConstants::new(&scalars, |value| E::of_f64(parameter.scalar(value)));
        adam_rows::<E>(dtype, (p, g, moments), &constants, output)
    })
}

/// The `[3, ...]` rows of `adam_step` from its operands, made row-major first where they are not.
fn adam_rows<E: Element>(
    dtype: DType,
    (p, g, moments): (&ArcArrayD<E>, &ArcArrayD<E>, &ArcArrayD<E>),
    constants: &AdamConstants<E>,
    output: IxDyn,
) -> Result<NdArrayTensor> {
    let op = "adam_step";
    check_output::<E>(op, output.size())?;
    let (p, g, moments) = (row_major(op, p.view())?, row_major(op, g.view())?, row_major(op, moments.view())?);
    let (first, second) = moments.split_at(p.len().min(moments.len()));
    let operands = (&p[..], &g[..], first, second);
    // SAFETY: `write_rows` writes every output it is handed (NaN past the three rows).
    let values = if matches!(dtype, DType::F16 | DType::BF16) {
        let round = move |value: E| value.rounded_to(dtype);
        unsafe {
            written_in_parts::<E>(op, output, Work::Light, |start, part| {
                constants.write_rows(operands, start, part, round)
            })?
        }
    } else {
        // F32 and F64 round nothing, and a rounding call per step would keep the loop from vectorising.
        unsafe {
            written_in_parts::<E>(op, output, Work::Light, |start, part| {
                constants.write_rows(operands, start, part, |y| y)
            })?
        }
    };
    Ok(NdArrayTensor::output(dtype, values))
}

/// The exact GELU of every element: the kernels' branch-free form over a row-major tensor, then its left tail.
pub(super) fn gelu(tensor: &NdArrayTensor) -> Result<NdArrayTensor> {
    with_array!(tensor, |array| map_array_by::<E>(
        "gelu",
        tensor.dtype(),
        array,
        Work::Heavy,
        E::gelu_of,
        E::gelu_slice
    ))
}

/// `$f` (a closure of one element of type `E`) of every element of the tensor; `heavy` before the op's name marks
/// a costly `$f` (a transcendental function), which is split across threads on smaller tensors.
macro_rules! unary {
    (heavy $op:literal, $tensor:expr, $f:expr) => {
        $crate::backends::ndarray::elementwise::unary!(@ $crate::parallel::Work::Heavy, $op, $tensor, $f)
    };
    ($op:literal, $tensor:expr, $f:expr) => {
        $crate::backends::ndarray::elementwise::unary!(@ $crate::parallel::Work::Light, $op, $tensor, $f)
    };
    (@ $work:expr, $op:literal, $tensor:expr, $f:expr) => {{
        let tensor: &NdArrayTensor = $tensor;
        $crate::backends::ndarray::tensor::with_array!(tensor, |array| {
            $crate::backends::ndarray::elementwise::map_array::<E>($op, tensor.dtype(), array, $work, $f)
        })
    }};
}
pub(super) use unary;

/// `$f` (a closure of two elements of type `E`) of the two tensors, broadcasting; they must share a dtype.
macro_rules! binary {
    ($op:literal, $lhs:expr, $rhs:expr, $f:expr) => {{
        let lhs: &NdArrayTensor = $lhs;
        $crate::backends::ndarray::tensor::with_arrays!($op, lhs, $rhs, |a, b| {
            $crate::backends::ndarray::elementwise::zip_arrays::<E>(
                $op,
                lhs.dtype(),
                a,
                b,
                $crate::parallel::Work::Light,
                $f,
            )
        })
    }};
}
pub(super) use binary;

/// `binary!` for an op its caller gave `$lhs` to: written over `$lhs`'s elements where they can take the output
/// (`zip_over`), else as `binary!` writes it, in new memory.
macro_rules! binary_into {
    ($op:literal, $lhs:expr, $rhs:expr, $f:expr) => {{
        use $crate::backends::ndarray::tensor::FloatArray;
        let (mut lhs, rhs): (NdArrayTensor, &NdArrayTensor) = ($lhs, $rhs);
        let dtype = lhs.dtype();
        let written = dtype == rhs.dtype()
            && match (lhs.values_mut(), rhs.values()) {
                (FloatArray::F32(a), FloatArray::F32(b)) => {
                    #[allow(dead_code)]
                    type E = f32;
                    $crate::backends::ndarray::elementwise::zip_over::<E>(dtype, a, b, $f)
                }
                (FloatArray::F64(a), FloatArray::F64(b)) => {
                    #[allow(dead_code)]
                    type E = f64;
                    $crate::backends::ndarray::elementwise::zip_over::<E>(dtype, a, b, $f)
                }
                _ => false,
            };
        if written { Ok(lhs) } else { $crate::backends::ndarray::elementwise::binary!($op, &lhs, rhs, $f) }
    }};
}
pub(super) use binary_into;

/// `unary!` for an op its caller gave `$tensor` to: written over its elements where they can take the output
/// (`map_over`), else as `unary!` writes it, in new memory.
macro_rules! unary_into {
    ($op:literal, $tensor:expr, $f:expr) => {{
        use $crate::backends::ndarray::tensor::FloatArray;
        let mut tensor: NdArrayTensor = $tensor;
        let dtype = tensor.dtype();
        let written = match tensor.values_mut() {
            FloatArray::F32(array) => {
                #[allow(dead_code)]
                type E = f32;
                $crate::backends::ndarray::elementwise::map_over::<E>(dtype, array, $f)
            }
            FloatArray::F64(array) => {
                #[allow(dead_code)]
                type E = f64;
                $crate::backends::ndarray::elementwise::map_over::<E>(dtype, array, $f)
            }
        };
        if written { Ok(tensor) } else { $crate::backends::ndarray::elementwise::unary!($op, &tensor, $f) }
    }};
}
pub(super) use unary_into;

/// Writes `f` of `lhs` and `rhs` over `lhs`'s elements when they can take the output: nothing else shares them and
/// `rhs` broadcasts into `lhs`'s shape (the output's shape is then `lhs`'s). Each result is rounded to `dtype` as
/// `NdArrayTensor::output` rounds a new one, so the values are those the op gives in new memory. `false`, with
/// nothing written, where it cannot.
pub(super) fn zip_over<E: Element>(
    dtype: DType,
    lhs: &mut ArcArrayD<E>,
    rhs: &ArcArrayD<E>,
    f: impl Fn(E, E) -> E + Sync + Send,
) -> bool {
    if !lhs.is_unique() {
        return false;
    }
    let Some(rhs) = rhs.broadcast(lhs.raw_dim()) else { return false };
    // Unique, so the mutable view writes the array's own memory (a shared one would be copied first).
    let lhs = lhs.view_mut();
    if matches!(dtype, DType::F16 | DType::BF16) {
        zip_views_over(lhs, rhs, |a, b| f(a, b).rounded_to(dtype));
    } else {
        // F32 and F64 round nothing, and a rounding call per element would keep the loop from vectorising.
        zip_views_over(lhs, rhs, f);
    }
    true
}

/// `f` of each element of `lhs` and of `rhs` (of `lhs`'s shape) written over the first: both row-major as one pass
/// over two slices, else row by row of the last axis, by the slice loops that vectorise where a row is contiguous
/// and `rhs`'s is too or is one broadcast value.
fn zip_views_over<E: Element>(
    mut lhs: ArrayViewMutD<'_, E>,
    rhs: ArrayViewD<'_, E>,
    f: impl Fn(E, E) -> E + Sync + Send,
) {
    let len = lhs.len();
    if let (Some(values), Some(others)) = (lhs.as_slice_mut(), rhs.as_slice()) {
        parallel::for_each_part(Work::Light, values, |start, part| {
            let others = others.get(start..start.saturating_add(part.len())).unwrap_or_default();
            zip_in_place(Work::Light, part, others, &f);
        });
        return;
    }
    let last = Axis(lhs.ndim().saturating_sub(1));
    let rows = Zip::from(lhs.lanes_mut(last)).and(rhs.lanes(last));
    zip_for_each!(Work::Light, len, rows, |mut values: ArrayViewMut1<'_, E>, others: ArrayView1<'_, E>| {
        let broadcast = others.strides() == [0];
        match (values.as_slice_mut(), others.as_slice(), others.first()) {
            (Some(values), Some(others), _) => zip_in_place(Work::Light, values, others, &f),
            (Some(values), None, Some(&other)) if broadcast => map_in_place(Work::Light, values, |x| f(x, other)),
            _ => Zip::from(values).and(others).for_each(|value, &other| *value = f(*value, other)),
        }
    });
}

/// `zip_over` for an op of one tensor: `f` of every element, written over it when nothing else shares it.
pub(super) fn map_over<E: Element>(dtype: DType, array: &mut ArcArrayD<E>, f: impl Fn(E) -> E + Sync + Send) -> bool {
    if !array.is_unique() {
        return false;
    }
    if matches!(dtype, DType::F16 | DType::BF16) {
        map_view_over(array.view_mut(), |x| f(x).rounded_to(dtype));
    } else {
        map_view_over(array.view_mut(), f);
    }
    true
}

/// `f` of every element written over it: in memory order by the slice loop where the elements are contiguous.
fn map_view_over<E: Element>(mut values: ArrayViewMutD<'_, E>, f: impl Fn(E) -> E + Sync + Send) {
    let len = values.len();
    match values.as_slice_memory_order_mut() {
        Some(values) => parallel::for_each_part(Work::Light, values, |_, part| map_in_place(Work::Light, part, &f)),
        None => zip_for_each!(Work::Light, len, Zip::from(values), |value: &mut E| *value = f(*value)),
    }
}

pub(super) fn relu<E: Float>(x: E) -> E {
    // `max` ignores NaN, as candle's relu does, so both backends map NaN to 0.
    x.max(E::zero())
}

pub(super) fn sigmoid<E: Float>(x: E) -> E {
    // The same expression as the candle backend, so both round alike; it saturates to 0 and 1 without NaN.
    E::one() / (E::one() + (-x).exp())
}

/// `gelu_backward` in one pass: the composed default's steps per element, each rounded to the dtype as its op would
/// round it (a no-op for `F32` and `F64`), so the values are the default's bit for bit, without its ten
/// intermediate tensors.
pub(super) fn gelu_backward(tensor: &NdArrayTensor, gradient: &NdArrayTensor) -> Result<NdArrayTensor> {
    with_arrays!("gelu_backward", tensor, gradient, |x, g| gelu_backward_of::<E>(tensor, x, g))
}

fn gelu_backward_of<E: Element>(tensor: &NdArrayTensor, x: &ArcArrayD<E>, g: &ArcArrayD<E>) -> Result<NdArrayTensor> {
    let dtype = tensor.dtype();
    let round = move |value: E| value.rounded_to(dtype);
    let constants = gelu_derivative_constants(|value| E::of_f64(tensor.scalar(value)));
    if matches!(dtype, DType::F16 | DType::BF16) {
        zip_arrays::<E>("gelu_backward", dtype, x, g, Work::Heavy, move |x, g| gelu_derivative(x, g, constants, round))
    } else {
        // F32 and F64 round nothing, and a rounding call per step would keep the loop from vectorising.
        zip_arrays::<E>("gelu_backward", dtype, x, g, Work::Heavy, move |x, g| gelu_derivative(x, g, constants, |y| y))
    }
}
