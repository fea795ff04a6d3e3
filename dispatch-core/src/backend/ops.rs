//! The one list of `Backend`'s ops, and how an entry reads.
//!
//! [`__backend_ops!`](crate::__backend_ops) holds every op once. Everything that has to name every op expands that
//! list through a callback macro: the `Backend` trait's methods, the generated backend of every derived enum, the
//! stand-in backend of a derive that failed. A new op is one entry here, its implementation in each backend, its
//! backward rule in `Autodiff`, and its tests; nothing else names it.
//!
//! An entry is `fn name(param: kind, ...) -> output;`, its doc comment first. A parameter's kind is
//! - `Float`: a float tensor of the backend (`&Self::FloatTensor`),
//! - `[Float]`: a slice of them, only as the first tensor parameter,
//! - `Device`: a device of the backend (`&Self::Device`),
//! - `Shape`: a [`Shape`](crate::Shape),
//! - a type, in parentheses when it is more than one token (`(::std::vec::Vec<f32>)`), passed as it is. The entries
//!   expand in the crates of derived enums too, so a type that is not a primitive is written with its full path.
//!
//! The output is `Float` (`Result<Self::FloatTensor>`), a type in parentheses (`Result` of it), or a type in
//! brackets for an op that cannot fail (`[Shape]` is `Shape`, `[Device]` is `Self::Device`).
//!
//! After the output, `= default` gives the op a default body, `backend::defaults::<name>`, which a backend may
//! override; `=> derived` makes a derived enum's backend call `__private01::derived::<name>` instead of sending the
//! op to the backend its first tensor (else its device) lives on.

