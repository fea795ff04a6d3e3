//! The default bodies of the ops marked `= default` in the op list, which a backend may override. Most compute on
//! the host from the kind's primitives (`to_vec`, `from_vec`, `shape`, `device`): correct everywhere, and a place
//! for a backend to start before it writes a native kernel.

use std::sync::Arc;

pub use crate::backend::module_ops::{
    adaptive_avg_pool2d, avg_pool2d, conv_transpose2d, conv1d, conv2d, fold2d, max_pool2d, unfold2d,
};
use crate::backend::{Backend, HostOp, HostTensor};
use crate::error::{Error, Result};
use crate::shape::Shape;
use crate::{math, memory, random};

/// Seeded on the host, so the same seed gives the same values on every backend.
pub fn random_uniform<B: Backend>(
    shape: Shape,
    low: f32,
    high: f32,
    seed: u64,
    device: &B::Device,
) -> Result<B::FloatTensor> {
    let data = random::uniform(&shape, low, high, seed, "random_uniform")?;
    B::from_vec(data, shape, device)
}

/// Seeded on the host, like [`random_uniform`].
pub fn random_normal<B: Backend>(
    shape: Shape,
    mean: f32,
    std: f32,
    seed: u64,
    device: &B::Device,
) -> Result<B::FloatTensor> {
    let data = random::normal(&shape, mean, std, seed, "random_normal")?;
    B::from_vec(data, shape, device)
}

/// Through host memory: the values out, the op, the result back on the tensor's device.
pub fn host_op<B: Backend>(tensor: &B::FloatTensor, op: Arc<dyn HostOp>) -> Result<B::FloatTensor> {
    let input = HostTensor { data: B::to_vec(tensor)?, shape: B::shape(tensor) };
    let output = op.forward(input)?;
    B::from_vec(output.data, output.shape, &B::device(tensor))
}

// ---- host arithmetic shared by the defaults below --------------------------------------------------------------

