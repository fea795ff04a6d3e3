//! The generated types: the local enum, the base enum, the tensor enums and the backend's unit struct.

use proc_macro2::Span;
use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};

use crate::expand::leaves::Leaf;
use crate::model::{Model, Role};

/// The enum of every non-distributed variant, for an enum with `#[distributed]` variants.
pub fn local_enum(model: &Model, local: &Model) -> TokenStream {
    let (vis, ident) = (&local.vis, &local.ident);
    let variants = local.devices.iter().map(|device| {
        let (cfg, variant, field) = (device.cfg(), &device.ident, &device.field);
        quote!(#cfg #variant(#field),)
    });
    let doc = format!("The local devices of `{}`: every variant but the distributed ones.", model.ident);
    quote! {
        #[doc = #doc]
        #[derive(::core::clone::Clone, ::core::fmt::Debug, ::core::cmp::PartialEq)]
        #vis enum #ident { #(#variants)* }
    }
}

/// The enum of the `#[backend]` variants alone, which the `#[autodiff]` variant wraps.
pub fn base_enum(model: &Model) -> TokenStream {
    let (vis, ident) = (&model.vis, &model.items.base);
    let variants = model.backends().map(|(device, _)| {
        let (cfg, variant, field) = (device.cfg(), &device.ident, &device.field);
        quote!(#cfg #variant(#field),)
    });
    let doc = format!("The base devices of `{}`: what its `#[autodiff]` variant wraps.", model.ident);
    quote! {
        #[doc = #doc]
        #[derive(::core::clone::Clone, ::core::fmt::Debug, ::core::cmp::PartialEq)]
        #vis enum #ident { #(#variants)* }
    }
}

/// The tensor enum, one variant per local variant, and the autodiff tensor enum, one variant per base backend.
pub fn tensor_enums(model: &Model, leaves: &[Leaf]) -> TokenStream {
    let (tensor, autodiff_tensor) = (&model.items.tensor, &model.items.autodiff_tensor);
    let variants: Vec<TensorVariant> = model
        .devices
        .iter()
        .filter_map(|device| {
            let (field, span) = match &device.role {
                Role::Backend(_) => {
                    let leaf = leaves.iter().find(|leaf| leaf.base.is_none() && leaf.device.ident == device.ident)?;
                    (leaf.item("Tensor"), leaf.span())
                }
                Role::Autodiff => (quote!(#autodiff_tensor), Span::call_site()),
                Role::Distributed => return None,
            };
            Some(TensorVariant { cfg: device.cfg(), ident: &device.ident, field, span })
        })
        .collect();
    let doc = format!("A tensor of `{}`, on one of the variants of `{}`.", model.items.backend, model.ident);
    let mut tokens = tensor_enum(model, tensor, &doc, quote!(), &variants);
    if let Some(autodiff) = model.autodiff() {
        let variants: Vec<TensorVariant> = leaves
            .iter()
            .filter_map(|leaf| {
                let base = leaf.base?;
                let (field, span) = (leaf.item("Tensor"), leaf.span());
                Some(TensorVariant { cfg: base.cfg(), ident: &base.ident, field, span })
            })
            .collect();
        let doc = format!("A tensor of the `{}` variant: `Autodiff` over one of the base backends.", autodiff.ident);
        tokens.extend(tensor_enum(model, autodiff_tensor, &doc, autodiff.cfg(), &variants));
    }
    tokens
}

struct TensorVariant<'a> {
    cfg: TokenStream,
    ident: &'a syn::Ident,
    field: TokenStream,
    /// The backend path's: where `Clone` and `Debug` of a tensor that is no backend's would be reported.
    span: Span,
}

/// A tensor enum with `Clone` and `Debug` written out: derived ones would each report a backend path that is not
/// a backend once more.
fn tensor_enum(
    model: &Model,
    ident: &syn::Ident,
    doc: &str,
    cfg: TokenStream,
    variants: &[TensorVariant],
) -> TokenStream {
    let vis = &model.vis;
    let definitions = variants.iter().map(|TensorVariant { cfg, ident, field, .. }| quote!(#cfg #ident(#field),));
    let clones = variants.iter().map(|TensorVariant { cfg, ident: variant, span, .. }| {
        let clone = quote_spanned!(*span=> ::core::clone::Clone::clone(tensor));
        quote!(#cfg #ident::#variant(ref tensor) => #ident::#variant(#clone),)
    });
    let debugs = variants.iter().map(|TensorVariant { cfg, ident: variant, span, .. }| {
        let name = variant.to_string();
        let field = quote_spanned!(*span=> ::core::fmt::DebugTuple::field(&mut tuple, tensor));
        quote!(#cfg #ident::#variant(ref tensor) => {
            let mut tuple = f.debug_tuple(#name);
            #field;
            tuple.finish()
        })
    });
    quote! {
        #[doc = #doc]
        #cfg
        #vis enum #ident { #(#definitions)* }

        #cfg
        impl ::core::clone::Clone for #ident {
            #[inline]
            fn clone(&self) -> Self {
                match *self { #(#clones)* }
            }
        }

        #cfg
        impl ::core::fmt::Debug for #ident {
            fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                match *self { #(#debugs)* }
            }
        }
    }
}

/// The dispatch backend's unit struct.
pub fn backend_struct(model: &Model) -> TokenStream {
    let (vis, backend) = (&model.vis, &model.items.backend);
    let doc = format!(
        "The backend of `{}`: every op dispatches to the backend of the variant its operands live on.",
        model.ident
    );
    quote! {
        #[doc = #doc]
        #[derive(::core::clone::Clone, ::core::marker::Copy, ::core::fmt::Debug, ::core::default::Default)]
        #vis struct #backend;
    }
}
