//! `#[derive(Dispatch)]`; see the `dispatch-core` crate for what it generates.
//!
//! The pipeline lives in modules that do not depend on `proc_macro`, so a bench or test can include them with
//! `#[path]` and call `derive::derive` on token streams (see `tests/expansion.rs`).

mod ast;
mod attr;
mod derive;
mod expand;
mod fallback;
mod model;
#[cfg(test)]
mod tests;
mod valid;

use proc_macro::TokenStream;

/// Dispatch for a device enum; `dispatch_core`'s documentation shows what it generates.
///
/// `Display` and `FromStr` name variants, not devices: each variant has one name (`#[dispatch(name = "...")]`, else
/// its own in lowercase), which a backend variant displays whatever device it holds, and which parses back to the
/// variant on its field type's default device (`Default`).
#[proc_macro_derive(Dispatch, attributes(backend, autodiff, distributed, dispatch))]
pub fn derive_dispatch(input: TokenStream) -> TokenStream {
    derive::derive(input.into()).into()
}
