//! Comparison and mask defaults, on the host: bool tensors from float ones, and float ones picked by bool ones.

use super::host_values::{broadcast_source, map, same_dtype, values_like, zip};
use crate::backend::Backend;
use crate::error::Result;
use crate::memory;
use crate::shape::Shape;

/// The float comparisons, each tensor against tensor (broadcasting) and tensor against a scalar.
macro_rules! float_comparisons {
    ($($name:ident, $scalar_name:ident: $compare:expr;)*) => {$(
        /// On the host, broadcasting.
        pub fn $name<B: Backend>(lhs: &B::FloatTensor, rhs: &B::FloatTensor) -> Result<B::BoolTensor> {
            same_dtype::<B>(stringify!($name), lhs, rhs)?;
            let (a, b) = (B::to_f64_vec(lhs)?, B::to_f64_vec(rhs)?);
            let compare: fn(f64, f64) -> bool = $compare;
            let (values, shape) =
                zip(stringify!($name), (&a, &B::shape(lhs)), (&b, &B::shape(rhs)), |x, y| Ok(compare(x, y)))?;
            B::bool_from_vec(values, shape, &B::device(lhs))
        }

        /// On the host.
        pub fn $scalar_name<B: Backend>(tensor: &B::FloatTensor, scalar: f64) -> Result<B::BoolTensor> {
            let compare: fn(f64, f64) -> bool = $compare;
            let scalar = B::dtype(tensor).round(scalar);
            let values = map(stringify!($scalar_name), &B::to_f64_vec(tensor)?, |x| compare(x, scalar))?;
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
    same_dtype::<B>(op, on_true, on_false)?;
    let (mask_shape, true_shape, false_shape) = (B::bool_shape(mask), B::shape(on_true), B::shape(on_false));
    let shape = Shape::broadcast_three(op, &mask_shape, &true_shape, &false_shape)?;
    let (picks, a, b) = (B::bool_to_vec(mask)?, B::to_f64_vec(on_true)?, B::to_f64_vec(on_false)?);
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
    values_like::<B>(values, shape, on_true)
}

/// On the host: `mask` broadcasts to `tensor`'s shape, which the output keeps.
pub fn mask_fill<B: Backend>(tensor: &B::FloatTensor, mask: &B::BoolTensor, value: f64) -> Result<B::FloatTensor> {
    let op = "mask_fill";
    let (shape, mask_shape) = (B::shape(tensor), B::bool_shape(mask));
    Shape::check_mask_fits(op, &shape, &mask_shape)?;
    let (values, picks) = (B::to_f64_vec(tensor)?, B::bool_to_vec(mask)?);
    let (filled, _) = zip(op, (&values, &shape), (&picks, &mask_shape), |x, fill| Ok(if fill { value } else { x }))?;
    values_like::<B>(filled, shape, tensor)
}
