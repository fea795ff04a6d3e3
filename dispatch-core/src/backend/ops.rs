//! The one list of `Backend`'s ops, split by family, and how an entry reads.
//!
//! [`for_each_op!`](crate::for_each_op) holds every op once, in one file per family under `backend/ops/`
//! (`creation`, `elementwise`, `matmul`, `layout`, `index`, `reduce`, `comparison`, `window`, `int_bool`, `host`;
//! the same names as the files of each backend, of the defaults, of `Autodiff`'s rules and of `Tensor`'s methods).
//! Everything that has to name every op expands that list through a callback macro: the `Backend` trait's
//! methods, `Autodiff`'s impl, the generated backend of every derived enum, the stand-in backend of a derive that
//! failed.
//!
//! An entry is `fn name(param: kind, ...) -> output, autodiff;`, its doc comment first. A parameter's kind is
//! - `Float`: a float tensor of the backend (`&Self::FloatTensor`),
//! - `[Float]`: a slice of them, only as the first tensor parameter,
//! - `Owned`: a float tensor taken by value (`Self::FloatTensor`), only as the first parameter: the caller gives it
//!   up, so where nothing else shares its memory the backend may write the output there,
//! - `Int`, `Bool`: an int or bool tensor of the backend (`&Self::IntTensor`, `&Self::BoolTensor`),
//! - `Device`: a device of the backend (`&Self::Device`),
//! - `Shape`: a [`Shape`](crate::shape::Shape),
//! - a type, in parentheses when it is more than one token (`(::std::vec::Vec<f32>)`), passed as it is. The entries
//!   expand in the crates of derived enums too, so a type that is not a primitive is written with its full path.
//!
//! The output is `Float`, `Int` or `Bool` (`Result` of the backend's tensor), a type in parentheses (`Result` of
//! it), or a type in brackets for an op that cannot fail (`[Shape]` is `Shape`, `[Device]` is `Self::Device`).
//!
//! After the output, `= default` gives the op a default body, `backend::defaults::<name>`, which a backend may
//! override; `=> derived` makes a derived enum's backend call `__private01::derived::<name>` instead of sending the
//! op to the backend its first tensor (else its device) lives on.
//!
//! Last, how [`Autodiff`](crate::backends::Autodiff) treats the op, from which its impl is generated:
//! - `tracked`: differentiable, computed by its rule `backends::autodiff::rules::<name>`, which records the backward
//!   rule; an op marked `tracked` whose rule does not exist does not compile;
//! - `forwarded`: the base backend's op on the inner tensors, recording nothing (comparisons, int and bool ops,
//!   argmax, creation: what has no gradient, or starts a graph's leaves);
//! - `composed`: not overridden, so the op's default runs over `Autodiff`'s own ops and is differentiable wherever
//!   they are (only an op with a default can be composed).

mod comparison;
mod creation;
mod elementwise;
mod host;
mod index;
mod int_bool;
mod layout;
mod matmul;
mod reduce;
mod window;

/// Expands a callback macro over every op of [`Backend`](crate::Backend): calls `$crate::$callback! { { context }
/// entries... }`, or, for a callback of another crate named by a path of two or more segments
/// (`crate::my_callback`), `path! { { context } entries... }`. This is how a crate outside dispatch-core (a test
/// suite that must call every op, a backend that wraps another and forwards every op) stays in step with the op
/// list: an op added to dispatch-core reaches the callback, and a callback that does not handle it fails to compile.
///
/// The entries are in the grammar of [`backend::ops`](crate::backend): one `$(#[$doc:meta])* fn
/// $op:ident($($param:ident: $kind:tt),*) -> $output:tt $(= $default:ident)? $(=> $derived:ident)?,
/// $autodiff:ident;` per op, in the order of [`OPS`](crate::backend::OPS).
///
/// ```
/// macro_rules! count_ops {
///     ({} $($(#[$doc:meta])* fn $op:ident($($param:ident: $kind:tt),*) -> $output:tt
///         $(= $default:ident)? $(=> $derived:ident)?, $autodiff:ident;)*) => {
///         const COUNT: usize = [$(stringify!($op)),*].len();
///     };
/// }
/// // A macro of this crate, named by its path.
/// pub(crate) use count_ops;
/// dispatch_core::for_each_op! { crate::count_ops {} }
///
/// fn main() {
///     assert_eq!(COUNT, dispatch_core::backend::OPS.len());
/// }
/// ```
#[macro_export]
macro_rules! for_each_op {
    ($first:ident $(:: $rest:ident)+ { $($context:tt)* }) => {
        $crate::__ops_chain! { [] [$first $(:: $rest)+] { $($context)* } }
    };
    ($callback:ident { $($context:tt)* }) => {
        $crate::__ops_chain! { [] [$crate::$callback] { $($context)* } }
    };
}

/// Gathers the families' entries, in order, then calls the callback with all of them: `$done` lists the families
/// gathered so far, each family macro appends its entries and calls back here.
#[doc(hidden)]
#[macro_export]
macro_rules! __ops_chain {
    ([] $callback:tt $context:tt $($entries:tt)*) => {
        $crate::__ops_creation! { [creation] $callback $context $($entries)* }
    };
    ([creation] $callback:tt $context:tt $($entries:tt)*) => {
        $crate::__ops_elementwise! { [elementwise] $callback $context $($entries)* }
    };
    ([elementwise] $callback:tt $context:tt $($entries:tt)*) => {
        $crate::__ops_matmul! { [matmul] $callback $context $($entries)* }
    };
    ([matmul] $callback:tt $context:tt $($entries:tt)*) => {
        $crate::__ops_layout! { [layout] $callback $context $($entries)* }
    };
    ([layout] $callback:tt $context:tt $($entries:tt)*) => {
        $crate::__ops_index! { [index] $callback $context $($entries)* }
    };
    ([index] $callback:tt $context:tt $($entries:tt)*) => {
        $crate::__ops_reduce! { [reduce] $callback $context $($entries)* }
    };
    ([reduce] $callback:tt $context:tt $($entries:tt)*) => {
        $crate::__ops_comparison! { [comparison] $callback $context $($entries)* }
    };
    ([comparison] $callback:tt $context:tt $($entries:tt)*) => {
        $crate::__ops_window! { [window] $callback $context $($entries)* }
    };
    ([window] $callback:tt $context:tt $($entries:tt)*) => {
        $crate::__ops_int_bool! { [int_bool] $callback $context $($entries)* }
    };
    ([int_bool] $callback:tt $context:tt $($entries:tt)*) => {
        $crate::__ops_host! { [host] $callback $context $($entries)* }
    };
    ([host] [$($callback:tt)*] { $($context:tt)* } $($entries:tt)*) => {
        $($callback)*! { { $($context)* } $($entries)* }
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
    ([$float:ty, $floats:ty, $int:ty, $bool:ty, $device:ty $(, $result:ty)*] Owned) => { $float };
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
    ($lifetime:lifetime, $backend:ident, Owned) => { $backend::FloatTensor };
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
    ({} $($(#[$doc:meta])* fn $op:ident($($param:ident: $kind:tt),*) -> $output:tt $(= $default:ident)? $(=> $derived:ident)?, $autodiff:ident;)*) => {
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
    ({} $($(#[$doc:meta])* fn $op:ident($($param:ident: $kind:tt),*) -> $output:tt $(= $default:ident)? $(=> $derived:ident)?, $autodiff:ident;)*) => {
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
