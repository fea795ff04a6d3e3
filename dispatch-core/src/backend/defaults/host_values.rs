//! What the host defaults share: reading and writing a tensor's values on the host in the dtype they compute in,
//! and the index arithmetic of broadcasting, strides and lanes.

use crate::backend::Backend;
use crate::dtype::DType;
use crate::error::Result;
use crate::memory;
use crate::shape::Shape;

// ---- host values: every default computes in `f64`, exact for every dtype, and returns the input's dtype ----

/// `values` of `shape` as a float tensor of `like`'s dtype on `like`'s device: how a host default returns its
/// output, so that an `F64` tensor stays `F64` and an `F16` one is rounded back to `F16`.
pub(crate) fn values_like<B: Backend>(values: Vec<f64>, shape: Shape, like: &B::FloatTensor) -> Result<B::FloatTensor> {
    B::from_f64_vec(values, shape, B::dtype(like), &B::device(like))
}

/// The element a hot host default (`unfold2d`, `fold2d`) computes a float tensor in: `f32` for an `F32` tensor, its
/// own values with nothing to convert, and `f64`, exact, for every other dtype.
pub(crate) trait HostFloat: num_traits::Float + Default + std::ops::AddAssign + 'static {
    /// The tensor's values.
    fn read<B: Backend>(tensor: &B::FloatTensor) -> Result<Vec<Self>>;
    /// `values` of `shape` as a tensor of `like`'s dtype and device.
    fn write<B: Backend>(values: Vec<Self>, shape: Shape, like: &B::FloatTensor) -> Result<B::FloatTensor>;
    /// `value` rounded to this type.
    fn of_f64(value: f64) -> Self;
}

impl HostFloat for f32 {
    fn read<B: Backend>(tensor: &B::FloatTensor) -> Result<Vec<f32>> {
        B::to_vec(tensor)
    }

    fn write<B: Backend>(values: Vec<f32>, shape: Shape, like: &B::FloatTensor) -> Result<B::FloatTensor> {
        B::from_vec(values, shape, &B::device(like))
    }

    fn of_f64(value: f64) -> f32 {
        value as f32
    }
}

impl HostFloat for f64 {
    fn read<B: Backend>(tensor: &B::FloatTensor) -> Result<Vec<f64>> {
        B::to_f64_vec(tensor)
    }

    fn write<B: Backend>(values: Vec<f64>, shape: Shape, like: &B::FloatTensor) -> Result<B::FloatTensor> {
        values_like::<B>(values, shape, like)
    }

    fn of_f64(value: f64) -> f64 {
        value
    }
}

/// `$body` with `$element` naming the [`HostFloat`] the tensor computes in on the host.
macro_rules! in_host_float {
    ($tensor:expr, |$element:ident| $body:expr) => {
        if <B as $crate::backend::Backend>::dtype($tensor) == $crate::DType::F32 {
            type $element = f32;
            $body
        } else {
            type $element = f64;
            $body
        }
    };
}
pub(crate) use in_host_float;

/// Two float operands of `op` share a dtype, or an [`Error::DTypeMismatch`](crate::error::Error::DTypeMismatch).
pub(crate) fn same_dtype<B: Backend>(op: &'static str, lhs: &B::FloatTensor, rhs: &B::FloatTensor) -> Result<()> {
    DType::check_same(op, B::dtype(lhs), B::dtype(rhs))
}

// ---- host arithmetic shared by the defaults below --------------------------------------------------------------

/// The row-major index into a tensor of shape `dims` that broadcasts to the row-major `index` of shape `out`.
pub(crate) fn broadcast_source(mut index: usize, out: &[usize], dims: &[usize]) -> usize {
    let offset = out.len() - dims.len();
    let (mut source, mut stride) = (0, 1);
    for (position, &size) in out.iter().enumerate().rev() {
        let coordinate = index % size.max(1);
        index /= size.max(1);
        if position >= offset {
            let dim = dims[position - offset];
            if dim != 1 {
                source += coordinate * stride;
            }
            stride *= dim;
        }
    }
    source
}

/// `f` of every pair of elements of `lhs` and `rhs` broadcast together (numpy rules), with the output's shape.
pub(crate) fn zip<T: Copy, S: Copy, U>(
    op: &'static str,
    (lhs, lhs_shape): (&[T], &Shape),
    (rhs, rhs_shape): (&[S], &Shape),
    f: impl Fn(T, S) -> Result<U>,
) -> Result<(Vec<U>, Shape)> {
    let shape = Shape::broadcast(op, lhs_shape, rhs_shape)?;
    let out = shape.dims();
    let mut values = memory::try_vec(op, shape.num_elements())?;
    for index in 0..shape.num_elements() {
        let a = lhs[broadcast_source(index, out, lhs_shape.dims())];
        let b = rhs[broadcast_source(index, out, rhs_shape.dims())];
        values.push(f(a, b)?);
    }
    Ok((values, shape))
}

/// `f` of every element of `values`, into a new buffer.
pub(crate) fn map<T: Copy, U>(op: &'static str, values: &[T], f: impl Fn(T) -> U) -> Result<Vec<U>> {
    let mut mapped = memory::try_vec(op, values.len())?;
    mapped.extend(values.iter().map(|&value| f(value)));
    Ok(mapped)
}

/// Row-major strides of `dims`.
pub(crate) fn strides(dims: &[usize]) -> Vec<usize> {
    let mut strides = vec![1; dims.len()];
    for axis in (0..dims.len().saturating_sub(1)).rev() {
        strides[axis] = strides[axis + 1] * dims[axis + 1];
    }
    strides
}

/// The sizes before `axis`, of it, and after it.
pub(crate) fn split_at_axis(shape: &Shape, axis: usize) -> (usize, usize, usize) {
    let dims = shape.dims();
    (dims[..axis].iter().product(), dims[axis], dims[axis + 1..].iter().product())
}

/// The lanes of `values` (shape `shape`) along `axis`: `f` of each lane's values, in the order of their positions.
pub(crate) fn lanes<V: Copy, T>(
    op: &'static str,
    values: &[V],
    shape: &Shape,
    axis: usize,
    mut f: impl FnMut(&[V]) -> T,
) -> Result<Vec<T>> {
    shape.check_axis(op, axis)?;
    let (outer, len, inner) = split_at_axis(shape, axis);
    let mut results = memory::try_vec(op, outer * inner)?;
    let mut lane = memory::try_vec(op, len)?;
    for o in 0..outer {
        for i in 0..inner {
            lane.clear();
            lane.extend((0..len).map(|k| values[(o * len + k) * inner + i]));
            results.push(f(&lane));
        }
    }
    Ok(results)
}
