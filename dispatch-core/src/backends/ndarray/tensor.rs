//! The ndarray tensor primitive: a shared, possibly strided array, so clones, transposes and narrows copy nothing.

use std::borrow::Cow;

use ndarray::{ArcArrayD, ArrayD, ArrayViewD, ArrayViewMutD, IxDyn, NdFloat, ShapeError};

use super::buffers::{self, Reused};
use crate::dtype::DType;
use crate::error::{Error, RankRule, Result};
use crate::kernels::Kernels;
use crate::kernels::matmul::Gemm;
use crate::memory;
use crate::shape::Shape;

/// A float tensor of the [`NdArray`](super::NdArray) backend.
///
/// It holds a reference-counted `ndarray` array of rank 1 or more: of `f64` for [`DType::F64`], of `f32` for the
/// other dtypes. `F16` and `BF16` tensors compute in `f32` and round every result to their dtype, so they hold
/// only values of that dtype (at twice its memory). Layout ops (`swap_dims`, `narrow`) only change strides and
/// offsets, so the array is not always in standard (row-major) layout; every reader copes with that. A narrowed
/// tensor keeps its source's whole buffer alive.
#[derive(Clone, Debug)]
pub struct NdArrayTensor {
    values: FloatArray,
    dtype: DType,
}

/// A dropped tensor's storage goes to its thread's kept buffers (when nothing else shares it), for the next op of
/// that size to write into.
impl Drop for NdArrayTensor {
    fn drop(&mut self) {
        let len = match &self.values {
            FloatArray::F32(array) => array.len(),
            FloatArray::F64(array) => array.len(),
        };
        if !buffers::reused(len) {
            return;
        }
        // An empty array, which holds no element storage, stands in while the storage goes back.
        let empty = FloatArray::F32(ArcArrayD::from_elem(IxDyn(&[0]), 0.0));
        match std::mem::replace(&mut self.values, empty) {
            FloatArray::F32(array) => buffers::give_back(array),
            FloatArray::F64(array) => buffers::give_back(array),
        }
    }
}

/// The array of a float tensor, by the element type it computes in.
#[derive(Clone, Debug)]
pub(super) enum FloatArray {
    F32(ArcArrayD<f32>),
    F64(ArcArrayD<f64>),
}

/// The element types ndarray computes in; the generic ops are written once over it.
pub(super) trait Element: NdFloat + From<f32> + Reused + Kernels + Gemm {
    /// The array, as the tensor stores it.
    fn store(array: ArcArrayD<Self>) -> FloatArray;
    /// The array of this element type in `values`, if that is what they hold.
    fn stored(values: &FloatArray) -> Option<&ArcArrayD<Self>>;
    /// `value` rounded to this type.
    fn of_f64(value: f64) -> Self;

    /// This value rounded to `dtype` (a no-op for `F32` and `F64`): what every op's output of a half dtype holds.
    fn rounded_to(self, dtype: DType) -> Self {
        Self::of_f64(dtype.round(self.to_f64().unwrap_or(f64::NAN)))
    }
}

impl Element for f32 {
    fn store(array: ArcArrayD<f32>) -> FloatArray {
        FloatArray::F32(array)
    }

    fn stored(values: &FloatArray) -> Option<&ArcArrayD<f32>> {
        match values {
            FloatArray::F32(array) => Some(array),
            FloatArray::F64(_) => None,
        }
    }

    fn of_f64(value: f64) -> f32 {
        value as f32
    }
}

impl Element for f64 {
    fn store(array: ArcArrayD<f64>) -> FloatArray {
        FloatArray::F64(array)
    }

    fn stored(values: &FloatArray) -> Option<&ArcArrayD<f64>> {
        match values {
            FloatArray::F64(array) => Some(array),
            FloatArray::F32(_) => None,
        }
    }

    fn of_f64(value: f64) -> f64 {
        value
    }
}

