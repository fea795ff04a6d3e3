//! The index family of the op list. Indexing: int tensors pick from float ones, and put values back.

/// The entries of the index family, appended to the list the chain has gathered so far.
#[doc(hidden)]
#[macro_export]
macro_rules! __ops_index {
    ($next:tt $callback:tt $context:tt $($entries:tt)*) => {
        $crate::__ops_chain! { $next $callback $context $($entries)*
            /// The entries of `axis` at `indices` (a 1-D int tensor), in that order; an index out of range is an
            /// `Err` naming it. Differentiable in `tensor`.
            fn index_select(tensor: Float, axis: usize, indices: Int) -> Float = index_select, tracked;
            /// `tensor` with the slices of `source` along `axis` added at `indices` (a 1-D int tensor; repeated
            /// indices add up): the backward of `index_select`, and `select_assign` by addition. `source` has
            /// `tensor`'s shape but `indices.len()` along `axis`. Differentiable in both float operands.
            fn select_add(tensor: Float, axis: usize, indices: Int, source: Float) -> Float = select_add, tracked;
            /// Along `axis`, the entry that `indices` names for each position: `indices` (int) has the tensor's rank,
            /// its sizes but along `axis`, and the output its shape. An index out of range is an `Err`.
            /// Differentiable in `tensor`.
            fn gather(tensor: Float, axis: usize, indices: Int) -> Float = gather, tracked;
            /// `tensor` with each element of `source` added along `axis` at the place `indices` names (the
            /// backward of `gather`); `source` has `indices`' shape. Differentiable in both float operands.
            fn scatter_add(tensor: Float, axis: usize, indices: Int, source: Float) -> Float = scatter_add, tracked;
            /// The rows of `weights` (`[vocabulary, width]`) picked by `ids` (int, any shape): shape
            /// `ids.shape + [width]`. By default `index_select` between two reshapes, so differentiable in `weights`.
            fn embedding(weights: Float, ids: Int) -> Float = embedding, composed;
            /// `[.., classes]` rows of 0.0 with 1.0 at each index of `indices` (int, any shape), of `dtype`; an index
            /// outside `0..classes` is an `Err`.
            fn one_hot(indices: Int, classes: usize, dtype: ($crate::DType)) -> Float = one_hot, forwarded;
        }
    };
}
