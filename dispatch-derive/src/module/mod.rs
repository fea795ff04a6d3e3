//! `#[derive(Module)]`: the pipeline, `TokenStream -> TokenStream`, free of `proc_macro` so that unit tests can
//! call it. Read the struct (`ast`, `attr`), check it (`valid`) into a `model`, and expand it, or on error emit
//! every error with a stub impl (`fallback`).

mod ast;
mod attr;
mod expand;
mod fallback;
mod model;
#[cfg(test)]
mod tests;
mod valid;

use proc_macro2::TokenStream;
use quote::quote;
use syn::DeriveInput;

use ast::Input;

/// Expands `#[derive(Module)]` on `input`, the item's tokens.
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
    match (errors.finish(), model) {
        (Ok(()), Some(model)) => expand::expand(&model),
        // `valid::check` gives no model only with an error, so this arm always has one to write.
        (outcome, model) => {
            let errors = outcome.err().map(|error| error.write_errors());
            // Without a model (no backend parameter) there is no impl to stub.
            let stub = model.map(|model| fallback::stub(&model));
            quote!(#errors #stub)
        }
    }
}
