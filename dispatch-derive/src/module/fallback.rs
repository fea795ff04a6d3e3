//! What the derive emits next to its errors: an impl of `Module` that keeps the struct as it is, so that the user
//! sees the derive's errors and not a cascade of "`Module` is not implemented" where their code uses the struct.
//! It is never run: the crate does not compile.

use proc_macro2::TokenStream;
use quote::quote;

use super::expand::impl_header;
use super::model::Model;

pub fn stub(model: &Model) -> TokenStream {
    let Model { backend, private, .. } = model;
    let header = impl_header(model, Vec::new());
    quote! {
        const _: () = {
            #[automatically_derived]
            #header {
                fn map_params(
                    self,
                    _: &#private::str,
                    _: &mut dyn #private::ParamMapper<#backend>,
                ) -> #private::Result<Self> {
                    #private::Ok(self)
                }
            }
        };
    }
}
