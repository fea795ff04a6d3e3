//! The layout family of the op list. Layout: the same values under another shape, order or arrangement.

/// The entries of the layout family, appended to the list the chain has gathered so far.
#[doc(hidden)]
#[macro_export]
macro_rules! __ops_layout {
    ($next:tt $callback:tt $context:tt $($entries:tt)*) => {
        $crate::__ops_chain! { $next $callback $context $($entries)*
            /// Swaps two dimensions (a transpose when they are the last two).
            fn swap_dims(tensor: Float, dim0: usize, dim1: usize) -> Float, tracked;
            /// The same elements, in row-major order, under another shape with the same element count.
            fn reshape(tensor: Float, shape: Shape) -> Float, tracked;
            /// `len` entries of `axis` starting at `start`.
            fn narrow(tensor: Float, axis: usize, start: usize, len: usize) -> Float, tracked;
            /// Concatenation along `axis`; every other dimension must agree.
            fn cat(tensors: [Float], axis: usize) -> Float, tracked;
            /// The dimensions reordered: dimension `i` of the output is dimension `axes[i]` of the input; `axes` must
            /// name every dimension once.
            fn permute(tensor: Float, axes: (::std::vec::Vec<usize>)) -> Float = permute, tracked;
            /// The tensor broadcast to `shape` (numpy rules: size-1 dimensions stretch, missing ones are added in
            /// front). By default an `add` to zeros, so its gradient is summed back like any broadcast's.
            fn expand(tensor: Float, shape: Shape) -> Float = expand, composed;
            /// The entries of each of `axes` in reverse order.
            fn flip(tensor: Float, axes: (::std::vec::Vec<usize>)) -> Float = flip, tracked;
            /// The tensor with entries `start..start + len` of `axis` replaced by `source` (its shape but `len`
            /// along `axis`). By default `cat` of two `narrow`s and `source`, so differentiable in both.
            fn slice_assign(tensor: Float, axis: usize, start: usize, source: Float) -> Float = slice_assign, composed;
            /// The tensor tiled `times[d]` times along each dimension `d` (`times` has one entry per dimension).
            /// By default `unsqueeze`, `expand` and `reshape` per dimension, so differentiable wherever they are.
            fn repeat(tensor: Float, times: (::std::vec::Vec<usize>)) -> Float = repeat, composed;
            /// `tensors` (of one shape) stacked along a new dimension `axis`. By default `unsqueeze` then `cat`.
            fn stack(tensors: [Float], axis: usize) -> Float = stack, composed;
            /// A dimension of size 1 inserted before dimension `axis` (`axis == rank` appends one). By default a
            /// `reshape`, so differentiable wherever `reshape` is.
            fn unsqueeze(tensor: Float, axis: usize) -> Float = unsqueeze, composed;
            /// Dimension `axis`, which must have size 1, removed (a rank-1 tensor has none to lose). By default a
            /// `reshape`.
            fn squeeze(tensor: Float, axis: usize) -> Float = squeeze, composed;
        }
    };
}
