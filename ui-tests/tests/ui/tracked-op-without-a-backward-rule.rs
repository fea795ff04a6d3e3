//! `Autodiff`'s impl is written from the op list: every op marked `tracked` calls its rule, so an impl over rules
//! that lack one (here `exp`'s) does not compile, where a hand-written impl would have left `exp` to a default that
//! records no graph.
use dispatch_core::backends::{AutodiffTensor, NdArray, NdArrayDevice};
use dispatch_core::Backend;

/// `mod rules`: every backward rule of dispatch's `Autodiff` but `exp`'s, one for each op the op list marks
/// `tracked`, so that the case lacks `exp`'s rule alone whatever ops are added.
macro_rules! rules_but_exp {
    ({} $($(#[$doc:meta])* fn $op:ident($($param:ident: $kind:tt),*) -> $output:tt
        $(= $default:ident)? $(=> $derived:ident)?, $autodiff:ident;)*) => {
        mod rules {
            $(crate::rule_of! { $autodiff $op })*
        }
    };
}

/// The `pub use` of `$op`'s rule if the op is tracked, `exp`'s excepted.
macro_rules! rule_of {
    (tracked exp) => {};
    (tracked $op:ident) => {
        pub use dispatch_core::__private01::autodiff_rules::$op;
    };
    ($autodiff:ident $op:ident) => {};
}

pub(crate) use {rule_of, rules_but_exp};

dispatch_core::for_each_op! { crate::rules_but_exp {} }

#[derive(Clone, Copy, Debug, Default)]
pub struct Traced;

impl Backend for Traced {
    type Device = NdArrayDevice;
    type FloatTensor = AutodiffTensor<NdArray>;
    type IntTensor = <NdArray as Backend>::IntTensor;
    type BoolTensor = <NdArray as Backend>::BoolTensor;

    fn name() -> String {
        "traced".to_owned()
    }

    dispatch_core::for_each_op! { __autodiff_methods { NdArray, [crate::rules] } }
}

fn main() {}