/// `$body` with `$array` bound to the tensor's array and `E` naming its element type (`f32` or `f64`): an op
/// written once, compiled for both.
macro_rules! with_array {
    ($tensor:expr, |$array:ident| $body:expr) => {
        match $tensor.values() {
            $crate::backends::ndarray::tensor::FloatArray::F32($array) => {
                #[allow(dead_code)]
                type E = f32;
                $body
            }
            $crate::backends::ndarray::tensor::FloatArray::F64($array) => {
                #[allow(dead_code)]
                type E = f64;
                $body
            }
        }
    };
}
pub(super) use with_array;

/// `$body` with `E` naming the element type a tensor of `$dtype` computes in: for the ops that build a float tensor
/// from int or bool ones.
macro_rules! with_element {
    ($dtype:expr, $body:expr) => {
        if $dtype == $crate::DType::F64 {
            type E = f64;
            $body
        } else {
            type E = f32;
            $body
        }
    };
}
pub(super) use with_element;

impl NdArrayTensor {
    /// An op's output array as a tensor of `dtype`, rounded to it; ops only build arrays of rank 1 or more.
    pub(super) fn output<E: Element>(dtype: DType, mut array: ArrayD<E>) -> Self {
        if matches!(dtype, DType::F16 | DType::BF16) {
            array.mapv_inplace(|value| value.rounded_to(dtype));
        }
        Self { values: E::store(array.into_shared()), dtype }
    }

    /// A tensor of `dtype` over an array whose values it already holds, so nothing is rounded: a view of another
    /// tensor, its values copied, or values every dtype holds (0 and 1).
    pub(super) fn shared_as<E: Element>(dtype: DType, array: ArcArrayD<E>) -> Self {
        Self { values: E::store(array), dtype }
    }

    pub(super) fn values(&self) -> &FloatArray {
        &self.values
    }

    /// The array, to write an op's output over: only for an op its caller gave the tensor to.
    pub(super) fn values_mut(&mut self) -> &mut FloatArray {
        &mut self.values
    }

    /// The element type of the tensor.
    pub fn dtype(&self) -> DType {
        self.dtype
    }

    /// A scalar argument of an op on this tensor, rounded once to its dtype (then exact in the element it computes
    /// in).
    pub(super) fn scalar(&self, value: f64) -> f64 {
        self.dtype.round(value)
    }

    pub(super) fn from_f64_vec(data: Vec<f64>, shape: &Shape, dtype: DType) -> Result<Self> {
        let op = "from_f64_vec";
        shape.check_tensor_shape(op)?;
        shape.check_data_len(op, data.len())?;
        let array = if dtype == DType::F64 {
            FloatArray::F64(array_of(op, shape.dims(), data)?.into_shared())
        } else {
            let mut narrowed = memory::try_vec(op, data.len())?;
            narrowed.extend(data.into_iter().map(|value| dtype.round(value) as f32));
            FloatArray::F32(array_of(op, shape.dims(), narrowed)?.into_shared())
        };
        Ok(Self { values: array, dtype })
    }

    pub(super) fn from_vec(data: Vec<f32>, shape: &Shape) -> Result<Self> {
        shape.check_tensor_shape("from_vec")?;
        shape.check_data_len("from_vec", data.len())?;
        Ok(Self { values: FloatArray::F32(array_of("from_vec", shape.dims(), data)?.into_shared()), dtype: DType::F32 })
    }

    pub(super) fn full(shape: &Shape, value: f64, dtype: DType) -> Result<Self> {
        shape.check_tensor_shape("full")?;
        let count = shape.num_elements();
        let values = if dtype == DType::F64 {
            FloatArray::F64(array_of("full", shape.dims(), memory::try_filled("full", count, value)?)?.into_shared())
        } else {
            FloatArray::F32(
                array_of("full", shape.dims(), memory::try_filled("full", count, dtype.round(value) as f32)?)?
                    .into_shared(),
            )
        };
        Ok(Self { values, dtype })
    }

