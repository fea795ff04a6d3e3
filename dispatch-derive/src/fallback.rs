//! What the derive emits next to its errors: stub items that let the user's code type-check, so that they see
//! the derive's errors and not a cascade of "trait not implemented" where their code uses the enum (an
//! `AutodiffDevice<Self>` field alone needs `Self: Dispatch`).

use proc_macro2::TokenStream;
use quote::quote;

use crate::ast::Input;
use crate::model::{self, ItemNames};

/// Stubs of every generated item and impl, for an enum that is not generic (a generic enum is rejected and gets
/// none: a stub could not name its parameters' bounds).
pub fn stubs(input: &Input) -> TokenStream {
    let original = input.original;
    if !original.generics.params.is_empty() || original.generics.where_clause.is_some() {
        return quote!();
    }
    let (vis, ident) = (&original.vis, &original.ident);
    let private = model::private_path(input.options.krate.as_ref());
    let ItemNames {
        backend,
        tensor,
        local,
        base,
        autodiff_tensor,
        int_tensor,
        autodiff_int_tensor,
        bool_tensor,
        autodiff_bool_tensor,
    } = ItemNames::with_defaults(ident, &input.options);
    // Naming each backend path keeps it checked (a misspelled path is still reported) and its import used.
    let backend_paths = input.variants.iter().flat_map(|variant| {
        let cfgs = &variant.cfgs;
        variant.roles.iter().filter_map(move |role| {
            let path = role.backend.as_ref()?;
            Some(quote!(#(#cfgs)* const _: ::core::marker::PhantomData<#path> = ::core::marker::PhantomData;))
        })
    });
    quote! {
        #(#backend_paths)*

        #vis type #backend = #private::FallbackBackend<#ident>;
        #vis type #tensor = #private::Infallible;
        #vis type #local = #ident;
        #vis type #base = #private::Infallible;
        #vis type #autodiff_tensor = #private::Infallible;
        #vis type #int_tensor = #private::Infallible;
        #vis type #autodiff_int_tensor = #private::Infallible;
        #vis type #bool_tensor = #private::Infallible;
        #vis type #autodiff_bool_tensor = #private::Infallible;

        const _: () = {
            #[automatically_derived]
            impl ::core::fmt::Display for #ident {
                fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                    f.write_str(::core::stringify!(#ident))
                }
            }

            #[automatically_derived]
            impl ::core::str::FromStr for #ident {
                type Err = #private::ParseDeviceError;

                fn from_str(input: &str) -> #private::Result<Self, #private::ParseDeviceError> {
                    #private::Err(#private::ParseDeviceError::unknown(input, &[]))
                }
            }

            #[automatically_derived]
            impl #private::BackendDevice for #ident {
                fn available() -> #private::Vec<Self> { #private::Vec::new() }
            }

            #[automatically_derived]
            impl #private::Dispatch for #ident {
                type Backend = #private::FallbackBackend<#ident>;
                type Local = #ident;
                type Base = #private::Infallible;
                type Distributed = #private::Infallible;

                fn names() -> &'static [&'static str] { &[] }

                fn route(&self) -> #private::Route<#ident, #private::Infallible> {
                    #private::Route::Local(::core::clone::Clone::clone(self))
                }

                fn is_distributed(&self) -> bool { false }
            }

            #[automatically_derived]
            impl #private::DeviceOf<#private::FallbackBackend<#ident>> for #ident {
                fn as_device(&self) -> &#ident { self }
            }
        };
    }
}