/// The row-major index into a tensor of shape `dims` that broadcasts to the row-major `index` of shape `out`.
fn broadcast_source(mut index: usize, out: &[usize], dims: &[usize]) -> usize {
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
fn zip<T: Copy, S: Copy, U>(
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
fn map<T: Copy, U>(op: &'static str, values: &[T], f: impl Fn(T) -> U) -> Result<Vec<U>> {
    let mut mapped = memory::try_vec(op, values.len())?;
    mapped.extend(values.iter().map(|&value| f(value)));
    Ok(mapped)
}

/// The float comparisons, each tensor against tensor (broadcasting) and tensor against a scalar.
macro_rules! float_comparisons {
    ($($name:ident, $scalar_name:ident: $compare:expr;)*) => {$(
        /// On the host, broadcasting.
        pub fn $name<B: Backend>(lhs: &B::FloatTensor, rhs: &B::FloatTensor) -> Result<B::BoolTensor> {
            let (a, b) = (B::to_vec(lhs)?, B::to_vec(rhs)?);
            let compare: fn(f32, f32) -> bool = $compare;
            let (values, shape) =
                zip(stringify!($name), (&a, &B::shape(lhs)), (&b, &B::shape(rhs)), |x, y| Ok(compare(x, y)))?;
            B::bool_from_vec(values, shape, &B::device(lhs))
        }

        /// On the host.
        pub fn $scalar_name<B: Backend>(tensor: &B::FloatTensor, scalar: f32) -> Result<B::BoolTensor> {
            let compare: fn(f32, f32) -> bool = $compare;
            let values = map(stringify!($scalar_name), &B::to_vec(tensor)?, |x| compare(x, scalar))?;
            B::bool_from_vec(values, B::shape(tensor), &B::device(tensor))
        }
    )*};
}

float_comparisons! {
    eq, eq_scalar: |a, b| a == b;
    ne, ne_scalar: |a, b| a != b;
    lt, lt_scalar: |a, b| a < b;
    le, le_scalar: |a, b| a <= b;
    gt, gt_scalar: |a, b| a > b;
    ge, ge_scalar: |a, b| a >= b;
}

/// On the host: the three operands broadcast to one shape.
pub fn mask_where<B: Backend>(
    mask: &B::BoolTensor,
    on_true: &B::FloatTensor,
    on_false: &B::FloatTensor,
) -> Result<B::FloatTensor> {
    let op = "mask_where";
    let (mask_shape, true_shape, false_shape) = (B::bool_shape(mask), B::shape(on_true), B::shape(on_false));
    let shape = Shape::broadcast(op, &Shape::broadcast(op, &mask_shape, &true_shape)?, &false_shape)?;
    let (picks, a, b) = (B::bool_to_vec(mask)?, B::to_vec(on_true)?, B::to_vec(on_false)?);
    let out = shape.dims();
    let mut values = memory::try_vec(op, shape.num_elements())?;
    for index in 0..shape.num_elements() {
        let value = if picks[broadcast_source(index, out, mask_shape.dims())] {
            a[broadcast_source(index, out, true_shape.dims())]
        } else {
            b[broadcast_source(index, out, false_shape.dims())]
        };
        values.push(value);
    }
    B::from_vec(values, shape, &B::device(on_true))
}

/// On the host: `mask` broadcasts to `tensor`'s shape, which the output keeps.
pub fn mask_fill<B: Backend>(tensor: &B::FloatTensor, mask: &B::BoolTensor, value: f32) -> Result<B::FloatTensor> {
    let op = "mask_fill";
    let (shape, mask_shape) = (B::shape(tensor), B::bool_shape(mask));
    if Shape::broadcast(op, &shape, &mask_shape)? != shape {
        return Err(Error::ShapeMismatch { op, lhs: shape, rhs: mask_shape });
    }
    let (values, picks) = (B::to_vec(tensor)?, B::bool_to_vec(mask)?);
    let (filled, _) = zip(op, (&values, &shape), (&picks, &mask_shape), |x, fill| Ok(if fill { value } else { x }))?;
    B::from_vec(filled, shape, &B::device(tensor))
}

/// On the host.
pub fn arange<B: Backend>(start: i64, end: i64, device: &B::Device) -> Result<B::IntTensor> {
    let len = usize::try_from(i128::from(end) - i128::from(start)).unwrap_or(0);
    let mut values = memory::try_vec("arange", len)?;
    values.extend((0..len).map(|offset| start.wrapping_add(offset as i64)));
    B::int_from_vec(values, Shape::new([len]), device)
}

/// The int arithmetic of two tensors: on the host, broadcasting.
macro_rules! int_binaries {
    ($($(#[$doc:meta])* $name:ident: $combine:expr;)*) => {$(
        $(#[$doc])*
        pub fn $name<B: Backend>(lhs: &B::IntTensor, rhs: &B::IntTensor) -> Result<B::IntTensor> {
            let (a, b) = (B::int_to_vec(lhs)?, B::int_to_vec(rhs)?);
            let combine: fn(i64, i64) -> Result<i64> = $combine;
            let (values, shape) = zip(stringify!($name), (&a, &B::int_shape(lhs)), (&b, &B::int_shape(rhs)), combine)?;
            B::int_from_vec(values, shape, &B::int_device(lhs))
        }
    )*};
}

int_binaries! {
    /// On the host, broadcasting; wraps on overflow.
    int_add: |a, b| Ok(a.wrapping_add(b));
    /// On the host, broadcasting; wraps on overflow.
    int_sub: |a, b| Ok(a.wrapping_sub(b));
    /// On the host, broadcasting; wraps on overflow.
    int_mul: |a, b| Ok(a.wrapping_mul(b));
    /// On the host, broadcasting; a zero divisor or `i64::MIN / -1` is an `Err`.
    int_div: |a, b| a.checked_div(b).ok_or_else(|| int_division_error(a, b));
}

/// Why `a / b` has no `i64` result.
fn int_division_error(a: i64, b: i64) -> Error {
    match b {
        0 => Error::invalid("int_div", format!("division by zero ({a} / 0)")),
        _ => Error::invalid("int_div", format!("{a} / {b} overflows i64")),
    }
}

/// On the host; wraps on overflow.
pub fn int_add_scalar<B: Backend>(tensor: &B::IntTensor, scalar: i64) -> Result<B::IntTensor> {
    let values = map("int_add_scalar", &B::int_to_vec(tensor)?, |x| x.wrapping_add(scalar))?;
    B::int_from_vec(values, B::int_shape(tensor), &B::int_device(tensor))
}

/// On the host; wraps on overflow.
pub fn int_mul_scalar<B: Backend>(tensor: &B::IntTensor, scalar: i64) -> Result<B::IntTensor> {
    let values = map("int_mul_scalar", &B::int_to_vec(tensor)?, |x| x.wrapping_mul(scalar))?;
    B::int_from_vec(values, B::int_shape(tensor), &B::int_device(tensor))
}

/// On the host; wraps on overflow.
pub fn int_sum<B: Backend>(tensor: &B::IntTensor) -> Result<B::IntTensor> {
    let sum = B::int_to_vec(tensor)?.into_iter().fold(0i64, i64::wrapping_add);
    B::int_from_vec(vec![sum], Shape::new([1]), &B::int_device(tensor))
}

/// The int comparisons of two tensors: on the host, broadcasting.
macro_rules! int_comparisons {
    ($($name:ident: $compare:expr;)*) => {$(
        /// On the host, broadcasting.
        pub fn $name<B: Backend>(lhs: &B::IntTensor, rhs: &B::IntTensor) -> Result<B::BoolTensor> {
            let (a, b) = (B::int_to_vec(lhs)?, B::int_to_vec(rhs)?);
            let compare: fn(i64, i64) -> bool = $compare;
            let (values, shape) =
                zip(stringify!($name), (&a, &B::int_shape(lhs)), (&b, &B::int_shape(rhs)), |x, y| Ok(compare(x, y)))?;
            B::bool_from_vec(values, shape, &B::int_device(lhs))
        }
    )*};
}

int_comparisons! {
    int_eq: |a, b| a == b;
    int_lt: |a, b| a < b;
    int_le: |a, b| a <= b;
    int_gt: |a, b| a > b;
    int_ge: |a, b| a >= b;
}

/// On the host.
pub fn int_eq_scalar<B: Backend>(tensor: &B::IntTensor, scalar: i64) -> Result<B::BoolTensor> {
    let values = map("int_eq_scalar", &B::int_to_vec(tensor)?, |x| x == scalar)?;
    B::bool_from_vec(values, B::int_shape(tensor), &B::int_device(tensor))
}

/// Through the host: the same values, another shape.
pub fn int_reshape<B: Backend>(tensor: &B::IntTensor, shape: Shape) -> Result<B::IntTensor> {
    B::int_shape(tensor).check_reshape(&shape)?;
    B::int_from_vec(B::int_to_vec(tensor)?, shape, &B::int_device(tensor))
}

/// On the host.
pub fn int_to_float<B: Backend>(tensor: &B::IntTensor) -> Result<B::FloatTensor> {
    let values = map("int_to_float", &B::int_to_vec(tensor)?, |x| x as f32)?;
    B::from_vec(values, B::int_shape(tensor), &B::int_device(tensor))
}

/// On the host, broadcasting.
pub fn bool_and<B: Backend>(lhs: &B::BoolTensor, rhs: &B::BoolTensor) -> Result<B::BoolTensor> {
    let (a, b) = (B::bool_to_vec(lhs)?, B::bool_to_vec(rhs)?);
    let (values, shape) = zip("bool_and", (&a, &B::bool_shape(lhs)), (&b, &B::bool_shape(rhs)), |x, y| Ok(x && y))?;
    B::bool_from_vec(values, shape, &B::bool_device(lhs))
}

/// On the host, broadcasting.
pub fn bool_or<B: Backend>(lhs: &B::BoolTensor, rhs: &B::BoolTensor) -> Result<B::BoolTensor> {
    let (a, b) = (B::bool_to_vec(lhs)?, B::bool_to_vec(rhs)?);
    let (values, shape) = zip("bool_or", (&a, &B::bool_shape(lhs)), (&b, &B::bool_shape(rhs)), |x, y| Ok(x || y))?;
    B::bool_from_vec(values, shape, &B::bool_device(lhs))
}

/// On the host.
pub fn bool_not<B: Backend>(tensor: &B::BoolTensor) -> Result<B::BoolTensor> {
    let values = map("bool_not", &B::bool_to_vec(tensor)?, |x| !x)?;
    B::bool_from_vec(values, B::bool_shape(tensor), &B::bool_device(tensor))
}

/// On the host.
pub fn bool_any<B: Backend>(tensor: &B::BoolTensor) -> Result<B::BoolTensor> {
    let any = B::bool_to_vec(tensor)?.into_iter().any(|x| x);
    B::bool_from_vec(vec![any], Shape::new([1]), &B::bool_device(tensor))
}

/// On the host.
pub fn bool_all<B: Backend>(tensor: &B::BoolTensor) -> Result<B::BoolTensor> {
    let all = B::bool_to_vec(tensor)?.into_iter().all(|x| x);
    B::bool_from_vec(vec![all], Shape::new([1]), &B::bool_device(tensor))
}

/// On the host.
pub fn bool_to_int<B: Backend>(tensor: &B::BoolTensor) -> Result<B::IntTensor> {
    let values = map("bool_to_int", &B::bool_to_vec(tensor)?, i64::from)?;
    B::int_from_vec(values, B::bool_shape(tensor), &B::bool_device(tensor))
}

/// On the host.
pub fn bool_to_float<B: Backend>(tensor: &B::BoolTensor) -> Result<B::FloatTensor> {
    let values = map("bool_to_float", &B::bool_to_vec(tensor)?, |x| if x { 1.0 } else { 0.0 })?;
    B::from_vec(values, B::bool_shape(tensor), &B::bool_device(tensor))
}

/// The float functions of one tensor: on the host, element by element.
macro_rules! float_unaries {
    ($($(#[$doc:meta])* $name:ident: $function:expr;)*) => {$(
        $(#[$doc])*
        pub fn $name<B: Backend>(tensor: &B::FloatTensor) -> Result<B::FloatTensor> {
            let function: fn(f32) -> f32 = $function;
            let values = map(stringify!($name), &B::to_vec(tensor)?, function)?;
            B::from_vec(values, B::shape(tensor), &B::device(tensor))
        }
    )*};
}

float_unaries! {
    /// On the host.
    sqrt: f32::sqrt;
    /// On the host.
    recip: f32::recip;
    /// On the host.
    abs: f32::abs;
    /// On the host.
    sin: f32::sin;
    /// On the host.
    cos: f32::cos;
    /// On the host, in `f64`.
    erf: math::erf;
    /// On the host, in `f64`.
    gelu: math::gelu;
    /// On the host.
    silu: math::silu;
}

/// On the host; `min <= max` is required (NaN bounds are refused).
pub fn clamp<B: Backend>(tensor: &B::FloatTensor, min: f32, max: f32) -> Result<B::FloatTensor> {
    math::check_clamp_bounds(min, max)?;
    let values = map("clamp", &B::to_vec(tensor)?, |x| math::clamp(x, min, max))?;
    B::from_vec(values, B::shape(tensor), &B::device(tensor))
}

/// On the host, broadcasting.
pub fn maximum<B: Backend>(lhs: &B::FloatTensor, rhs: &B::FloatTensor) -> Result<B::FloatTensor> {
    let (a, b) = (B::to_vec(lhs)?, B::to_vec(rhs)?);
    let (values, shape) = zip("maximum", (&a, &B::shape(lhs)), (&b, &B::shape(rhs)), |x, y| Ok(math::maximum(x, y)))?;
    B::from_vec(values, shape, &B::device(lhs))
}

/// On the host, broadcasting.
pub fn minimum<B: Backend>(lhs: &B::FloatTensor, rhs: &B::FloatTensor) -> Result<B::FloatTensor> {
    let (a, b) = (B::to_vec(lhs)?, B::to_vec(rhs)?);
    let (values, shape) = zip("minimum", (&a, &B::shape(lhs)), (&b, &B::shape(rhs)), |x, y| Ok(math::minimum(x, y)))?;
    B::from_vec(values, shape, &B::device(lhs))
}

/// On the host: the first smallest entry of each lane along `axis`, skipping NaN.
pub fn argmin<B: Backend>(tensor: &B::FloatTensor, axis: usize) -> Result<B::IntTensor> {
    let shape = B::shape(tensor);
    shape.check_axis("argmin", axis)?;
    let dims = shape.dims();
    let (outer, len, inner) = (dims[..axis].iter().product::<usize>(), dims[axis], dims[axis + 1..].iter().product());
    if len == 0 {
        return Err(Error::invalid("argmin", format!("axis {axis} of shape {shape} is empty: there is no index")));
    }
    let values = B::to_vec(tensor)?;
    let mut indices = memory::try_vec("argmin", outer * inner)?;
    for o in 0..outer {
        for i in 0..inner {
            let lane = (0..len).map(|k| values[(o * len + k) * inner + i]);
            let best = lane.enumerate().fold(None, |best: Option<(usize, f32)>, (k, x)| match best {
                Some((_, y)) if x.is_nan() || x >= y => best,
                _ if x.is_nan() => best,
                _ => Some((k, x)),
            });
            indices.push(best.map_or(0, |(k, _)| k as i64));
        }
    }
    B::int_from_vec(indices, shape.with_dim("argmin", axis, 1)?, &B::device(tensor))
}

/// `exp(log_softmax(x))`, through the backend's own ops: on `Autodiff`, through its differentiable ones.
pub fn softmax<B: Backend>(tensor: &B::FloatTensor, axis: usize) -> Result<B::FloatTensor> {
    B::exp(&B::log_softmax(tensor, axis)?)
}

/// Checks that `axes` names each dimension of `shape` once; the permuted shape.
pub(crate) fn permuted_shape(shape: &Shape, axes: &[usize]) -> Result<Shape> {
    let mut seen = vec![false; shape.rank()];
    let valid = axes.len() == shape.rank()
        && axes.iter().all(|&axis| axis < shape.rank() && !std::mem::replace(&mut seen[axis], true));
    if !valid {
        return Err(Error::invalid(
            "permute",
            format!("axes {axes:?} are not a permutation of the {} dimensions of {shape}", shape.rank()),
        ));
    }
    Ok(Shape::new(axes.iter().map(|&axis| shape.dims()[axis]).collect::<Vec<_>>()))
}

/// Row-major strides of `dims`.
fn strides(dims: &[usize]) -> Vec<usize> {
    let mut strides = vec![1; dims.len()];
    for axis in (0..dims.len().saturating_sub(1)).rev() {
        strides[axis] = strides[axis + 1] * dims[axis + 1];
    }
    strides
}

/// On the host.
pub fn permute<B: Backend>(tensor: &B::FloatTensor, axes: Vec<usize>) -> Result<B::FloatTensor> {
    let shape = B::shape(tensor);
    let permuted = permuted_shape(&shape, &axes)?;
    let (values, input_strides) = (B::to_vec(tensor)?, strides(shape.dims()));
    let out = permuted.dims();
    let mut output = memory::try_vec("permute", permuted.num_elements())?;
    for index in 0..permuted.num_elements() {
        let (mut rest, mut source) = (index, 0);
        for (position, &size) in out.iter().enumerate().rev() {
            source += (rest % size) * input_strides[axes[position]];
            rest /= size;
        }
        output.push(values[source]);
    }
    B::from_vec(output, permuted, &B::device(tensor))
}

/// A `reshape` with a size-1 dimension inserted.
pub fn unsqueeze<B: Backend>(tensor: &B::FloatTensor, axis: usize) -> Result<B::FloatTensor> {
    let shape = B::shape(tensor);
    if axis > shape.rank() {
        return Err(Error::invalid(
            "unsqueeze",
            format!("axis {axis} is past the {} dimensions of {shape}", shape.rank()),
        ));
    }
    let mut dims = shape.dims().to_vec();
    dims.insert(axis, 1);
    B::reshape(tensor, Shape::new(dims))
}

/// A `reshape` with a size-1 dimension removed.
pub fn squeeze<B: Backend>(tensor: &B::FloatTensor, axis: usize) -> Result<B::FloatTensor> {
    let shape = B::shape(tensor);
    shape.check_axis("squeeze", axis)?;
    if shape.dims()[axis] != 1 || shape.rank() == 1 {
        return Err(Error::invalid(
            "squeeze",
            format!("axis {axis} of {shape} is not a size-1 dimension of a tensor of rank 2 or more"),
        ));
    }
    let mut dims = shape.dims().to_vec();
    dims.remove(axis);
    B::reshape(tensor, Shape::new(dims))
}

/// The indices of a 1-D int tensor, each checked against `len`, the size of the axis they index.
fn checked_indices<B: Backend>(op: &'static str, indices: &B::IntTensor, len: usize) -> Result<Vec<usize>> {
    let shape = B::int_shape(indices);
    if shape.rank() != 1 {
        return Err(Error::invalid(op, format!("needs 1-D indices, got shape {shape}")));
    }
    B::int_to_vec(indices)?
        .into_iter()
        .map(|index| {
            usize::try_from(index)
                .ok()
                .filter(|&index| index < len)
                .ok_or_else(|| Error::invalid(op, format!("index {index} is out of range for an axis of size {len}")))
        })
        .collect()
}

/// The sizes before `axis`, of it, and after it.
fn split_at_axis(shape: &Shape, axis: usize) -> (usize, usize, usize) {
    let dims = shape.dims();
    (dims[..axis].iter().product(), dims[axis], dims[axis + 1..].iter().product())
}

/// On the host.
pub fn index_select<B: Backend>(
    tensor: &B::FloatTensor,
    axis: usize,
    indices: &B::IntTensor,
) -> Result<B::FloatTensor> {
    let shape = B::shape(tensor);
    shape.check_axis("index_select", axis)?;
    let (outer, len, inner) = split_at_axis(&shape, axis);
    let picks = checked_indices::<B>("index_select", indices, len)?;
    let output_shape = shape.with_dim("index_select", axis, picks.len())?;
    let values = B::to_vec(tensor)?;
    let mut output = memory::try_vec("index_select", output_shape.num_elements())?;
    for o in 0..outer {
        for &pick in &picks {
            let start = (o * len + pick) * inner;
            output.extend_from_slice(&values[start..start + inner]);
        }
    }
    B::from_vec(output, output_shape, &B::device(tensor))
}

/// On the host.
pub fn select_add<B: Backend>(
    tensor: &B::FloatTensor,
    axis: usize,
    indices: &B::IntTensor,
    source: &B::FloatTensor,
) -> Result<B::FloatTensor> {
    let (shape, source_shape) = (B::shape(tensor), B::shape(source));
    shape.check_axis("select_add", axis)?;
    let (outer, len, inner) = split_at_axis(&shape, axis);
    let picks = checked_indices::<B>("select_add", indices, len)?;
    if shape.with_dim("select_add", axis, picks.len())? != source_shape {
        return Err(Error::ShapeMismatch { op: "select_add", lhs: shape, rhs: source_shape });
    }
    let (mut output, added) = (B::to_vec(tensor)?, B::to_vec(source)?);
    for o in 0..outer {
        for (k, &pick) in picks.iter().enumerate() {
            let (to, from) = ((o * len + pick) * inner, (o * picks.len() + k) * inner);
            for i in 0..inner {
                output[to + i] += added[from + i];
            }
        }
    }
    B::from_vec(output, shape, &B::device(tensor))
}

/// `index_select` of the flattened ids, reshaped to `ids.shape + [width]`.
pub fn embedding<B: Backend>(weights: &B::FloatTensor, ids: &B::IntTensor) -> Result<B::FloatTensor> {
    let (weights_shape, ids_shape) = (B::shape(weights), B::int_shape(ids));
    if weights_shape.rank() != 2 {
        return Err(Error::invalid(
            "embedding",
            format!("needs weights of shape [vocabulary, width], got {weights_shape}"),
        ));
    }
    let flat = B::int_reshape(ids, Shape::new([ids_shape.num_elements()]))?;
    let rows = B::index_select(weights, 0, &flat)?;
    let mut dims = ids_shape.dims().to_vec();
    dims.push(weights_shape.dims()[1]);
    B::reshape(&rows, Shape::new(dims))
}

/// On the host.
pub fn one_hot<B: Backend>(indices: &B::IntTensor, classes: usize) -> Result<B::FloatTensor> {
    let shape = B::int_shape(indices);
    let mut dims = shape.dims().to_vec();
    dims.push(classes);
    let output_shape = Shape::new(dims);
    output_shape.check_tensor_shape("one_hot")?;
    let mut output = memory::try_filled("one_hot", output_shape.num_elements(), 0.0)?;
    for (row, index) in B::int_to_vec(indices)?.into_iter().enumerate() {
        let class = usize::try_from(index)
            .ok()
            .filter(|&class| class < classes)
            .ok_or_else(|| Error::invalid("one_hot", format!("index {index} is outside 0..{classes}")))?;
        output[row * classes + class] = 1.0;
    }
    B::from_vec(output, output_shape, &B::int_device(indices))
}

/// The largest or smallest entry of each lane along `axis`, NaN where the lane holds NaN.
fn extreme_dim<B: Backend>(
    op: &'static str,
    tensor: &B::FloatTensor,
    axis: usize,
    pick: fn(f32, f32) -> f32,
) -> Result<B::FloatTensor> {
    let shape = B::shape(tensor);
    shape.check_axis(op, axis)?;
    let (outer, len, inner) = split_at_axis(&shape, axis);
    if len == 0 {
        return Err(Error::invalid(op, format!("axis {axis} of shape {shape} is empty: it has no extreme entry")));
    }
    let values = B::to_vec(tensor)?;
    let mut output = memory::try_vec(op, outer * inner)?;
    for o in 0..outer {
        for i in 0..inner {
            let lane = (0..len).map(|k| values[(o * len + k) * inner + i]);
            output.push(lane.reduce(pick).unwrap_or(f32::NAN));
        }
    }
    B::from_vec(output, shape.with_dim(op, axis, 1)?, &B::device(tensor))
}

/// On the host.
pub fn max_dim<B: Backend>(tensor: &B::FloatTensor, axis: usize) -> Result<B::FloatTensor> {
    extreme_dim::<B>("max_dim", tensor, axis, math::maximum)
}

/// On the host.
pub fn min_dim<B: Backend>(tensor: &B::FloatTensor, axis: usize) -> Result<B::FloatTensor> {
    extreme_dim::<B>("min_dim", tensor, axis, math::minimum)
}

/// `max_dim` of the flattened tensor.
pub fn max<B: Backend>(tensor: &B::FloatTensor) -> Result<B::FloatTensor> {
    B::max_dim(&B::reshape(tensor, Shape::new([B::shape(tensor).num_elements()]))?, 0)
}

/// `min_dim` of the flattened tensor.
pub fn min<B: Backend>(tensor: &B::FloatTensor) -> Result<B::FloatTensor> {
    B::min_dim(&B::reshape(tensor, Shape::new([B::shape(tensor).num_elements()]))?, 0)
}

/// `sum((x - mean)²) / (len - correction)` along `axis`, through the backend's own ops.
pub fn var_dim<B: Backend>(tensor: &B::FloatTensor, axis: usize, correction: usize) -> Result<B::FloatTensor> {
    let shape = B::shape(tensor);
    shape.check_axis("var_dim", axis)?;
    let len = shape.dims()[axis];
    let Some(divisor) = len.checked_sub(correction).filter(|&divisor| divisor > 0) else {
        return Err(Error::invalid(
            "var_dim",
            format!("needs more than {correction} entries along axis {axis}, got {len}"),
        ));
    };
    let deviation = B::sub(tensor, &B::mean_dim(tensor, axis)?)?;
    let squares = B::sum_dim(&B::mul(&deviation, &deviation)?, axis)?;
    B::mul_scalar(&squares, (1.0 / divisor as f64) as f32)
}

/// An `add` to zeros of `shape`, once the tensor is known to broadcast to exactly that shape.
pub fn expand<B: Backend>(tensor: &B::FloatTensor, shape: Shape) -> Result<B::FloatTensor> {
    let own = B::shape(tensor);
    if Shape::broadcast("expand", &own, &shape)? != shape {
        return Err(Error::ShapeMismatch { op: "expand", lhs: own, rhs: shape });
    }
    B::add(tensor, &B::full(shape, 0.0, &B::device(tensor))?)
}

/// On the host.
pub fn flip<B: Backend>(tensor: &B::FloatTensor, axes: Vec<usize>) -> Result<B::FloatTensor> {
    let shape = B::shape(tensor);
    for &axis in &axes {
        shape.check_axis("flip", axis)?;
    }
    let (dims, input_strides, values) = (shape.dims(), strides(shape.dims()), B::to_vec(tensor)?);
    let mut output = memory::try_vec("flip", values.len())?;
    for index in 0..values.len() {
        let (mut rest, mut source) = (index, 0);
        for (axis, &size) in dims.iter().enumerate().rev() {
            let coordinate = rest % size;
            rest /= size;
            let flipped = if axes.contains(&axis) { size - 1 - coordinate } else { coordinate };
            source += flipped * input_strides[axis];
        }
        output.push(values[source]);
    }
    B::from_vec(output, shape, &B::device(tensor))
}

/// `unsqueeze` each tensor at `axis`, then `cat` along it.
pub fn stack<B: Backend>(tensors: &[B::FloatTensor], axis: usize) -> Result<B::FloatTensor> {
    let mut parts = memory::try_vec("stack", tensors.len())?;
    for tensor in tensors {
        parts.push(B::unsqueeze(tensor, axis)?);
    }
    B::cat(&parts, axis)
}

/// The shape checks of `gather` and `scatter_add`: `indices` matches `shape` but along `axis`; its values.
fn gather_indices<B: Backend>(
    op: &'static str,
    shape: &Shape,
    axis: usize,
    indices: &B::IntTensor,
) -> Result<Vec<usize>> {
    shape.check_axis(op, axis)?;
    let index_shape = B::int_shape(indices);
    let matches = index_shape.rank() == shape.rank()
        && index_shape.dims().iter().zip(shape.dims()).enumerate().all(|(d, (a, b))| d == axis || a == b);
    if !matches {
        return Err(Error::ShapeMismatch { op, lhs: shape.clone(), rhs: index_shape });
    }
    let len = shape.dims()[axis];
    B::int_to_vec(indices)?
        .into_iter()
        .map(|index| {
            usize::try_from(index)
                .ok()
                .filter(|&index| index < len)
                .ok_or_else(|| Error::invalid(op, format!("index {index} is out of range for an axis of size {len}")))
        })
        .collect()
}

/// The row-major position in `shape` of position `index` of `index_shape`, with its `axis` coordinate replaced.
fn gathered_position(index: usize, index_shape: &[usize], strides: &[usize], axis: usize, along: usize) -> usize {
    let (mut rest, mut position) = (index, 0);
    for (d, &size) in index_shape.iter().enumerate().rev() {
        let coordinate = rest % size;
        rest /= size;
        position += if d == axis { along } else { coordinate } * strides[d];
    }
    position
}

/// On the host.
pub fn gather<B: Backend>(tensor: &B::FloatTensor, axis: usize, indices: &B::IntTensor) -> Result<B::FloatTensor> {
    let shape = B::shape(tensor);
    let picks = gather_indices::<B>("gather", &shape, axis, indices)?;
    let (index_shape, input_strides, values) = (B::int_shape(indices), strides(shape.dims()), B::to_vec(tensor)?);
    let mut output = memory::try_vec("gather", picks.len())?;
    for (index, &pick) in picks.iter().enumerate() {
        output.push(values[gathered_position(index, index_shape.dims(), &input_strides, axis, pick)]);
    }
    B::from_vec(output, index_shape, &B::device(tensor))
}

/// On the host.
pub fn scatter_add<B: Backend>(
    tensor: &B::FloatTensor,
    axis: usize,
    indices: &B::IntTensor,
    source: &B::FloatTensor,
) -> Result<B::FloatTensor> {
    let shape = B::shape(tensor);
    let picks = gather_indices::<B>("scatter_add", &shape, axis, indices)?;
    let (index_shape, source_shape) = (B::int_shape(indices), B::shape(source));
    if index_shape != source_shape {
        return Err(Error::ShapeMismatch { op: "scatter_add", lhs: index_shape, rhs: source_shape });
    }
    let (input_strides, added) = (strides(shape.dims()), B::to_vec(source)?);
    let mut output = B::to_vec(tensor)?;
    for (index, &pick) in picks.iter().enumerate() {
        output[gathered_position(index, index_shape.dims(), &input_strides, axis, pick)] += added[index];
    }
    B::from_vec(output, shape, &B::device(tensor))
}

/// Per dimension: a new axis in front of it, `expand`ed to `times`, then merged into it by `reshape`.
pub fn repeat<B: Backend>(tensor: &B::FloatTensor, times: Vec<usize>) -> Result<B::FloatTensor> {
    let shape = B::shape(tensor);
    if times.len() != shape.rank() {
        return Err(Error::invalid("repeat", format!("needs one count per dimension of {shape}, got {times:?}")));
    }
    let mut tiled = tensor.clone();
    for (axis, &count) in times.iter().enumerate() {
        if count == 1 {
            continue;
        }
        let mut dims = B::shape(&tiled).dims().to_vec();
        let stretched = B::unsqueeze(&tiled, axis)?;
        let mut expanded = dims.clone();
        expanded.insert(axis, count);
        let expanded = B::expand(&stretched, Shape::new(expanded))?;
        dims[axis] =
            dims[axis].checked_mul(count).ok_or_else(|| Error::invalid("repeat", "the output is too large"))?;
        tiled = B::reshape(&expanded, Shape::new(dims))?;
    }
    Ok(tiled)
}

/// The lanes of `values` (shape `shape`) along `axis`: `f` of each lane's values, in the order of their positions.
pub(crate) fn lanes<T>(
    op: &'static str,
    values: &[f32],
    shape: &Shape,
    axis: usize,
    mut f: impl FnMut(&[f32]) -> T,
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

/// On the host.
pub fn prod_dim<B: Backend>(tensor: &B::FloatTensor, axis: usize) -> Result<B::FloatTensor> {
    let shape = B::shape(tensor);
    let products = lanes("prod_dim", &B::to_vec(tensor)?, &shape, axis, |lane| lane.iter().product::<f32>())?;
    B::from_vec(products, shape.with_dim("prod_dim", axis, 1)?, &B::device(tensor))
}

/// `prod_dim` of the flattened tensor.
pub fn prod<B: Backend>(tensor: &B::FloatTensor) -> Result<B::FloatTensor> {
    B::prod_dim(&B::reshape(tensor, Shape::new([B::shape(tensor).num_elements()]))?, 0)
}

/// `cat` of the entries before `start`, `source`, and the entries after it.
pub fn slice_assign<B: Backend>(
    tensor: &B::FloatTensor,
    axis: usize,
    start: usize,
    source: &B::FloatTensor,
) -> Result<B::FloatTensor> {
    let (shape, source_shape) = (B::shape(tensor), B::shape(source));
    shape.check_axis("slice_assign", axis)?;
    let len = source_shape.dims().get(axis).copied().unwrap_or(0);
    if source_shape != shape.with_dim("slice_assign", axis, len)? {
        return Err(Error::ShapeMismatch { op: "slice_assign", lhs: shape, rhs: source_shape });
    }
    shape.check_narrow(axis, start, len)?;
    let size = shape.dims()[axis];
    let before = B::narrow(tensor, axis, 0, start)?;
    let after = B::narrow(tensor, axis, start + len, size - start - len)?;
    B::cat(&[before, source.clone(), after], axis)
}
