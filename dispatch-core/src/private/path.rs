//! What the expansion knows of the backend path a user wrote in `#[backend(P)]`: the concrete backend of its arm
//! (`P`, or `Autodiff<P>` for the `#[autodiff]` variant) and that backend's types, named through one trait spanned
//! on the user's path, so a path that is not a (base) backend is one error there.
//!
//! The expansion names every type of an arm through these traits rather than `Backend`: a path that is not a
//! backend then fails one bound, reported with the trait's message, where naming `Backend`'s items would also report
//! each of its supertraits at each use.

use std::fmt::Debug;

use super::route::{GradientsOf, NoGradients, RecordsGradients};
use crate::backend::Backend;
use crate::backends::Autodiff;
use crate::backends::BaseBackend;

/// Declares a path trait with its message, and its blanket impl for the paths `$bound` admits.
macro_rules! path_trait {
    ($(#[$attr:meta])* trait $name:ident for $p:ident: $bound:path => $backend:ty, $gradients:ty;) => {
        $(#[$attr])*
        pub trait $name {
            /// The arm's backend.
            type Backend: Backend<FloatTensor = Self::Tensor, IntTensor = Self::Int, BoolTensor = Self::Bool, Device = Self::Device>;
            /// Its float tensor.
            type Tensor: Clone + Debug + Send + Sync + 'static;
            /// Its int tensor.
            type Int: Clone + Debug + Send + Sync + 'static;
            /// Its bool tensor.
            type Bool: Clone + Debug + Send + Sync + 'static;
            /// Its device.
            type Device;
            /// What the arm offers for gradients.
            type Gradients: GradientsOf<Self::Backend>;

            /// The tensor enums' `Clone` and `Debug` go through these: `Clone::clone` of the tensor type itself
            /// would need its impl, which for a path that is no backend may be one more error.
            #[inline]
            fn clone_tensor(tensor: &Self::Tensor) -> Self::Tensor {
                tensor.clone()
            }

            /// See `clone_tensor`.
            fn debug_tensor(tensor: &Self::Tensor) -> &dyn Debug {
                tensor
            }

            /// See `clone_tensor`.
            #[inline]
            fn clone_int(tensor: &Self::Int) -> Self::Int {
                tensor.clone()
            }

            /// See `clone_tensor`.
            fn debug_int(tensor: &Self::Int) -> &dyn Debug {
                tensor
            }

            /// See `clone_tensor`.
            #[inline]
            fn clone_bool(tensor: &Self::Bool) -> Self::Bool {
                tensor.clone()
            }

            /// See `clone_tensor`.
            fn debug_bool(tensor: &Self::Bool) -> &dyn Debug {
                tensor
            }
        }

        #[diagnostic::do_not_recommend]
        impl<$p: $bound> $name for $p {
            type Backend = $backend;
            type Tensor = <$backend as Backend>::FloatTensor;
            type Int = <$backend as Backend>::IntTensor;
            type Bool = <$backend as Backend>::BoolTensor;
            type Device = <$backend as Backend>::Device;
            type Gradients = $gradients;
        }
    };
}

path_trait! {
    /// A `#[backend(P)]` variant's path: its arm is `P` itself, which records no gradients.
    #[diagnostic::on_unimplemented(
        message = "`{Self}` is not a dispatch backend",
        label = "not a `dispatch_core::Backend`",
        note = "a backend implements `dispatch_core::Backend`, like `dispatch_core::backends::Candle` or `NdArray`"
    )]
    trait BackendPath for P: Backend => P, NoGradients;
}

path_trait! {
    /// A base backend's path as the `#[autodiff]` variant sees it: its arm is `Autodiff<P>`, on `P`'s devices.
    #[diagnostic::on_unimplemented(
        message = "`{Self}` cannot be wrapped in `Autodiff`: it is not a base backend",
        label = "the `#[autodiff]` variant wraps every `#[backend]` variant in `Autodiff`",
        note = "an autodiff backend inside an autodiff backend is not allowed; name the base backend, e.g. `Candle`",
        note = "a third-party backend opts in with `impl dispatch_core::BaseBackend for MyBackend {{}}`"
    )]
    trait AutodiffPath for P: BaseBackend => Autodiff<P>, RecordsGradients;
}
