//! The pipeline, `TokenStream -> TokenStream`, free of `proc_macro` so that unit tests and benches can call it:
//! read the input (`ast`), check it (`valid`), and expand it, or on error emit every error with stubs
//! (`fallback`).

use proc_macro2::TokenStream;
use quote::quote;
use syn::DeriveInput;

use crate::ast::Input;
use crate::{expand, fallback, valid};

/// Expands `#[derive(Dispatch)]` on `input`, the item's tokens.
pub fn derive(input: TokenStream) -> TokenStream {
    let input: DeriveInput = match syn::parse2(input) {
        Ok(input) => input,
        Err(error) => return error.to_compile_error(),
    };
    let mut errors = darling::Error::accumulator();
    let Some(parsed) = Input::from_syn(&input, &mut errors) else {
        return darling::Error::multiple(errors.into_inner()).write_errors();
    };
    let model = valid::check(&parsed, &mut errors);
    match errors.finish() {
        Ok(()) => expand::expand(&model),
        Err(error) => {
            let errors = error.write_errors();
            let stubs = fallback::stubs(&parsed);
            quote!(#errors #stubs)
        }
    }
}
