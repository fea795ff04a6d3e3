//! `#[derive(Dispatch)]` (see the `dispatch-core` crate for what it generates) and `#[derive(Module)]` (see
//! `dispatch-nn`).
//!
//! The pipeline lives in modules that do not depend on `proc_macro`, so a bench or test can include them with
//! `#[path]` and call `derive::derive` on token streams (see `tests/expansion.rs`).

#![warn(missing_docs)]
#![forbid(unsafe_code)]

mod ast;
mod attr;
mod derive;
mod expand;
mod extension;
mod fallback;
mod hidden;
mod model;
mod module;
#[cfg(test)]
mod tests;
mod valid;

use proc_macro::TokenStream;

/// Dispatch for a device enum; `dispatch_core`'s documentation shows what it generates.
///
/// `Display` and `FromStr` name devices: each variant has a name (`#[dispatch(name = "...")]`, else its own in
/// lowercase). A `#[backend]` variant displays as its name alone when it holds its field type's `Default` device
/// (`candle`) and as `name:<device>` otherwise (`candle:cuda:1`, the device written by its type's `Display`); the
/// `#[autodiff]` variant as `name:<base device>` (`autodiff:candle:cuda:1`); a `#[distributed]` variant as
/// `name:<rank>,<rank>...` (`cluster:candle,candle:cuda:1`). `FromStr` reads all of these, so a device displayed
/// and read back is equal to itself.
///
/// `From<field>` is generated for each variant, except:
/// - with `#[dispatch(no_from)]`;
/// - for a field written as a projection, `<Candle as Backend>::Device`: rustc cannot tell that such a type is not
///   the enum itself (rust-lang/rust#85898), so the impl would not compile; name the type instead (`CandleDevice`)
///   to get it. Everything else is generated for a projection too.
///
/// Two variants that would get `From` for one type (the same field, or the same backend) are a compile error at
/// the second, which asks for `no_from` on one of them. What the derive cannot see through needs `no_from` too,
/// or rustc reports conflicting `From` impls (E0119): two spellings of one type (an alias, a re-export) on two
/// variants, and an alias of a projection (`type Dev = <Candle as Backend>::Device;`).
#[proc_macro_derive(Dispatch, attributes(backend, autodiff, distributed, dispatch))]
pub fn derive_dispatch(input: TokenStream) -> TokenStream {
    derive::derive(input.into()).into()
}

/// Makes a trait of ops (an *extension*, such as a fused kernel) dispatchable by every derived enum that lists it
/// in `#[dispatch(extensions(path::to::Trait))]`.
///
/// Each op is an associated function like the ops of `Backend`: it takes the backend's own tensors and device by
/// reference (`&Self::FloatTensor`, `&[Self::FloatTensor]`, `&Self::IntTensor`, `&Self::BoolTensor`,
/// `&Self::Device`; its device after its tensors) and other values by value, and returns
/// `dispatch_core::Result<T>`. A derived enum's backend implements the trait by sending each op to the variant its
/// first tensor (else its device) lives on, through one exhaustive `match`; a later operand on another variant is
/// `Error::DeviceMismatch`. A variant whose backend does not implement the trait is a compile error at that
/// variant, which names the missing impl: for an `#[autodiff]` variant, `Autodiff<B>`'s impl, which records each
/// op's backward rule with `AutodiffTensor::custom_op`.
///
/// Beside the trait the attribute puts a hidden module, `__dispatch_extension_<Trait>`; the derive finds it next
/// to the path it is given, so re-export the two together, and declare the trait at module level (a module inside
/// a function body cannot see the function's items). Where the derive finds no such module, the build fails once,
/// at the trait's name in the listed path, saying to add the attribute. `#[extension(crate = path)]` names dispatch-core if it
/// was renamed.
#[proc_macro_attribute]
pub fn extension(attr: TokenStream, item: TokenStream) -> TokenStream {
    extension::extension(attr.into(), item.into()).into()
}

/// `dispatch_nn::Module` for a struct of modules, generic over its backend; see `dispatch-nn` for the rules.
///
/// Every field is a module named after it (a tuple struct's by its index), visited in declaration order, unless
/// it is marked `#[module(skip)]`. A field of a type that is not a module is a compile error at that field.
/// `#[module(crate = path)]` names dispatch-nn if it was renamed.
#[proc_macro_derive(Module, attributes(module))]
pub fn derive_module(input: TokenStream) -> TokenStream {
    module::derive(input.into()).into()
}
