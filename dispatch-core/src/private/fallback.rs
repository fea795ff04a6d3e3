//! The stand-in backend of an enum whose derive failed.

use crate::backend::Backend;
use crate::device::{BackendDevice, DeviceOf};
use crate::error::Error;
use std::convert::Infallible;
use std::fmt::Debug;
use std::marker::PhantomData;

/// The backend of an enum whose derive failed: it lets the user's code type-check, so that they see the derive's
/// error rather than a cascade. It cannot be reached at run time, since the crate does not compile.
pub struct FallbackBackend<D>(PhantomData<fn() -> D>);

impl<D> Clone for FallbackBackend<D> {
    fn clone(&self) -> Self {
        Self(PhantomData)
    }
}

impl<D> Debug for FallbackBackend<D> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("FallbackBackend")
    }
}

/// The one error every op of the fallback backend returns.
fn derive_failed(op: &'static str) -> Error {
    // Unreachable: a crate whose derive failed does not compile, so no variant is worth adding for it.
    Error::invalid(op, "the device enum's `#[derive(Dispatch)]` failed")
}

impl<D> Backend for FallbackBackend<D>
where
    D: DeviceOf<Self> + BackendDevice,
{
    type Device = D;
    type FloatTensor = Infallible;
    type IntTensor = Infallible;
    type BoolTensor = Infallible;

    fn name() -> String {
        String::from("fallback")
    }

    crate::for_each_op! { __fallback_backend_methods {} }
}

/// The callback that gives the fallback backend every op: a tensor operand cannot exist, and an op without one
/// returns the derive's error.
#[doc(hidden)]
#[macro_export]
macro_rules! __fallback_backend_methods {
    ({} $($(#[$doc:meta])* fn $op:ident($($param:ident: $kind:tt),*) -> $output:tt $(= $default:ident)? $(=> $derived:ident)?, $autodiff:ident;)*) => {
        $($crate::__fallback_backend_method! { fn $op($($param: $kind),*) -> $output })*
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __fallback_backend_method {
    (fn $op:ident($tensor:ident: Float $(, $param:ident: $kind:tt)*) -> $output:tt) => {
        $crate::__fallback_backend_method!(@uninhabited $op, $tensor: Float $(, $param: $kind)* -> $output);
    };
    (fn $op:ident($tensor:ident: Int $(, $param:ident: $kind:tt)*) -> $output:tt) => {
        $crate::__fallback_backend_method!(@uninhabited $op, $tensor: Int $(, $param: $kind)* -> $output);
    };
    (fn $op:ident($tensor:ident: Bool $(, $param:ident: $kind:tt)*) -> $output:tt) => {
        $crate::__fallback_backend_method!(@uninhabited $op, $tensor: Bool $(, $param: $kind)* -> $output);
    };
    (fn $op:ident($($param:ident: $kind:tt),*) -> $output:tt) => {
        fn $op($($param: $crate::__op_param_type!(Self: $kind)),*) -> $crate::__op_output_type!(Self: $output) {
            $(let _ = $param;)*
            Err(derive_failed(stringify!($op)))
        }
    };
    (@uninhabited $op:ident, $tensor:ident: $tensor_kind:tt $(, $param:ident: $kind:tt)* -> $output:tt) => {
        fn $op(
            $tensor: $crate::__op_param_type!(Self: $tensor_kind),
            $($param: $crate::__op_param_type!(Self: $kind)),*
        ) -> $crate::__op_output_type!(Self: $output) {
            $(let _ = $param;)*
            match *$tensor {}
        }
    };
}
