//! The code of a valid extension: the trait as written (plus a `Backend` supertrait and a diagnostic for a
//! missing impl, unless it has its own), a hidden module beside it, and the trait for every derived backend.
//!
//! The hidden module (named in `hidden`) holds what a derived enum's backend needs to send each op to the variant
//! its operands live on: `__DispatchRoutes`, which the derive implements with one exhaustive `match` per kind of
//! operand; a visitor per op; and `__DispatchOps<X>`, backend `X`'s ops as function pointers, which
//! `__dispatch_ops::<X>()` gives only for an `X` that implements the trait. The derive calls it once per arm,
//! spanned at the variant, and hands the result to the visitor: a variant whose backend lacks the trait is one
//! unmet bound, reported there. What each op contributes is in `op`.

use proc_macro2::TokenStream;
use quote::quote;
use syn::TypeParamBound;

use super::ir::Extension;
use super::op::{self, Context};
use crate::hidden;

pub fn expand(extension: &Extension) -> TokenStream {
    let original = extension.original;
    let krate = extension.options.krate();
    let private = quote!(#krate::__private01);
    let (vis, ident) = (&original.vis, &original.ident);
    let context =
        Context { krate: krate.clone(), private: private.clone(), trait_ident: ident, hidden: hidden::module(ident) };
    let (hidden, routes_trait) = (&context.hidden, hidden::routes_trait());
    let trait_item = trait_item(extension, &krate);

    let pointer_fields = extension.ops.iter().filter_map(|each| op::pointer_field(&context, each));
    let pointers = extension.ops.iter().map(op::pointer);
    let module_items = hidden::module_items(&private, pointer_fields, pointers, &quote!(super::#ident), None);
    let calls = extension.ops.iter().filter_map(|each| op::call(&context, each));
    let visitors = extension.ops.iter().filter_map(|each| op::visitor(&context, each));
    let methods = extension.ops.iter().filter_map(|each| op::method(&context, each));
    let result_traits = result_traits(&private);
    quote! {
        #trait_item

        #[doc(hidden)]
        #[allow(non_camel_case_types, non_snake_case)]
        #vis mod #hidden {
            // The user's items, which an op's other parameters and output may name.
            #[allow(unused_imports)]
            use super::*;

            #module_items

            #result_traits
            #(#calls)*
            #(#visitors)*
        }

        // Not a way to implement the trait a user should be pointed to: a missing impl is reported as such.
        #[diagnostic::do_not_recommend]
        #[automatically_derived]
        impl<__DispatchBackend: #hidden::#routes_trait> #ident for __DispatchBackend {
            #(#methods)*
        }
    }
}

/// The traits through which an op's return type meets generated code: `__DispatchResult` names the error type of
/// any `Result<T, E>`, and `__DispatchError`, implemented by `dispatch_core::Error` alone, converts it; an op
/// returning another error type is an unmet `E: __DispatchError` at its return type, worded here.
fn result_traits(private: &TokenStream) -> TokenStream {
    let (result_trait, error_trait) = (op::result_trait(), op::error_trait());
    quote! {
        /// The error type of an op's output.
        pub trait #result_trait {
            type Error;
        }

        impl<T, E> #result_trait for ::core::result::Result<T, E> {
            type Error = E;
        }

        /// `dispatch_core::Error`, the error type of every op.
        #[diagnostic::on_unimplemented(
            message = "an extension op's error type must be `dispatch_core::Error`, not `{Self}`",
            label = "returns `Result<_, {Self}>`; write `dispatch_core::Result<T>`, which is `Result<T, dispatch_core::Error>`",
            note = "a derived backend reports its own errors through the op (an operand on another variant is \
                    `Error::DeviceMismatch`), so every op of an extension returns `dispatch_core::Result<T>`"
        )]
        pub trait #error_trait: ::core::marker::Sized {
            fn __dispatch_into(self) -> #private::Error;
            fn __dispatch_from(error: #private::Error) -> Self;
        }

        impl #error_trait for #private::Error {
            #[inline(always)]
            fn __dispatch_into(self) -> #private::Error {
                self
            }

            #[inline(always)]
            fn __dispatch_from(error: #private::Error) -> Self {
                error
            }
        }
    }
}

/// The trait as written, with `Backend` among its supertraits and, unless it has its own, a diagnostic that names
/// the missing impl at the variant whose backend lacks it.
fn trait_item(extension: &Extension, krate: &TokenStream) -> TokenStream {
    let original = extension.original;
    let (attrs, vis, ident, items) = (&original.attrs, &original.vis, &original.ident, &original.items);
    let has_diagnostic = attrs.iter().any(|attr| {
        let segments: Vec<String> = attr.path().segments.iter().map(|segment| segment.ident.to_string()).collect();
        segments == ["diagnostic", "on_unimplemented"]
    });
    let diagnostic = (!has_diagnostic).then(|| {
        let name = ident.to_string();
        let message = format!("the backend `{{Self}}` does not implement the extension `{name}`");
        let label = format!("this variant's backend has no `impl {name}`");
        let note = format!(
            "implement `{name}` for `{{Self}}`, or leave `{name}` out of this enum's `#[dispatch(extensions(...))]`"
        );
        let autodiff = format!(
            "for `Autodiff<B>`, `impl<B: {name} + BaseBackend> {name} for Autodiff<B>` records each op's backward \
             rule with `AutodiffTensor::custom_op`"
        );
        quote!(#[diagnostic::on_unimplemented(message = #message, label = #label, note = #note, note = #autodiff)])
    });
    let has_backend = original.supertraits.iter().any(|bound| match bound {
        TypeParamBound::Trait(bound) => bound.path.segments.last().is_some_and(|segment| segment.ident == "Backend"),
        _ => false,
    });
    let backend = (!has_backend).then(|| quote!(#krate::Backend));
    let bounds: Vec<TokenStream> = original.supertraits.iter().map(|bound| quote!(#bound)).chain(backend).collect();
    quote! {
        #(#attrs)*
        #diagnostic
        #vis trait #ident: #(#bounds)+* {
            #(#items)*
        }
    }
}
