//! `Autodiff` and what it may wrap. `BaseBackend` bounds `Autodiff<B>`'s parameter and names `Autodiff<Self>` in its
//! own bound, so the two live in one file.

use std::fmt;
use std::marker::PhantomData;

use crate::backend::{Backend, DeviceOf};

/// A backend that does not record gradients itself, so [`Autodiff`] may wrap it.
///
/// Third-party backends opt in with `impl BaseBackend for MyBackend {}`. `Autodiff<B>` never implements it, and
/// the orphan rule keeps anyone else from implementing it for `Autodiff<B>`, so an autodiff backend inside an
/// autodiff backend cannot be named.
///
/// `Autodiff<B>` runs on `B`'s devices, so the device must also be a device of `Autodiff<B>`; the usual blanket
/// `impl<B: Backend<Device = MyDevice>> DeviceOf<B> for MyDevice` provides that. The bound sits here, on the
/// supertrait, so every `B: BaseBackend` carries it: a `where` clause on `Autodiff`'s impl instead would make the
/// compiler prove it through that same impl and overflow.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be wrapped in `Autodiff`: it is not a base backend",
    label = "`Autodiff` needs a backend that does not record gradients itself",
    note = "an autodiff backend inside an autodiff backend is not allowed; wrap the base backend once, e.g. \
            `Autodiff<Candle>`",
    note = "a third-party backend opts in with `impl dispatch_core::BaseBackend for MyBackend {{}}`"
)]
pub trait BaseBackend: Backend<Device: DeviceOf<Autodiff<Self>>> {}

/// A backend that records gradients, on the devices of the base backend `B` it wraps.
///
/// `Autodiff<B>` is not itself a [`BaseBackend`], so it cannot be wrapped again:
///
/// ```compile_fail,E0277
/// use dispatch_core::BaseBackend;
/// use dispatch_core::backends::Autodiff;
///
/// // error: `Autodiff<B>` cannot be wrapped in `Autodiff`: it is not a base backend
/// fn twice<B: BaseBackend>() -> Autodiff<Autodiff<B>> {
///     Autodiff::default()
/// }
/// ```
pub struct Autodiff<B: BaseBackend> {
    // `fn() -> B`: the marker owns no `B`, so it is Send, Sync, Copy whatever `B` is.
    backend: PhantomData<fn() -> B>,
}

// Written by hand: derives would ask more of `B` than `BaseBackend` does.
impl<B: BaseBackend> Clone for Autodiff<B> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<B: BaseBackend> Copy for Autodiff<B> {}

impl<B: BaseBackend> Default for Autodiff<B> {
    fn default() -> Self {
        Self { backend: PhantomData }
    }
}

impl<B: BaseBackend> fmt::Debug for Autodiff<B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Autodiff<{}>", B::name())
    }
}
