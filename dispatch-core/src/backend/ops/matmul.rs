//! The matmul family of the op list. The matrix product.

/// The entries of the matmul family, appended to the list the chain has gathered so far.
#[doc(hidden)]
#[macro_export]
macro_rules! __ops_matmul {
    ($next:tt $callback:tt $context:tt $($entries:tt)*) => {
        $crate::__ops_chain! { $next $callback $context $($entries)*
            /// The matrix product over the last two dimensions; the dimensions in front (batches) broadcast, numpy style.
            fn matmul(lhs: Float, rhs: Float) -> Float, tracked;
        }
    };
}
