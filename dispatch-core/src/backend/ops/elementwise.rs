//! The elementwise family of the op list. Element-wise float ops, broadcasting with numpy rules (a row vector over a
//! matrix is a bias add): arithmetic, scalars, functions, bounds.

/// The entries of the elementwise family, appended to the list the chain has gathered so far.
#[doc(hidden)]
#[macro_export]
macro_rules! __ops_elementwise {
    ($next:tt $callback:tt $context:tt $($entries:tt)*) => {
        $crate::__ops_chain! { $next $callback $context $($entries)*
            /// Element-wise `lhs + rhs`.
            fn add(lhs: Float, rhs: Float) -> Float, tracked;
            /// Element-wise `lhs - rhs`.
            fn sub(lhs: Float, rhs: Float) -> Float, tracked;
            /// Element-wise `lhs * rhs`.
            fn mul(lhs: Float, rhs: Float) -> Float, tracked;
            /// Element-wise `lhs / rhs`; division by zero gives IEEE infinities.
            fn div(lhs: Float, rhs: Float) -> Float, tracked;
            /// `lhs + rhs` as `add`, with `lhs` given up: where nothing else shares its memory and the output has
            /// its shape (`rhs` broadcasts into it), a backend may write the output there instead of in new memory.
            /// By default `add`, which writes new memory.
            fn add_into(lhs: Owned, rhs: Float) -> Float = add_into, tracked;
            /// `lhs - rhs` as `sub`, with `lhs` given up, as `add_into`.
            fn sub_into(lhs: Owned, rhs: Float) -> Float = sub_into, tracked;
            /// `lhs * rhs` as `mul`, with `lhs` given up, as `add_into`.
            fn mul_into(lhs: Owned, rhs: Float) -> Float = mul_into, tracked;
            /// `lhs / rhs` as `div`, with `lhs` given up, as `add_into`.
            fn div_into(lhs: Owned, rhs: Float) -> Float = div_into, tracked;
            /// `tensor + scalar`, element-wise. Every scalar argument of an op is rounded once to the tensor's
            /// dtype, so an `F64` tensor computes with the `f64` given.
            fn add_scalar(tensor: Float, scalar: f64) -> Float, tracked;
            /// `tensor * scalar`, element-wise.
            fn mul_scalar(tensor: Float, scalar: f64) -> Float, tracked;
            /// `tensor + scalar` as `add_scalar`, with `tensor` given up: where nothing else shares its memory, a
            /// backend may write the output there. By default `add_scalar`.
            fn add_scalar_into(tensor: Owned, scalar: f64) -> Float = add_scalar_into, tracked;
            /// `tensor * scalar` as `mul_scalar`, with `tensor` given up, as `add_scalar_into`.
            fn mul_scalar_into(tensor: Owned, scalar: f64) -> Float = mul_scalar_into, tracked;
            /// `tensor ^ exponent`, element-wise.
            fn powf_scalar(tensor: Float, exponent: f64) -> Float, tracked;
            /// `-tensor`, element-wise.
            fn neg(tensor: Float) -> Float, tracked;
            /// `e ^ tensor`, element-wise.
            fn exp(tensor: Float) -> Float, tracked;
            /// Natural logarithm, element-wise.
            fn log(tensor: Float) -> Float, tracked;
            /// `max(tensor, 0)`, element-wise.
            fn relu(tensor: Float) -> Float, tracked;
            /// `1 / (1 + e ^ -tensor)`, element-wise.
            fn sigmoid(tensor: Float) -> Float, tracked;
            /// The hyperbolic tangent, element-wise.
            fn tanh(tensor: Float) -> Float, tracked;
            /// The square root, element-wise (NaN below zero).
            fn sqrt(tensor: Float) -> Float = sqrt, tracked;
            /// `1 / tensor`, element-wise (IEEE infinities at zero).
            fn recip(tensor: Float) -> Float = recip, tracked;
            /// `|tensor|`, element-wise. Its gradient at 0 is 0.
            fn abs(tensor: Float) -> Float = abs, tracked;
            /// The sine, element-wise.
            fn sin(tensor: Float) -> Float = sin, tracked;
            /// The cosine, element-wise.
            fn cos(tensor: Float) -> Float = cos, tracked;
            /// The error function, element-wise.
            fn erf(tensor: Float) -> Float = erf, tracked;
            /// `x * Φ(x)` with `Φ` the standard normal CDF (the exact GELU, through `erf`), element-wise.
            fn gelu(tensor: Float) -> Float = gelu, tracked;
            /// `gradient * (Φ(x) + x φ(x))`, the derivative of `gelu` at `tensor` times `gradient`, element-wise,
            /// broadcasting: what `gelu`'s backward rule computes, in one op where a backend fuses it.
            fn gelu_backward(tensor: Float, gradient: Float) -> Float = gelu_backward, composed;
            /// `x * sigmoid(x)` (SiLU, swish), element-wise.
            fn silu(tensor: Float) -> Float = silu, tracked;
            /// `min(max(tensor, min), max)`, element-wise; `min <= max` is required. The gradient passes where
            /// `min <= x <= max`.
            fn clamp(tensor: Float, min: f64, max: f64) -> Float = clamp, tracked;
            /// The larger of `lhs` and `rhs`, element-wise, broadcasting. The gradient goes to `lhs` on ties.
            fn maximum(lhs: Float, rhs: Float) -> Float = maximum, tracked;
            /// The smaller of `lhs` and `rhs`, element-wise, broadcasting. The gradient goes to `lhs` on ties.
            fn minimum(lhs: Float, rhs: Float) -> Float = minimum, tracked;
            /// One step of Adam or AdamW (`options`) on `parameter`, given its `gradient` (of its shape) and its
            /// `moments`, the first and second moments as the rows of a `[2, ...]` tensor (the parameter's shape
            /// after the 2; zeros before the first step): the new parameter and the new moments as the rows of a
            /// `[3, ...]` tensor, in one pass where a backend fuses it. By default composed from `mul_scalar`, `add`,
            /// `mul`, `sqrt`, `add_scalar`, `div`, `sub`, `narrow`, `reshape` and `stack`, each rounding to the dtype.
            /// An optimizer's step records no gradient.
            fn adam_step(parameter: Float, gradient: Float, moments: Float, options: ($crate::backend::AdamStep)) -> Float =
                adam_step, forwarded;
        }
    };
}
