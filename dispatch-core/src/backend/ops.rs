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

/// The ops of [`Backend`](crate::Backend): calls `$crate::$callback! { { context } entries... }`.
#[doc(hidden)]
#[macro_export]
macro_rules! __backend_ops {
    ($callback:ident { $($context:tt)* }) => {
        $crate::$callback! {
            { $($context)* }

            // ---- creation and inspection ----------------------------------------------------------------------

            /// A tensor holding `data` in row-major order. `data.len()` must equal the shape's element count.
            fn from_vec(data: (::std::vec::Vec<f32>), shape: Shape, device: Device) -> Float;
            /// A tensor filled with `value`.
            fn full(shape: Shape, value: f32, device: Device) -> Float;
            /// Uniform samples in `[low, high)` from a seeded generator: the same seed gives the same values on
            /// every backend.
            fn random_uniform(shape: Shape, low: f32, high: f32, seed: u64, device: Device) -> Float = random_uniform;
            /// Normal samples with the given mean and standard deviation, seeded like
            /// [`Backend::random_uniform`](crate::Backend::random_uniform).
            fn random_normal(shape: Shape, mean: f32, std: f32, seed: u64, device: Device) -> Float = random_normal;
            /// The elements in row-major order.
            fn to_vec(tensor: Float) -> (::std::vec::Vec<f32>);
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
            /// `tensor + scalar`, element-wise.
            fn add_scalar(tensor: Float, scalar: f32) -> Float;
            /// `tensor * scalar`, element-wise.
            fn mul_scalar(tensor: Float, scalar: f32) -> Float;
            /// `tensor ^ exponent`, element-wise.
            fn powf_scalar(tensor: Float, exponent: f32) -> Float;
            /// 1.0 where `tensor > threshold`, else 0.0. Not differentiable (its gradient is zero almost
            /// everywhere).
            fn greater_scalar(tensor: Float, threshold: f32) -> Float;
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

            // ---- linear algebra and layout --------------------------------------------------------------------

            /// Matrix product of two 2-D tensors, or of two 3-D batches with equal batch size.
            fn matmul(lhs: Float, rhs: Float) -> Float;
            /// Swaps two dimensions (a transpose when they are the last two).
            fn swap_dims(tensor: Float, dim0: usize, dim1: usize) -> Float;
            /// The same elements, in row-major order, under another shape with the same element count.
            fn reshape(tensor: Float, shape: Shape) -> Float;
            /// `len` entries of `axis` starting at `start`.
            fn narrow(tensor: Float, axis: usize, start: usize, len: usize) -> Float;
            /// Concatenation along `axis`; every other dimension must agree.
            fn cat(tensors: [Float], axis: usize) -> Float;

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
            /// The index of the largest entry along `axis` (the first one on ties), as `f32`, keeping the axis
            /// with size 1. Not differentiable.
            fn argmax(tensor: Float, axis: usize) -> Float;

            // ---- host ops (collectives) -----------------------------------------------------------------------

            /// Runs a function on the tensor's values in host memory, e.g. a collective of the distributed engine.
            /// `Autodiff` overrides this to record `op.backward` in the graph, so a loss that goes through a
            /// collective trains correctly.
            fn host_op(tensor: Float, op: (::std::sync::Arc<dyn $crate::HostOp>)) -> Float = host_op;
        }
    };
}

/// The Rust type of a parameter of kind `$kind`, for a backend whose float tensor is `$float`, a slice of them
/// (`&[$float]`) `$floats`, its device `$device` and `Result<$float>` `$result`.
///
/// A derived backend names its own generated types here rather than `Self::FloatTensor`, spanned where the user's
/// enum is, so that an error in them is reported there, once.
#[doc(hidden)]
#[macro_export]
macro_rules! __op_param_type {
    ([$float:ty, $floats:ty, $device:ty, $result:ty] Float) => { &$float };
    ([$float:ty, $floats:ty, $device:ty, $result:ty] [Float]) => { $floats };
    ([$float:ty, $floats:ty, $device:ty, $result:ty] Device) => { &$device };
    ([$float:ty, $floats:ty, $device:ty, $result:ty] Shape) => { $crate::Shape };
    ([$float:ty, $floats:ty, $device:ty, $result:ty] ($($plain:tt)*)) => { $($plain)* };
    ([$float:ty, $floats:ty, $device:ty, $result:ty] $plain:ty) => { $plain };
}

/// The type of a parameter of kind `$kind` held for lifetime `$lifetime`, as [`__op_param_type!`] names it.
#[doc(hidden)]
#[macro_export]
macro_rules! __op_field_type {
    ($lifetime:lifetime, [$float:ty, $floats:ty, $device:ty, $result:ty] Float) => { &$lifetime $float };
    ($lifetime:lifetime, [$float:ty, $floats:ty, $device:ty, $result:ty] [Float]) => { &$lifetime [$float] };
    ($lifetime:lifetime, [$float:ty, $floats:ty, $device:ty, $result:ty] Device) => { &$lifetime $device };
    ($lifetime:lifetime, [$float:ty, $floats:ty, $device:ty, $result:ty] $($plain:tt)*) => {
        $crate::__op_param_type!([$float, $floats, $device, $result] $($plain)*)
    };
}

/// The Rust type of an op's output `$output`, as [`__op_param_type!`] names types.
#[doc(hidden)]
#[macro_export]
macro_rules! __op_output_type {
    ([$float:ty, $floats:ty, $device:ty, $result:ty] Float) => { $result };
    ([$float:ty, $floats:ty, $device:ty, $result:ty] [Device]) => { $device };
    ([$float:ty, $floats:ty, $device:ty, $result:ty] [Shape]) => { $crate::Shape };
    ([$float:ty, $floats:ty, $device:ty, $result:ty] [$($plain:tt)*]) => { $($plain)* };
    ([$float:ty, $floats:ty, $device:ty, $result:ty] ($($plain:tt)*)) => { $crate::Result<$($plain)*> };
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
        fn $op($($param: $crate::__op_param_type!([Self::FloatTensor, &[Self::FloatTensor], Self::Device, $crate::Result<Self::FloatTensor>] $kind)),*) -> $crate::__op_output_type!([Self::FloatTensor, &[Self::FloatTensor], Self::Device, $crate::Result<Self::FloatTensor>] $output);
    };
    ($(#[$doc:meta])* fn $op:ident($($param:ident: $kind:tt),*) -> $output:tt = $default:ident) => {
        $(#[$doc])*
        fn $op($($param: $crate::__op_param_type!([Self::FloatTensor, &[Self::FloatTensor], Self::Device, $crate::Result<Self::FloatTensor>] $kind)),*) -> $crate::__op_output_type!([Self::FloatTensor, &[Self::FloatTensor], Self::Device, $crate::Result<Self::FloatTensor>] $output) {
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
