//! The names of what `#[extension]` puts in the hidden module beside a trait, which a derived enum reaches:
//! one definition for both sides. Every name is prefixed `__dispatch`/`__Dispatch`, so none meets a user's name: the
//! module sees the user's items through `use super::*`, which its own items would otherwise shadow.

use quote::format_ident;
use syn::Ident;

/// The hidden module of the extension `trait_ident`, beside the trait; spanned at `trait_ident`, so that a path to
/// it built from the user's path is reported at the user's tokens.
pub fn module(trait_ident: &Ident) -> Ident {
    format_ident!("__dispatch_extension_{}", trait_ident, span = trait_ident.span())
}

/// The trait a derived backend implements for the extension: the arm of each kind of operand.
pub fn routes_trait() -> Ident {
    format_ident!("__DispatchRoutes")
}

/// The module's visitor trait standing for dispatch-core's `core_visit_trait` (`VisitFloat`, ..., `VisitDevice`).
pub fn visit_trait(core_visit_trait: &str) -> Ident {
    format_ident!("__Dispatch{}", core_visit_trait)
}

/// The struct of a backend's ops as function pointers.
pub fn ops_struct() -> Ident {
    format_ident!("__DispatchOps")
}

/// `const fn` giving a backend's ops, bounded by the extension.
pub fn ops_fn() -> Ident {
    format_ident!("__dispatch_ops")
}