    /// The same values in `dtype`, each rounded to it; shares the array when only the label changes.
    pub(super) fn cast(&self, dtype: DType) -> Result<Self> {
        let elements = self.shape().num_elements();
        if dtype == DType::F64 {
            check_output::<f64>("cast", elements)?
        } else {
            check_output::<f32>("cast", elements)?
        }
        let values = match (&self.values, dtype) {
            (FloatArray::F32(array), DType::F64) => FloatArray::F64(array.mapv(f64::from).into_shared()),
            (FloatArray::F64(array), DType::F64) => FloatArray::F64(array.clone()),
            (FloatArray::F64(array), _) => FloatArray::F32(array.mapv(|value| dtype.round(value) as f32).into_shared()),
            // Every f16 and bf16 value is an f32, so widening only relabels.
            (FloatArray::F32(array), DType::F32) => FloatArray::F32(array.clone()),
            (FloatArray::F32(array), _) if self.dtype == dtype => FloatArray::F32(array.clone()),
            (FloatArray::F32(array), _) => FloatArray::F32(array.mapv(|value| dtype.round_f32(value)).into_shared()),
        };
        Ok(Self { values, dtype })
    }

    /// Wraps an `f32` `ndarray` array as an `F32` tensor; arrays of rank 0 are rejected, since a scalar tensor has
    /// shape `[1]`.
    pub fn from_array(array: ArrayD<f32>) -> Result<Self> {
        check_rank("NdArrayTensor::from_array", array.ndim())?;
        Ok(Self::output(DType::F32, array))
    }

    /// Wraps an `f64` `ndarray` array as an `F64` tensor; see [`from_array`](Self::from_array).
    pub fn from_array_f64(array: ArrayD<f64>) -> Result<Self> {
        check_rank("NdArrayTensor::from_array_f64", array.ndim())?;
        Ok(Self::output(DType::F64, array))
    }

    /// A read-only view of the elements of a tensor stored as `f32` (every dtype but `F64`), in whatever layout
    /// the tensor has.
    pub fn view(&self) -> Option<ArrayViewD<'_, f32>> {
        f32::stored(&self.values).map(|array| array.view())
    }

    /// A read-only view of the elements of an `F64` tensor.
    pub fn view_f64(&self) -> Option<ArrayViewD<'_, f64>> {
        f64::stored(&self.values).map(|array| array.view())
    }

    /// The dimensions of the array, outermost first.
    pub fn shape(&self) -> Shape {
        with_array!(self, |array| Shape::new(array.shape()))
    }

    /// The elements of an `F32` tensor in row-major order; [`Error::UnexpectedDType`] for another dtype (read those
    /// with [`to_f64_vec`](Self::to_f64_vec)), [`Error::OutOfMemory`] if the copy cannot be allocated.
    pub fn to_vec(&self) -> Result<Vec<f32>> {
        DType::check_expected("to_vec", DType::F32, self.dtype)?;
        match &self.values {
            FloatArray::F32(array) => row_major_values("to_vec", array),
            FloatArray::F64(array) => row_major_converted("to_vec", array, |value| value as f32),
        }
    }

    /// The elements in row-major order as `f64`, exact for every dtype.
    pub fn to_f64_vec(&self) -> Result<Vec<f64>> {
        match &self.values {
            FloatArray::F32(array) => row_major_converted("to_f64_vec", array, f64::from),
            FloatArray::F64(array) => row_major_values("to_f64_vec", array),
        }
    }
}

/// The arrays of two operands of `op`, of one element type: `$body` with `$lhs`, `$rhs` bound to them and `E` to
/// the type, or an [`Error::DTypeMismatch`] naming both dtypes.
macro_rules! with_arrays {
    ($op:expr, $left:expr, $right:expr, |$lhs:ident, $rhs:ident| $body:expr) => {{
        use $crate::backends::ndarray::tensor::FloatArray;
        let (left, right): (&NdArrayTensor, &NdArrayTensor) = ($left, $right);
        match $crate::dtype::DType::check_same($op, left.dtype(), right.dtype())
            .map(|()| (left.values(), right.values()))
        {
            Ok((FloatArray::F32($lhs), FloatArray::F32($rhs))) => {
                #[allow(dead_code)]
                type E = f32;
                $body
            }
            Ok((FloatArray::F64($lhs), FloatArray::F64($rhs))) => {
                #[allow(dead_code)]
                type E = f64;
                $body
            }
            // One dtype is stored one way, so this is only the error of the check.
            Ok(_) => Err($crate::Error::DTypeMismatch { op: $op, lhs: left.dtype(), rhs: right.dtype() }),
            Err(error) => Err(error),
        }
    }};
}
pub(super) use with_arrays;