/// The ops of [`Backend`](crate::Backend): calls `$crate::$callback! { { context } entries... }`, or, for a callback
/// of another crate named by a path of two or more segments (`crate::my_callback`), `path! { ... }`: how a crate
/// outside dispatch-core (a test, a wrapping backend) expands something for every op.
#[doc(hidden)]
#[macro_export]
macro_rules! __backend_ops {
    ($first:ident $(:: $rest:ident)+ { $($context:tt)* }) => {
        $crate::__backend_ops! { @call [$first $(:: $rest)+] { $($context)* } }
    };
    ($callback:ident { $($context:tt)* }) => {
        $crate::__backend_ops! { @call [$crate::$callback] { $($context)* } }
    };
    (@call [$($callback:tt)*] { $($context:tt)* }) => {
        $($callback)*! {
            { $($context)* }

            // ---- creation and inspection ----------------------------------------------------------------------

            /// An `F32` tensor holding `data` in row-major order. `data.len()` must equal the shape's element
            /// count. By default `from_f64_vec`.
            fn from_vec(data: (::std::vec::Vec<f32>), shape: Shape, device: Device) -> Float = from_vec;
            /// A tensor of `dtype` holding `data` in row-major order, each value rounded to `dtype`.
            /// `data.len()` must equal the shape's element count.
            fn from_f64_vec(data: (::std::vec::Vec<f64>), shape: Shape, dtype: ($crate::DType), device: Device) -> Float;
            /// A tensor of `dtype` filled with `value` (rounded to `dtype`).
            fn full(shape: Shape, value: f64, dtype: ($crate::DType), device: Device) -> Float;
            /// Uniform samples in `[low, high)` of `dtype` from a seeded generator: the same seed gives the same
            /// values on every backend.
            fn random_uniform(shape: Shape, low: f64, high: f64, seed: u64, dtype: ($crate::DType), device: Device) -> Float = random_uniform;
            /// Normal samples of `dtype` with the given mean and standard deviation, seeded like
            /// [`Backend::random_uniform`](crate::Backend::random_uniform).
            fn random_normal(shape: Shape, mean: f64, std: f64, seed: u64, dtype: ($crate::DType), device: Device) -> Float = random_normal;
            /// The elements of an `F32` tensor in row-major order; a tensor of another dtype is an
            /// `Err(UnexpectedDType)`, never silently rounded (read any dtype exactly with `to_f64_vec`). By
            /// default `to_f64_vec`.
            fn to_vec(tensor: Float) -> (::std::vec::Vec<f32>) = to_vec;
            /// The elements in row-major order, as `f64`: exact for every dtype.
            fn to_f64_vec(tensor: Float) -> (::std::vec::Vec<f64>);
            /// The element type of the tensor.
            fn dtype(tensor: Float) -> [$crate::DType];
            /// The values converted to `dtype`, each rounded to the nearest value it holds. Differentiable: the
            /// gradient is cast back to the input's dtype.
            fn cast(tensor: Float, dtype: ($crate::DType)) -> Float;
            /// The tensor's shape.
            fn shape(tensor: Float) -> [Shape];
            /// The device the tensor lives on.
            fn device(tensor: Float) -> [Device];
            /// The same values on another device of this backend. A derived enum's backend also moves tensors
            /// between its variants, through host memory.
            fn to_device(tensor: Float, device: Device) -> Float => to_device;

            // ---- element-wise, broadcasting with numpy rules (a row vector over a matrix is a bias add) --------

            /// Element-wise `lhs + rhs`.
            fn add(lhs: Float, rhs: Float) -> Float;
            /// Element-wise `lhs - rhs`.
            fn sub(lhs: Float, rhs: Float) -> Float;
            /// Element-wise `lhs * rhs`.
            fn mul(lhs: Float, rhs: Float) -> Float;
            /// Element-wise `lhs / rhs`; division by zero gives IEEE infinities.
            fn div(lhs: Float, rhs: Float) -> Float;
            /// `tensor + scalar`, element-wise. Every scalar argument of an op is rounded once to the tensor's
            /// dtype, so an `F64` tensor computes with the `f64` given.
            fn add_scalar(tensor: Float, scalar: f64) -> Float;
            /// `tensor * scalar`, element-wise.
            fn mul_scalar(tensor: Float, scalar: f64) -> Float;
            /// `tensor ^ exponent`, element-wise.
            fn powf_scalar(tensor: Float, exponent: f64) -> Float;
            /// 1.0 where `tensor > threshold`, else 0.0. Not differentiable (its gradient is zero almost
            /// everywhere).
            fn greater_scalar(tensor: Float, threshold: f64) -> Float;
            /// `-tensor`, element-wise.
            fn neg(tensor: Float) -> Float;
            /// `e ^ tensor`, element-wise.
            fn exp(tensor: Float) -> Float;
            /// Natural logarithm, element-wise.
            fn log(tensor: Float) -> Float;
            /// `max(tensor, 0)`, element-wise.
            fn relu(tensor: Float) -> Float;
            /// `1 / (1 + e ^ -tensor)`, element-wise.
            fn sigmoid(tensor: Float) -> Float;
            /// The hyperbolic tangent, element-wise.
            fn tanh(tensor: Float) -> Float;

            /// The square root, element-wise (NaN below zero).
            fn sqrt(tensor: Float) -> Float = sqrt;
            /// `1 / tensor`, element-wise (IEEE infinities at zero).
            fn recip(tensor: Float) -> Float = recip;
            /// `|tensor|`, element-wise. Its gradient at 0 is 0.
            fn abs(tensor: Float) -> Float = abs;
            /// The sine, element-wise.
            fn sin(tensor: Float) -> Float = sin;
            /// The cosine, element-wise.
            fn cos(tensor: Float) -> Float = cos;
            /// The error function, element-wise.
            fn erf(tensor: Float) -> Float = erf;
            /// `x * Φ(x)` with `Φ` the standard normal CDF (the exact GELU, through `erf`), element-wise.
            fn gelu(tensor: Float) -> Float = gelu;
            /// `x * sigmoid(x)` (SiLU, swish), element-wise.
            fn silu(tensor: Float) -> Float = silu;
            /// `min(max(tensor, min), max)`, element-wise; `min <= max` is required. The gradient passes where
            /// `min <= x <= max`.
            fn clamp(tensor: Float, min: f64, max: f64) -> Float = clamp;
            /// The larger of `lhs` and `rhs`, element-wise, broadcasting. The gradient goes to `lhs` on ties.
            fn maximum(lhs: Float, rhs: Float) -> Float = maximum;
            /// The smaller of `lhs` and `rhs`, element-wise, broadcasting. The gradient goes to `lhs` on ties.
            fn minimum(lhs: Float, rhs: Float) -> Float = minimum;

            // ---- linear algebra and layout --------------------------------------------------------------------

            /// The matrix product over the last two dimensions; the dimensions in front (batches) broadcast, numpy style.
            fn matmul(lhs: Float, rhs: Float) -> Float;
            /// Swaps two dimensions (a transpose when they are the last two).
            fn swap_dims(tensor: Float, dim0: usize, dim1: usize) -> Float;
            /// The same elements, in row-major order, under another shape with the same element count.
            fn reshape(tensor: Float, shape: Shape) -> Float;
            /// `len` entries of `axis` starting at `start`.
            fn narrow(tensor: Float, axis: usize, start: usize, len: usize) -> Float;
            /// Concatenation along `axis`; every other dimension must agree.
            fn cat(tensors: [Float], axis: usize) -> Float;
            /// The dimensions reordered: dimension `i` of the output is dimension `axes[i]` of the input; `axes` must
            /// name every dimension once.
            fn permute(tensor: Float, axes: (::std::vec::Vec<usize>)) -> Float = permute;
            /// The tensor broadcast to `shape` (numpy rules: size-1 dimensions stretch, missing ones are added in
            /// front). By default an `add` to zeros, so its gradient is summed back like any broadcast's.
            fn expand(tensor: Float, shape: Shape) -> Float = expand;
            /// The entries of each of `axes` in reverse order.
            fn flip(tensor: Float, axes: (::std::vec::Vec<usize>)) -> Float = flip;
            /// The tensor with entries `start..start + len` of `axis` replaced by `source` (its shape but `len`
            /// along `axis`). By default `cat` of two `narrow`s and `source`, so differentiable in both.
            fn slice_assign(tensor: Float, axis: usize, start: usize, source: Float) -> Float = slice_assign;
            /// The tensor tiled `times[d]` times along each dimension `d` (`times` has one entry per dimension).
            /// By default `unsqueeze`, `expand` and `reshape` per dimension, so differentiable wherever they are.
            fn repeat(tensor: Float, times: (::std::vec::Vec<usize>)) -> Float = repeat;
            /// `tensors` (of one shape) stacked along a new dimension `axis`. By default `unsqueeze` then `cat`.
            fn stack(tensors: [Float], axis: usize) -> Float = stack;
            /// A dimension of size 1 inserted before dimension `axis` (`axis == rank` appends one). By default a
            /// `reshape`, so differentiable wherever `reshape` is.
            fn unsqueeze(tensor: Float, axis: usize) -> Float = unsqueeze;
            /// Dimension `axis`, which must have size 1, removed (a rank-1 tensor has none to lose). By default a
            /// `reshape`.
            fn squeeze(tensor: Float, axis: usize) -> Float = squeeze;

            // ---- indexing: int tensors pick from float ones ---------------------------------------------------

            /// The entries of `axis` at `indices` (a 1-D int tensor), in that order; an index out of range is an
            /// `Err` naming it. Differentiable in `tensor`.
            fn index_select(tensor: Float, axis: usize, indices: Int) -> Float = index_select;
            /// `tensor` with the slices of `source` along `axis` added at `indices` (a 1-D int tensor; repeated
            /// indices add up): the backward of `index_select`, and `select_assign` by addition. `source` has
            /// `tensor`'s shape but `indices.len()` along `axis`. Differentiable in both float operands.
            fn select_add(tensor: Float, axis: usize, indices: Int, source: Float) -> Float = select_add;
            /// Along `axis`, the entry that `indices` names for each position: `indices` (int) has the tensor's rank,
            /// its sizes but along `axis`, and the output its shape. An index out of range is an `Err`.
            /// Differentiable in `tensor`.
            fn gather(tensor: Float, axis: usize, indices: Int) -> Float = gather;
            /// `tensor` with each element of `source` added along `axis` at the place `indices` names (the
            /// backward of `gather`); `source` has `indices`' shape. Differentiable in both float operands.
            fn scatter_add(tensor: Float, axis: usize, indices: Int, source: Float) -> Float = scatter_add;
            /// The rows of `weights` (`[vocabulary, width]`) picked by `ids` (int, any shape): shape
            /// `ids.shape + [width]`. By default `index_select` between two reshapes, so differentiable in `weights`.
            fn embedding(weights: Float, ids: Int) -> Float = embedding;
            /// `[.., classes]` rows of 0.0 with 1.0 at each index of `indices` (int, any shape), of `dtype`; an index
            /// outside `0..classes` is an `Err`.
            fn one_hot(indices: Int, classes: usize, dtype: ($crate::DType)) -> Float = one_hot;

            // ---- reductions -----------------------------------------------------------------------------------

            /// Sum of every element, as a tensor of shape `[1]`.
            fn sum(tensor: Float) -> Float;
            /// Mean of every element, as a tensor of shape `[1]`.
            fn mean(tensor: Float) -> Float;
            /// Sum along `axis`, keeping it with size 1.
            fn sum_dim(tensor: Float, axis: usize) -> Float;
            /// Mean along `axis`, keeping it with size 1.
            fn mean_dim(tensor: Float, axis: usize) -> Float;
            /// `x - log(sum(exp(x)))` along `axis`, computed stably (the max is subtracted first).
            fn log_softmax(tensor: Float, axis: usize) -> Float;
            /// The largest entry along `axis`, keeping it with size 1 (NaN for a lane holding NaN). The gradient is
            /// shared evenly among tied maxima.
            fn max_dim(tensor: Float, axis: usize) -> Float = max_dim;
            /// The smallest entry along `axis`, keeping it with size 1; see `max_dim`.
            fn min_dim(tensor: Float, axis: usize) -> Float = min_dim;
            /// The product along `axis`, keeping it with size 1. Its gradient is the product of the other entries
            /// of the lane (exact with zeros, not a division).
            fn prod_dim(tensor: Float, axis: usize) -> Float = prod_dim;
            /// The product of every element, as a tensor of shape `[1]`. By default `prod_dim` of the flattened
            /// tensor.
            fn prod(tensor: Float) -> Float = prod;
            /// The largest entry, as a tensor of shape `[1]`. By default `max_dim` of the flattened tensor.
            fn max(tensor: Float) -> Float = max;
            /// The smallest entry, as a tensor of shape `[1]`. By default `min_dim` of the flattened tensor.
            fn min(tensor: Float) -> Float = min;
            /// The variance along `axis`, keeping it with size 1: the mean squared deviation, divided by
            /// `len - correction` rather than `len` (0 for the population variance, 1 for the unbiased estimate).
            /// By default composed from `mean_dim`, `sub`, `mul` and `sum_dim`.
            fn var_dim(tensor: Float, axis: usize, correction: usize) -> Float = var_dim;
            /// `exp(x) / sum(exp(x))` along `axis`. By default `exp(log_softmax(x))`, composed from this backend's
            /// own ops (so differentiable wherever they are); a backend may fuse it.
            fn softmax(tensor: Float, axis: usize) -> Float = softmax;
            /// The index of the largest entry along `axis` (the first one on ties), as an int tensor keeping the
            /// axis with size 1; an empty axis is an `Err`.
            fn argmax(tensor: Float, axis: usize) -> Int;
            /// The index of the smallest entry along `axis` (the first one on ties), as an int tensor keeping the
            /// axis with size 1. NaN entries are skipped; an empty axis is an `Err`.
            fn argmin(tensor: Float, axis: usize) -> Int = argmin;

            // ---- comparisons and masks: bool tensors from float ones, and back ---------------------------------

            /// `lhs == rhs`, element-wise, broadcasting.
            fn eq(lhs: Float, rhs: Float) -> Bool = eq;
            /// `lhs != rhs`, element-wise, broadcasting (true where either is NaN).
            fn ne(lhs: Float, rhs: Float) -> Bool = ne;
            /// `lhs < rhs`, element-wise, broadcasting.
            fn lt(lhs: Float, rhs: Float) -> Bool = lt;
            /// `lhs <= rhs`, element-wise, broadcasting.
            fn le(lhs: Float, rhs: Float) -> Bool = le;
            /// `lhs > rhs`, element-wise, broadcasting.
            fn gt(lhs: Float, rhs: Float) -> Bool = gt;
            /// `lhs >= rhs`, element-wise, broadcasting.
            fn ge(lhs: Float, rhs: Float) -> Bool = ge;
            /// `tensor == scalar`, element-wise.
            fn eq_scalar(tensor: Float, scalar: f64) -> Bool = eq_scalar;
            /// `tensor != scalar`, element-wise.
            fn ne_scalar(tensor: Float, scalar: f64) -> Bool = ne_scalar;
            /// `tensor < scalar`, element-wise.
            fn lt_scalar(tensor: Float, scalar: f64) -> Bool = lt_scalar;
            /// `tensor <= scalar`, element-wise.
            fn le_scalar(tensor: Float, scalar: f64) -> Bool = le_scalar;
            /// `tensor > scalar`, element-wise.
            fn gt_scalar(tensor: Float, scalar: f64) -> Bool = gt_scalar;
            /// `tensor >= scalar`, element-wise.
            fn ge_scalar(tensor: Float, scalar: f64) -> Bool = ge_scalar;
            /// `on_true` where `mask` holds, else `on_false`; the three broadcast to one shape. Differentiable in
            /// both branches (each gets the gradient where it was picked).
            fn mask_where(mask: Bool, on_true: Float, on_false: Float) -> Float = mask_where;
            /// `value` where `mask` holds, else `tensor`; `mask` broadcasts to `tensor`'s shape. Differentiable in
            /// `tensor` (zero gradient where filled).
            fn mask_fill(tensor: Float, mask: Bool, value: f64) -> Float = mask_fill;

            // ---- module ops: convolution and pooling over [batch, channels, height, width] -------------------

            /// im2col: `[n, c, h, w]` to `[n, c * kh * kw, oh * ow]`, one row per channel and tap of `window`, one
            /// column per output position; taps in the padding read `pad_value`. Differentiable (its backward is
            /// `fold2d`).
            fn unfold2d(tensor: Float, window: ($crate::backend::Window2d), pad_value: f64) -> Float = unfold2d;
            /// col2im, the adjoint of `unfold2d`: columns back to `[n, c, height, width]`, overlapping taps added up.
            fn fold2d(tensor: Float, height: usize, width: usize, window: ($crate::backend::Window2d)) -> Float = fold2d;
            /// The 2-D convolution (cross-correlation) of `[n, c, h, w]` by `[out, c / groups, kh, kw]`, without a
            /// bias. By default `unfold2d` then one batched `matmul` per group.
            fn conv2d(input: Float, weight: Float, options: ($crate::backend::Conv2dOptions)) -> Float = conv2d;
            /// The 1-D convolution of `[n, c, length]` by `[out, c / groups, kernel]`, without a bias. By default
            /// `conv2d` of a height-1 image.
            fn conv1d(input: Float, weight: Float, options: ($crate::backend::Conv1dOptions)) -> Float = conv1d;
            /// The transposed 2-D convolution (the gradient of `conv2d` by its input) of `[n, c, h, w]` by
            /// `[c, out / groups, kh, kw]`. By default one `matmul` per group then `fold2d`.
            fn conv_transpose2d(input: Float, weight: Float, options: ($crate::backend::Conv2dOptions)) -> Float = conv_transpose2d;
            /// The largest value of each window (`-inf` in the padding). Its gradient goes to the window's first
            /// maximum, the one `max_pool2d_indices` names.
            fn max_pool2d(input: Float, window: ($crate::backend::Window2d)) -> Float = max_pool2d;
            /// Where each window's maximum is, `[n, c, oh, ow]`: its flat index `row * width + column` in the
            /// input's `height x width` plane, the first one on ties (a NaN wins, as it wins `max_pool2d`); padding
            /// never does.
            fn max_pool2d_indices(input: Float, window: ($crate::backend::Window2d)) -> Int = max_pool2d_indices;
            /// The mean of each window, padding counted.
            fn avg_pool2d(input: Float, window: ($crate::backend::Window2d)) -> Float = avg_pool2d;
            /// Means over a grid of `[height, width]` nearly equal windows covering the input.
            fn adaptive_avg_pool2d(input: Float, output: ([usize; 2])) -> Float = adaptive_avg_pool2d;

            // ---- int (i64) tensors ----------------------------------------------------------------------------

            /// An int tensor holding `data` in row-major order. `data.len()` must equal the shape's element count.
            fn int_from_vec(data: (::std::vec::Vec<i64>), shape: Shape, device: Device) -> Int;
            /// The elements of an int tensor in row-major order.
            fn int_to_vec(tensor: Int) -> (::std::vec::Vec<i64>);
            /// The shape of an int tensor.
            fn int_shape(tensor: Int) -> [Shape];
            /// The device an int tensor lives on.
            fn int_device(tensor: Int) -> [Device];
            /// The same int values on another device of this backend (of a derived enum: of any of its variants).
            fn int_to_device(tensor: Int, device: Device) -> Int => int_to_device;
            /// `start, start + 1, ..., end - 1` as a 1-D int tensor; empty when `end <= start`.
            fn arange(start: i64, end: i64, device: Device) -> Int = arange;
            /// `lhs + rhs`, element-wise, broadcasting; wraps on overflow.
            fn int_add(lhs: Int, rhs: Int) -> Int = int_add;
            /// `lhs - rhs`, element-wise, broadcasting; wraps on overflow.
            fn int_sub(lhs: Int, rhs: Int) -> Int = int_sub;
            /// `lhs * rhs`, element-wise, broadcasting; wraps on overflow.
            fn int_mul(lhs: Int, rhs: Int) -> Int = int_mul;
            /// `lhs / rhs`, element-wise, broadcasting, rounding toward zero. A zero divisor (or `i64::MIN / -1`)
            /// is an `Err`, not a panic.
            fn int_div(lhs: Int, rhs: Int) -> Int = int_div;
            /// `tensor + scalar`, element-wise; wraps on overflow.
            fn int_add_scalar(tensor: Int, scalar: i64) -> Int = int_add_scalar;
            /// `tensor * scalar`, element-wise; wraps on overflow.
            fn int_mul_scalar(tensor: Int, scalar: i64) -> Int = int_mul_scalar;
            /// The sum of every element, as an int tensor of shape `[1]`; wraps on overflow.
            fn int_sum(tensor: Int) -> Int = int_sum;
            /// `lhs == rhs`, element-wise, broadcasting.
            fn int_eq(lhs: Int, rhs: Int) -> Bool = int_eq;
            /// `tensor == scalar`, element-wise.
            fn int_eq_scalar(tensor: Int, scalar: i64) -> Bool = int_eq_scalar;
            /// `lhs < rhs`, element-wise, broadcasting.
            fn int_lt(lhs: Int, rhs: Int) -> Bool = int_lt;
            /// `lhs <= rhs`, element-wise, broadcasting.
            fn int_le(lhs: Int, rhs: Int) -> Bool = int_le;
            /// `lhs > rhs`, element-wise, broadcasting.
            fn int_gt(lhs: Int, rhs: Int) -> Bool = int_gt;
            /// `lhs >= rhs`, element-wise, broadcasting.
            fn int_ge(lhs: Int, rhs: Int) -> Bool = int_ge;
            /// The same elements under another shape with the same element count.
            fn int_reshape(tensor: Int, shape: Shape) -> Int = int_reshape;
            /// The values as a float tensor of `dtype`, each rounded to the nearest value it holds (beyond 2^24 for
            /// `F32`, 2^53 for `F64`).
            fn int_to_float(tensor: Int, dtype: ($crate::DType)) -> Float = int_to_float;

            // ---- bool tensors ---------------------------------------------------------------------------------

            /// A bool tensor holding `data` in row-major order. `data.len()` must equal the shape's element count.
            fn bool_from_vec(data: (::std::vec::Vec<bool>), shape: Shape, device: Device) -> Bool;
            /// The elements of a bool tensor in row-major order.
            fn bool_to_vec(tensor: Bool) -> (::std::vec::Vec<bool>);
            /// The shape of a bool tensor.
            fn bool_shape(tensor: Bool) -> [Shape];
            /// The device a bool tensor lives on.
            fn bool_device(tensor: Bool) -> [Device];
            /// The same bool values on another device of this backend (of a derived enum: of any of its variants).
            fn bool_to_device(tensor: Bool, device: Device) -> Bool => bool_to_device;
            /// `lhs && rhs`, element-wise, broadcasting.
            fn bool_and(lhs: Bool, rhs: Bool) -> Bool = bool_and;
            /// `lhs || rhs`, element-wise, broadcasting.
            fn bool_or(lhs: Bool, rhs: Bool) -> Bool = bool_or;
            /// `!tensor`, element-wise.
            fn bool_not(tensor: Bool) -> Bool = bool_not;
            /// Whether any element holds, as a bool tensor of shape `[1]` (false for no elements).
            fn bool_any(tensor: Bool) -> Bool = bool_any;
            /// Whether every element holds, as a bool tensor of shape `[1]` (true for no elements).
            fn bool_all(tensor: Bool) -> Bool = bool_all;
            /// 1 where the tensor holds, else 0, as an int tensor.
            fn bool_to_int(tensor: Bool) -> Int = bool_to_int;
            /// 1.0 where the tensor holds, else 0.0, as a float tensor of `dtype`.
            fn bool_to_float(tensor: Bool, dtype: ($crate::DType)) -> Float = bool_to_float;

            // ---- host ops (collectives) -----------------------------------------------------------------------

            /// Runs a function on the tensor's values in host memory, e.g. a collective of the distributed engine.
            /// `Autodiff` overrides this to record `op.backward` in the graph, so a loss that goes through a
            /// collective trains correctly.
            fn host_op(tensor: Float, op: (::std::sync::Arc<dyn $crate::HostOp>)) -> Float = host_op;
        }
    };
}

