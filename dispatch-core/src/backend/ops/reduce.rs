//! The reduce family of the op list. Reductions: over every element, or along one axis keeping it with size 1.

/// The entries of the reduce family, appended to the list the chain has gathered so far.
#[doc(hidden)]
#[macro_export]
macro_rules! __ops_reduce {
    ($next:tt $callback:tt $context:tt $($entries:tt)*) => {
        $crate::__ops_chain! { $next $callback $context $($entries)*
            /// Sum of every element, as a tensor of shape `[1]`.
            fn sum(tensor: Float) -> Float, tracked;
            /// Mean of every element, as a tensor of shape `[1]`.
            fn mean(tensor: Float) -> Float, tracked;
            /// Sum along `axis`, keeping it with size 1.
            fn sum_dim(tensor: Float, axis: usize) -> Float, tracked;
            /// Mean along `axis`, keeping it with size 1.
            fn mean_dim(tensor: Float, axis: usize) -> Float, tracked;
            /// `x - log(sum(exp(x)))` along `axis`, computed stably (the max is subtracted first).
            fn log_softmax(tensor: Float, axis: usize) -> Float, tracked;
            /// The largest entry along `axis`, keeping it with size 1 (NaN for a lane holding NaN). The gradient is
            /// shared evenly among tied maxima.
            fn max_dim(tensor: Float, axis: usize) -> Float = max_dim, tracked;
            /// The smallest entry along `axis`, keeping it with size 1; see `max_dim`.
            fn min_dim(tensor: Float, axis: usize) -> Float = min_dim, tracked;
            /// The product along `axis`, keeping it with size 1. Its gradient is the product of the other entries
            /// of the lane (exact with zeros, not a division).
            fn prod_dim(tensor: Float, axis: usize) -> Float = prod_dim, tracked;
            /// The product of every element, as a tensor of shape `[1]`. By default `prod_dim` of the flattened
            /// tensor.
            fn prod(tensor: Float) -> Float = prod, composed;
            /// The largest entry, as a tensor of shape `[1]`. By default `max_dim` of the flattened tensor.
            fn max(tensor: Float) -> Float = max, composed;
            /// The smallest entry, as a tensor of shape `[1]`. By default `min_dim` of the flattened tensor.
            fn min(tensor: Float) -> Float = min, composed;
            /// The variance along `axis`, keeping it with size 1: the mean squared deviation, divided by
            /// `len - correction` rather than `len` (0 for the population variance, 1 for the unbiased estimate).
            /// By default composed from `mean_dim`, `sub`, `mul` and `sum_dim`.
            fn var_dim(tensor: Float, axis: usize, correction: usize) -> Float = var_dim, composed;
            /// `exp(x) / sum(exp(x))` along `axis`, computed stably (the max is subtracted first). By default
            /// `exp(log_softmax(x))`; its backward rule is closed-form, `y (dy - sum(dy y))`, one node in the graph.
            fn softmax(tensor: Float, axis: usize) -> Float = softmax, tracked;
            /// `output (gradient - Σ gradient output)` along `axis`: the gradient of `softmax` at its output
            /// `output`, given the gradient of that output (of its shape and dtype). By default composed from
            /// `mul`, `sum_dim` and `sub`: what `softmax`'s backward rule computes, in one op where a backend fuses
            /// it.
            fn softmax_backward(output: Float, gradient: Float, axis: usize) -> Float = softmax_backward, composed;
            /// Attention weights: softmax over the last axis of `scale query keyᵀ`, for `query` `[..., queries,
            /// width]` and `key` `[..., keys, width]` of the same leading dims, as `[..., queries, keys]`. With
            /// `causal`, query `i` attends to keys `0..=i` only (top-left aligned, as PyTorch's `is_causal`): the
            /// later keys' weights are exactly 0. By default composed from `matmul`, `mul_scalar`, `mask_fill` and
            /// `softmax`; its backward rule is closed-form (`softmax_backward`, then two products), one node in the
            /// graph rather than four, and a backend may fuse the scale, the mask and the softmax into one pass over
            /// each row of scores.
            fn attention_weights(query: Float, key: Float, scale: f64, causal: bool) -> Float = attention_weights,
                tracked;
            /// The mean cross-entropy of `logits` (`[rows, classes]`) against int class ids `targets` (`[rows]`):
            /// `-mean(log_softmax(logits)[row, target])`, as a tensor of shape `[1]`. A target outside
            /// `0..classes` is an `Err`. By default composed from `log_softmax`, `gather` and `mean`; its backward
            /// rule is closed-form, `(softmax(logits) - one_hot(targets)) dy / rows`.
            fn cross_entropy(logits: Float, targets: Int) -> Float = cross_entropy, tracked;
            /// Layer normalisation over the last axis, `(x - mean) / sqrt(var + eps) * gamma + beta`, with the
            /// population variance (as PyTorch's `layer_norm`); `gamma` and `beta` are `[width]`, the last axis's
            /// size. By default composed from `mean_dim`, `sub`, `mul`, `add_scalar`, `sqrt`, `div` and `add`; its
            /// backward rule is closed-form, one node in the graph rather than eight.
            fn layer_norm(tensor: Float, gamma: Float, beta: Float, eps: f64) -> Float = layer_norm, tracked;
            /// The gradient of `layer_norm` by its input `tensor`, given `gamma` and the gradient of the output (of
            /// the tensor's shape and dtype): `(s - mean(s) - x̂ mean(s x̂)) / sqrt(var + eps)` over the last axis,
            /// with `s = gradient γ` and `x̂` the normalised input. By default composed from the ops of
            /// `layer_norm`'s default and `recip`: what `layer_norm`'s backward rule computes for the input, in one
            /// op where a backend fuses it.
            fn layer_norm_backward(tensor: Float, gamma: Float, gradient: Float, eps: f64) -> Float =
                layer_norm_backward, composed;
            /// The gradients of `layer_norm` by `gamma` and by `beta`, given the gradient of the output (of the
            /// tensor's shape and dtype), as the rows of one `[2, width]` tensor: `Σ gradient x̂` and `Σ gradient`
            /// over every axis but the last, with `x̂` the normalised input. By default composed from the ops of
            /// `layer_norm`'s default, `sum_dim` and `cat`: what `layer_norm`'s backward rule computes for its
            /// parameters, in one op where a backend fuses it.
            fn layer_norm_parameter_gradients(tensor: Float, gradient: Float, eps: f64) -> Float =
                layer_norm_parameter_gradients, composed;
            /// The index of the largest entry along `axis` (the first one on ties), as an int tensor keeping the
            /// axis with size 1; an empty axis is an `Err`.
            fn argmax(tensor: Float, axis: usize) -> Int, forwarded;
            /// The index of the smallest entry along `axis` (the first one on ties), as an int tensor keeping the
            /// axis with size 1. NaN entries are skipped; an empty axis is an `Err`.
            fn argmin(tensor: Float, axis: usize) -> Int = argmin, forwarded;
        }
    };
}
