//! The comparison family of the op list. Comparisons and masks: bool tensors from float ones, and float ones picked by
//! bool ones.

/// The entries of the comparison family, appended to the list the chain has gathered so far.
#[doc(hidden)]
#[macro_export]
macro_rules! __ops_comparison {
    ($next:tt $callback:tt $context:tt $($entries:tt)*) => {
        $crate::__ops_chain! { $next $callback $context $($entries)*
            /// `lhs == rhs`, element-wise, broadcasting.
            fn eq(lhs: Float, rhs: Float) -> Bool = eq, forwarded;
            /// `lhs != rhs`, element-wise, broadcasting (true where either is NaN).
            fn ne(lhs: Float, rhs: Float) -> Bool = ne, forwarded;
            /// `lhs < rhs`, element-wise, broadcasting.
            fn lt(lhs: Float, rhs: Float) -> Bool = lt, forwarded;
            /// `lhs <= rhs`, element-wise, broadcasting.
            fn le(lhs: Float, rhs: Float) -> Bool = le, forwarded;
            /// `lhs > rhs`, element-wise, broadcasting.
            fn gt(lhs: Float, rhs: Float) -> Bool = gt, forwarded;
            /// `lhs >= rhs`, element-wise, broadcasting.
            fn ge(lhs: Float, rhs: Float) -> Bool = ge, forwarded;
            /// `tensor == scalar`, element-wise.
            fn eq_scalar(tensor: Float, scalar: f64) -> Bool = eq_scalar, forwarded;
            /// `tensor != scalar`, element-wise.
            fn ne_scalar(tensor: Float, scalar: f64) -> Bool = ne_scalar, forwarded;
            /// `tensor < scalar`, element-wise.
            fn lt_scalar(tensor: Float, scalar: f64) -> Bool = lt_scalar, forwarded;
            /// `tensor <= scalar`, element-wise.
            fn le_scalar(tensor: Float, scalar: f64) -> Bool = le_scalar, forwarded;
            /// `tensor > scalar`, element-wise.
            fn gt_scalar(tensor: Float, scalar: f64) -> Bool = gt_scalar, forwarded;
            /// `tensor >= scalar`, element-wise.
            fn ge_scalar(tensor: Float, scalar: f64) -> Bool = ge_scalar, forwarded;
            /// `on_true` where `mask` holds, else `on_false`; the three broadcast to one shape. Differentiable in
            /// both branches (each gets the gradient where it was picked).
            fn mask_where(mask: Bool, on_true: Float, on_false: Float) -> Float = mask_where, tracked;
            /// `value` where `mask` holds, else `tensor`; `mask` broadcasts to `tensor`'s shape. Differentiable in
            /// `tensor` (zero gradient where filled).
            fn mask_fill(tensor: Float, mask: Bool, value: f64) -> Float = mask_fill, tracked;
        }
    };
}