/// The Rust type of a parameter of kind `$kind`, in a context that names the backend's types: its float tensor,
/// `&[float tensor]`, int and bool tensors, device, and the `Result` of each tensor.
///
/// A derived backend names its own generated types here rather than `Self::FloatTensor`, spanned where the user's
/// enum is, so that an error in them is reported there, once.
#[doc(hidden)]
#[macro_export]
macro_rules! __op_param_type {
    // A backend's own types: `Self: Float` is `&Self::FloatTensor`.
    ($backend:ident: $kind:tt) => {
        $crate::__op_backend_context!($backend, __op_param_type, $kind)
    };
    ([$float:ty, $floats:ty, $int:ty, $bool:ty, $device:ty $(, $result:ty)*] Float) => { &$float };
    ([$float:ty, $floats:ty, $int:ty, $bool:ty, $device:ty $(, $result:ty)*] [Float]) => { $floats };
    ([$float:ty, $floats:ty, $int:ty, $bool:ty, $device:ty $(, $result:ty)*] Int) => { &$int };
    ([$float:ty, $floats:ty, $int:ty, $bool:ty, $device:ty $(, $result:ty)*] Bool) => { &$bool };
    ([$float:ty, $floats:ty, $int:ty, $bool:ty, $device:ty $(, $result:ty)*] Device) => { &$device };
    ([$($context:ty),*] Shape) => { $crate::Shape };
    ([$($context:ty),*] ($($plain:tt)*)) => { $($plain)* };
    ([$($context:ty),*] $plain:ty) => { $plain };
}

