//! What the expansion knows of the backend path a user wrote in `#[backend(P)]`: the concrete backend of its arm
//! (`P`, or `Autodiff<P>` for the `#[autodiff]` variant) and that backend's types, named through one trait spanned
//! on the user's path, so a path that is not a (base) backend is one error there.

use std::fmt::Debug;

use super::route::{GradientsOf, NoGradients, RecordsGradients};
use super::*;

/// A `#[backend(P)]` variant's path: its arm is `P` itself.
///
/// The expansion names every type of the arm through this trait rather than `Backend`: a path that is not a backend
/// then fails this one bound, reported once with the message below, where naming `Backend`'s items would also
/// report each of its supertraits at each use.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a dispatch backend",
    label = "not a `dispatch_core::Backend`",
    note = "a backend implements `dispatch_core::Backend`, like `dispatch_core::backends::Candle` or `NdArray`"
)]
pub trait BackendPath {
    /// The arm's backend.
    type Backend: Backend<FloatTensor = Self::Tensor, Device = Self::Device>;
    /// Its float tensor.
    type Tensor: Clone + Debug + Send + Sync + 'static;
    /// Its device.
    type Device;
    /// What the arm offers for gradients: nothing.
    type Gradients: GradientsOf<Self::Backend>;

    /// The tensor enums' `Clone` and `Debug` go through these: `Clone::clone` of the tensor type itself would need
    /// its impl, which for a path that is no backend may be one more error.
    #[inline]
    fn clone_tensor(tensor: &Self::Tensor) -> Self::Tensor {
        tensor.clone()
    }

    /// See [`BackendPath::clone_tensor`].
    fn debug_tensor(tensor: &Self::Tensor) -> &dyn Debug {
        tensor
    }
}

#[diagnostic::do_not_recommend]
impl<P: Backend> BackendPath for P {
    type Backend = P;
    type Tensor = P::FloatTensor;
    type Device = P::Device;
    type Gradients = NoGradients;
}

/// A base backend's path as seen by the `#[autodiff]` variant: its arm is `Autodiff<P>`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be wrapped in `Autodiff`: it is not a base backend",
    label = "the `#[autodiff]` variant wraps every `#[backend]` variant in `Autodiff`",
    note = "an autodiff backend inside an autodiff backend is not allowed; name the base backend, e.g. `Candle`",
    note = "a third-party backend opts in with `impl dispatch_core::BaseBackend for MyBackend {{}}`"
)]
pub trait AutodiffPath {
    /// The arm's backend, `Autodiff<P>`.
    type Backend: Backend<FloatTensor = Self::Tensor, Device = Self::Device>;
    /// Its float tensor.
    type Tensor: Clone + Debug + Send + Sync + 'static;
    /// Its device: `P`'s.
    type Device;
    /// What the arm offers for gradients: `Autodiff<P>`'s.
    type Gradients: GradientsOf<Self::Backend>;

    /// See [`BackendPath::clone_tensor`].
    #[inline]
    fn clone_tensor(tensor: &Self::Tensor) -> Self::Tensor {
        tensor.clone()
    }

    /// See [`BackendPath::clone_tensor`].
    fn debug_tensor(tensor: &Self::Tensor) -> &dyn Debug {
        tensor
    }
}

#[diagnostic::do_not_recommend]
impl<P: BaseBackend> AutodiffPath for P {
    type Backend = Autodiff<P>;
    type Tensor = <Autodiff<P> as Backend>::FloatTensor;
    type Device = P::Device;
    type Gradients = RecordsGradients;
}
