//! `#[dispatch_core::extension]`: a user's trait of ops (an *extension*), made dispatchable by every derived enum
//! that lists it in `#[dispatch(extensions(...))]`.
//!
//! The same pipeline as the derive: read the trait into an IR that keeps its syn nodes (`ir`), check every op and
//! report every problem at its span (`valid`), then expand (`expand`), or on error emit the errors with the trait
//! as written, so that code using it still compiles and only the real mistakes are reported.

mod expand;
mod ir;
mod op;
mod valid;

use proc_macro2::TokenStream;
use quote::quote;
use syn::ItemTrait;

/// Expands `#[extension]` (with its arguments `attr`) on `item`.
pub fn extension(attr: TokenStream, item: TokenStream) -> TokenStream {
    let original: ItemTrait = match syn::parse2(item.clone()) {
        Ok(original) => original,
        Err(error) => {
            let error = syn::Error::new(
                error.span(),
                "`#[extension]` goes on a trait of ops, e.g. `#[extension] pub trait FusedOps: Backend { ... }`",
            );
            let error = error.to_compile_error();
            return quote!(#error #item);
        }
    };
    let mut errors = darling::Error::accumulator();
    let options = ir::Options::parse(attr, &mut errors);
    let extension = ir::Extension::from_syn(&original, options);
    valid::check(&extension, &mut errors);
    match errors.finish() {
        Ok(()) => expand::expand(&extension),
        Err(error) => {
            let errors = error.write_errors();
            quote!(#errors #original)
        }
    }
}