/// Calls `$type_macro` (`__op_param_type` or `__op_output_type`) on `$kind` in the context of backend
/// `$backend`'s own types, listed once here for both.
#[doc(hidden)]
#[macro_export]
macro_rules! __op_backend_context {
    ($backend:ident, $type_macro:ident, $kind:tt) => {
        $crate::$type_macro!([
            $backend::FloatTensor,
            &[$backend::FloatTensor],
            $backend::IntTensor,
            $backend::BoolTensor,
            $backend::Device,
            $crate::Result<$backend::FloatTensor>,
            $crate::Result<$backend::IntTensor>,
            $crate::Result<$backend::BoolTensor>
        ] $kind)
    };
}

/// The type of a parameter of kind `$kind` held for lifetime `$lifetime`, for backend `$backend`.
#[doc(hidden)]
#[macro_export]
macro_rules! __op_field_type {
    ($lifetime:lifetime, $backend:ident, Float) => { &$lifetime $backend::FloatTensor };
    ($lifetime:lifetime, $backend:ident, [Float]) => { &$lifetime [$backend::FloatTensor] };
    ($lifetime:lifetime, $backend:ident, Int) => { &$lifetime $backend::IntTensor };
    ($lifetime:lifetime, $backend:ident, Bool) => { &$lifetime $backend::BoolTensor };
    ($lifetime:lifetime, $backend:ident, Device) => { &$lifetime $backend::Device };
    ($lifetime:lifetime, $backend:ident, $($plain:tt)*) => {
        $crate::__op_param_type!([(), (), (), (), ()] $($plain)*)
    };
}

