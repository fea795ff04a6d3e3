//! The conformance suite of dispatch's op table: what a backend of your own (any type implementing
//! `dispatch_core::Backend`) runs to learn where it differs from the reference, in one line of a test file:
//!
//! ```
//! # use dispatch_core::backends::{NdArray as MyBackend, NdArrayDevice as MyDevice};
//! dispatch_conformance::conformance_tests!(MyBackend, MyDevice::default());
//! ```
//!
//! Every op of the op list is called several ways, on operands with distinct entries along every axis, and with
//! windows, permutations and indices that move them (no call hands an operand back unchanged, so an op that moved
//! the wrong entries shows), then on operands that do not fit the op. The same calls run on the reference,
//! `dispatch_core::backends::NdArray`, and the outcomes are compared in four groups, one `#[test]` each, so a
//! failure names what differs:
//!
//! - **values** (`values_in_f32`, `values_in_f64`, `values_in_f16`, `values_in_bf16`): every call that computes on
//!   the reference computes on the backend too, with the same shape, the same ints and bools, and floats within
//!   the dtype's tolerance of the reference computing in `F64` on the same operands. A backend may refuse any
//!   dtype but `F32` (with an `Err` from `from_f64_vec`): the dtype is then reported as not checked.
//! - **dtypes** (`dtypes`): every op keeps its operands' dtype, and mixing two dtypes is the reference's error
//!   (`Error::DTypeMismatch`).
//! - **error kinds** (`error_kinds`): every call that fails on the reference fails on the backend with an error of
//!   the same variant, compared with [`std::mem::discriminant`] (the words may differ).
//! - **gradients** (`gradients`): under `Autodiff<MyBackend>`, every differentiable op's gradient matches central
//!   finite differences of its own forward in `F64`, to 1e-6.
//!
//! A difference names the op, the dtype and the call: call `n` is the `n`-th call the op's function makes in this
//! crate's `src/calls/` (first those that must compute, then those that must fail). Without the macro, [`check`]
//! returns the [`Report`] of every group but the gradients, and [`check_gradients`] the gradients' [`GroupReport`].
//!
//! The op list reaches the suite through `dispatch_core::for_each_op!`, so an op added to dispatch-core does not
//! compile here until the suite calls it.

mod calls;
mod checks;
mod gradients;
mod operands;
mod outcome;
mod report;
mod residency;
mod run;
#[cfg(test)]
mod suite_tests;

pub use checks::check;
pub use gradients::check_gradients;
pub use report::{Difference, Group, GroupReport, Report};
pub use residency::{OpResidency, residency};

/// What [`conformance_tests!`] expands to names; not part of the API.
#[doc(hidden)]
pub mod __private {
    pub use dispatch_core::DType;
    pub use dispatch_core::backends::Autodiff;
}

/// One `#[test]` per check group for a backend: `values_in_f32`, `values_in_f64`, `values_in_f16`,
/// `values_in_bf16`, `dtypes`, `error_kinds` and `gradients` (see the [crate] docs for what each checks).
///
/// - `conformance_tests!(MyBackend, device)`: every group; `MyBackend` must implement `BaseBackend`, so that
///   `Autodiff<MyBackend>` exists, whose gradients are checked.
/// - `conformance_tests!(MyBackend, device, without gradients)`: every group but the gradients, for a backend
///   that `Autodiff` does not wrap (an autodiff backend itself, say).
/// - `conformance_tests!(mod name, ...)`: the same tests in a module `name`, to run several backends in one file;
///   the module sees the names of the one it is written in.
///
/// `device` is an expression of the backend's device type, evaluated where a test needs it. The groups but the
/// gradients share one run of [`check`], made by the first test that needs it: well under a second for a backend
/// on the CPU in a debug build. The gradients take a few seconds (every entry of every operand moves twice per op).
///
/// ```
/// use dispatch_core::backends::{Autodiff, NdArray, NdArrayDevice};
///
/// dispatch_conformance::conformance_tests!(mod ndarray, NdArray, NdArrayDevice);
/// // Autodiff<NdArray>'s gradients are checked in the run of NdArray.
/// dispatch_conformance::conformance_tests!(mod autodiff, Autodiff<NdArray>, NdArrayDevice, without gradients);
/// # fn main() {}
/// ```
#[macro_export]
macro_rules! conformance_tests {
    (mod $module:ident, $($backend_and_device:tt)*) => {
        mod $module {
            #[allow(unused_imports)]
            use super::*;
            $crate::conformance_tests!($($backend_and_device)*);
        }
    };
    ($backend:ty, $device:expr, without gradients $(,)?) => {
        /// The report of [`check`](dispatch_conformance::check), made once for the tests of this module.
        fn conformance_report() -> &'static $crate::Report {
            static REPORT: ::std::sync::OnceLock<$crate::Report> = ::std::sync::OnceLock::new();
            REPORT.get_or_init(|| $crate::check::<$backend>(&$device))
        }

        $crate::__group_test!(values_in_f32, conformance_report, $crate::Group::Values($crate::__private::DType::F32));
        $crate::__group_test!(values_in_f64, conformance_report, $crate::Group::Values($crate::__private::DType::F64));
        $crate::__group_test!(values_in_f16, conformance_report, $crate::Group::Values($crate::__private::DType::F16));
        $crate::__group_test!(values_in_bf16, conformance_report, $crate::Group::Values($crate::__private::DType::BF16));
        $crate::__group_test!(dtypes, conformance_report, $crate::Group::DTypes);
        $crate::__group_test!(error_kinds, conformance_report, $crate::Group::ErrorKinds);
    };
    ($backend:ty, $device:expr $(,)?) => {
        $crate::conformance_tests!($backend, $device, without gradients);

        #[test]
        fn gradients() {
            $crate::check_gradients::<$crate::__private::Autodiff<$backend>>(&$device).assert_conforms();
        }
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __group_test {
    ($name:ident, $report:ident, $group:expr) => {
        #[test]
        fn $name() {
            match $report().group($group) {
                ::std::option::Option::Some(group) => group.assert_conforms(),
                ::std::option::Option::None => ::std::panic!("the report has no group {}", $group),
            }
        }
    };
}
