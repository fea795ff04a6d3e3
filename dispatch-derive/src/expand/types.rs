//! The generated types: the local enum, the base enum, the tensor enums and the backend's unit struct.

use proc_macro2::TokenStream;
use quote::quote;

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
    let private = &model.private;
    let vis = &model.vis;
    let (tensor, autodiff_tensor) = (&model.items.tensor, &model.items.autodiff_tensor);
    let variants = model.devices.iter().filter_map(|device| {
        let (cfg, variant) = (device.cfg(), &device.ident);
        match &device.role {
            Role::Backend(backend) => Some(quote!(#cfg #variant(<#backend as #private::Backend>::FloatTensor),)),
            Role::Autodiff => Some(quote!(#cfg #variant(#autodiff_tensor),)),
            Role::Distributed => None,
        }
    });
    let tensor_doc = format!("A tensor of `{}`, on one of the variants of `{}`.", model.items.backend, model.ident);
    let mut tokens = quote! {
        #[doc = #tensor_doc]
        #[derive(::core::clone::Clone, ::core::fmt::Debug)]
        #vis enum #tensor { #(#variants)* }
    };
    if let Some(autodiff) = model.autodiff() {
        let cfg = autodiff.cfg();
        let variants = leaves.iter().filter_map(|leaf| {
            let base = leaf.base?;
            let (cfg, variant, backend) = (base.cfg(), &base.ident, &leaf.backend);
            Some(quote!(#cfg #variant(<#backend as #private::Backend>::FloatTensor),))
        });
        let doc = format!("A tensor of the `{}` variant: `Autodiff` over one of the base backends.", autodiff.ident);
        tokens.extend(quote! {
            #[doc = #doc]
            #cfg
            #[derive(::core::clone::Clone, ::core::fmt::Debug)]
            #vis enum #autodiff_tensor { #(#variants)* }
        });
    }
    tokens
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