/// The Rust type of an op's output `$output`, in the context of [`__op_param_type!`].
#[doc(hidden)]
#[macro_export]
macro_rules! __op_output_type {
    ($backend:ident: $output:tt) => {
        $crate::__op_backend_context!($backend, __op_output_type, $output)
    };
    ([$f:ty, $fs:ty, $i:ty, $b:ty, $device:ty, $float_result:ty, $int_result:ty, $bool_result:ty] Float) => {
        $float_result
    };
    ([$f:ty, $fs:ty, $i:ty, $b:ty, $device:ty, $float_result:ty, $int_result:ty, $bool_result:ty] Int) => {
        $int_result
    };
    ([$f:ty, $fs:ty, $i:ty, $b:ty, $device:ty, $float_result:ty, $int_result:ty, $bool_result:ty] Bool) => {
        $bool_result
    };
    ([$f:ty, $fs:ty, $i:ty, $b:ty, $device:ty, $($results:ty),*] [Device]) => { $device };
    ([$($context:ty),*] [Shape]) => { $crate::Shape };
    ([$($context:ty),*] [$($plain:tt)*]) => { $($plain)* };
    ([$($context:ty),*] ($($plain:tt)*)) => { $crate::Result<$($plain)*> };
}

/// The callback that declares every op as a method of the `Backend` trait.
#[doc(hidden)]
#[macro_export]
macro_rules! __backend_trait_methods {
    ({} $($(#[$doc:meta])* fn $op:ident($($param:ident: $kind:tt),*) -> $output:tt $(= $default:ident)? $(=> $derived:ident)?;)*) => {
        $($crate::__backend_trait_method! { $(#[$doc])* fn $op($($param: $kind),*) -> $output $(= $default)? })*
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __backend_trait_method {
    ($(#[$doc:meta])* fn $op:ident($($param:ident: $kind:tt),*) -> $output:tt) => {
        $(#[$doc])*
        fn $op($($param: $crate::__op_param_type!(Self: $kind)),*) -> $crate::__op_output_type!(Self: $output);
    };
    ($(#[$doc:meta])* fn $op:ident($($param:ident: $kind:tt),*) -> $output:tt = $default:ident) => {
        $(#[$doc])*
        fn $op($($param: $crate::__op_param_type!(Self: $kind)),*) -> $crate::__op_output_type!(Self: $output) {
            $crate::backend::defaults::$default::<Self>($($param),*)
        }
    };
}

/// The callback that lists the ops by name, for tests that must cover every op.
#[doc(hidden)]
#[macro_export]
macro_rules! __op_names {
    ({} $($(#[$doc:meta])* fn $op:ident($($param:ident: $kind:tt),*) -> $output:tt $(= $default:ident)? $(=> $derived:ident)?;)*) => {
        /// Every op of [`Backend`], by name, in the order of the op list.
        pub const OPS: &[&str] = &[$(stringify!($op)),*];
        /// The ops of [`Backend`] that have a default body, which a backend may override: a dispatching backend
        /// that left one out would silently bypass the override of the backend it dispatches to.
        pub const DEFAULTED_OPS: &[&str] = &[$($($crate::__op_name!($op, $default),)?)*];
    };
}

/// `stringify!($op)`, where `$default` only decides whether the op is listed.
#[doc(hidden)]
#[macro_export]
macro_rules! __op_name {
    ($op:ident, $default:ident) => {
        stringify!($op)
    };
}