/// The arrays of every tensor of `tensors` as element type `E`, once they are known to share one dtype.
pub(super) fn arrays_of<'a, E: Element>(
    op: &'static str,
    tensors: &'a [NdArrayTensor],
) -> Result<Vec<&'a ArcArrayD<E>>> {
    let mut arrays = memory::try_vec(op, tensors.len())?;
    for tensor in tensors {
        let first = tensors.first().map_or(tensor.dtype, |first| first.dtype);
        DType::check_same(op, first, tensor.dtype)?;
        arrays.push(E::stored(&tensor.values).ok_or(Error::DTypeMismatch { op, lhs: first, rhs: tensor.dtype })?);
    }
    Ok(arrays)
}

fn check_rank(op: &'static str, rank: usize) -> Result<()> {
    if rank == 0 {
        return Err(Error::unexpected_rank(op, "an array", RankRule::AtLeast(1), &Shape::new([])));
    }
    Ok(())
}

/// The elements of any array in row-major order, copied fallibly: in one piece when the array is row-major already.
pub(super) fn row_major_values<T: Copy>(op: &'static str, array: &ArcArrayD<T>) -> Result<Vec<T>> {
    if let Some(row_major) = array.as_slice() {
        return memory::try_copy(op, row_major);
    }
    row_major_converted(op, array, |value| value)
}

/// The elements of `view` in row-major order as one slice: its own buffer when it is in standard layout, else a
/// fallible copy. How the ops that walk an operand by offsets (indexing, windows) read it.
pub(super) fn row_major<'a, T: Copy>(op: &'static str, view: ArrayViewD<'a, T>) -> Result<Cow<'a, [T]>> {
    if let Some(row_major) = view.to_slice() {
        return Ok(Cow::Borrowed(row_major));
    }
    let mut values = memory::try_vec(op, view.len())?;
    let Some(&first) = view.first() else { return Ok(Cow::Owned(values)) };
    // `assign` copies by whole inner rows: an element-by-element walk of a permuted view took about 30 ns an element.
    values.resize(view.len(), first);
    ArrayViewMutD::from_shape(view.raw_dim(), &mut values[..]).map_err(|error| ndarray_error(op, error))?.assign(&view);
    Ok(Cow::Owned(values))
}

/// The elements of an array in row-major order, each converted by `convert`.
fn row_major_converted<T: Copy, U>(op: &'static str, array: &ArcArrayD<T>, convert: impl Fn(T) -> U) -> Result<Vec<U>> {
    let mut values = memory::try_vec(op, array.len())?;
    values.extend(array.iter().map(|&value| convert(value)));
    Ok(values)
}

/// Checks that an op's output of `elements` values of type `T` can be allocated, before ndarray allocates it (and
/// would abort the process if it could not).
pub(super) fn check_output<T>(op: &'static str, elements: usize) -> Result<()> {
    memory::check_room(op, elements, size_of::<T>())
}

/// An output array of `dims` from its row-major values.
pub(super) fn array_of<E>(op: &'static str, dims: &[usize], values: Vec<E>) -> Result<ArrayD<E>> {
    ArrayD::from_shape_vec(IxDyn(dims), values).map_err(|error| ndarray_error(op, error))
}

/// An error `ndarray` reported although our own checks passed.
pub(super) fn ndarray_error(op: &'static str, error: ShapeError) -> Error {
    Error::backend("ndarray", op, error)
}
