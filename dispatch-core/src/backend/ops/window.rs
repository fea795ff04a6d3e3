//! The window family of the op list. Window ops: convolution and pooling over `[batch, channels, height, width]`.

/// The entries of the window family, appended to the list the chain has gathered so far.
#[doc(hidden)]
#[macro_export]
macro_rules! __ops_window {
    ($next:tt $callback:tt $context:tt $($entries:tt)*) => {
        $crate::__ops_chain! { $next $callback $context $($entries)*
            /// im2col: `[n, c, h, w]` to `[n, c * kh * kw, oh * ow]`, one row per channel and tap of `window`, one
            /// column per output position; taps in the padding read `pad_value`. Differentiable (its backward is
            /// `fold2d`).
            fn unfold2d(tensor: Float, window: ($crate::backend::Window2d), pad_value: f64) -> Float = unfold2d, tracked;
            /// col2im, the adjoint of `unfold2d`: columns back to `[n, c, height, width]`, overlapping taps added up.
            fn fold2d(tensor: Float, height: usize, width: usize, window: ($crate::backend::Window2d)) -> Float = fold2d, tracked;
            /// The 2-D convolution (cross-correlation) of `[n, c, h, w]` by `[out, c / groups, kh, kw]`, without a
            /// bias. By default `unfold2d` then one batched `matmul` per group.
            fn conv2d(input: Float, weight: Float, options: ($crate::backend::Conv2dOptions)) -> Float = conv2d, tracked;
            /// The 1-D convolution of `[n, c, length]` by `[out, c / groups, kernel]`, without a bias. By default
            /// `conv2d` of a height-1 image.
            fn conv1d(input: Float, weight: Float, options: ($crate::backend::Conv1dOptions)) -> Float = conv1d, composed;
            /// The transposed 2-D convolution (the gradient of `conv2d` by its input) of `[n, c, h, w]` by
            /// `[c, out / groups, kh, kw]`. By default one `matmul` per group then `fold2d`.
            fn conv_transpose2d(input: Float, weight: Float, options: ($crate::backend::Conv2dOptions)) -> Float = conv_transpose2d, tracked;
            /// The gradient of `conv2d`'s weight: for `input` `[n, c, h, w]` and the gradient of the output
            /// `[n, out, oh, ow]`, the weight's `[out, c / groups, kh, kw]` for `kernel` `[kh, kw]`. By default each
            /// group's output gradient times `unfold2d` of the input, summed over the batch; natively, an image's
            /// unfolding at a time, so the batch's is never held. Differentiable in both operands (it is bilinear).
            fn conv2d_weight_gradient(input: Float, gradient: Float, kernel: ([usize; 2]), options: ($crate::backend::Conv2dOptions)) -> Float = conv2d_weight_gradient, tracked;
            /// The largest value of each window (`-inf` in the padding). Its gradient goes to the window's first
            /// maximum, the one `max_pool2d_indices` names.
            fn max_pool2d(input: Float, window: ($crate::backend::Window2d)) -> Float = max_pool2d, tracked;
            /// Where each window's maximum is, `[n, c, oh, ow]`: its flat index `row * width + column` in the
            /// input's `height x width` plane, the first one on ties (a NaN wins, as it wins `max_pool2d`); padding
            /// never does.
            fn max_pool2d_indices(input: Float, window: ($crate::backend::Window2d)) -> Int = max_pool2d_indices, forwarded;
            /// The mean of each window, padding counted.
            fn avg_pool2d(input: Float, window: ($crate::backend::Window2d)) -> Float = avg_pool2d, tracked;
            /// Means over a grid of `[height, width]` nearly equal windows covering the input.
            fn adaptive_avg_pool2d(input: Float, output: ([usize; 2])) -> Float = adaptive_avg_pool2d, composed;
        }
    };
}
