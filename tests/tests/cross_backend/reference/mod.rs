//! The reference: every op of the table as naive loops over row-major `f64` buffers, written from the ops'
//! documented semantics (`dispatch-core/src/backend/ops.rs`), never calling the crate's own host code. Each op
//! checks its arguments the way the docs and `dispatch_core::Error` describe and fails with the kind a backend
//! must give. Results are exact in `f64`; the interpreter rounds them to the dtype.

pub mod attention;
pub mod elementwise;
pub mod index;
pub mod int_bool;
pub mod layout;
pub mod reduce;
pub mod window;

use crate::support::values::{Outcome, broadcast, broadcast_position, count, invalid, mismatch, unravel};

/// `axis` names a dimension of `dims`, or `InvalidArgument`.
pub fn check_axis(dims: &[usize], axis: usize) -> Outcome<()> {
    if axis >= dims.len() {
        return invalid(format!("axis {axis} of a tensor of dims {dims:?}"));
    }
    Ok(())
}

/// The sizes before `axis`, of it, and after it: lane `(o, i)` holds positions `(o * len + k) * inner + i`.
pub fn split_at(dims: &[usize], axis: usize) -> (usize, usize, usize) {
    (count(&dims[..axis]), dims[axis], count(&dims[axis + 1..]))
}

/// `f(position in a, position in b)` for every element of the broadcast of `a_dims` and `b_dims`, with its dims.
pub fn zip<T>(a_dims: &[usize], b_dims: &[usize], f: impl Fn(usize, usize) -> T) -> Outcome<(Vec<usize>, Vec<T>)> {
    let Some(dims) = broadcast(a_dims, b_dims) else {
        return mismatch(format!("{a_dims:?} and {b_dims:?} do not broadcast"));
    };
    let values = (0..count(&dims))
        .map(|index| {
            let out = unravel(index, &dims);
            f(broadcast_position(&out, a_dims), broadcast_position(&out, b_dims))
        })
        .collect();
    Ok((dims, values))
}
