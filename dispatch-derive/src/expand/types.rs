//! The generated types: the local enum, the base enum, the tensor enums and the backend's unit struct.

use proc_macro2::TokenStream;
use quote::quote;

use crate::expand::arms::{Arm, match_tensor_of};
use crate::model::{Model, Role, TensorKind};

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

/// The tensor enums of every kind: one variant per local variant, and the autodiff enum, one variant per base
/// backend.
pub fn tensor_enums(model: &Model, arms: &[Arm]) -> TokenStream {
    TensorKind::ALL.into_iter().map(|kind| tensor_enums_of(model, arms, kind)).collect()
}

fn tensor_enums_of(model: &Model, arms: &[Arm], kind: TensorKind) -> TokenStream {
    let (tensor, autodiff_tensor) = kind.enums(&model.items);
    let (_, clone_fn, _) = kind.path_items();
    let variants: Vec<TensorVariant> = model
        .devices
        .iter()
        .filter_map(|device| {
            let arm = match &device.role {
                Role::Backend(_) => {
                    Some(arms.iter().find(|arm| arm.base.is_none() && arm.device.ident == device.ident)?)
                }
                Role::Autodiff => None,
                Role::Distributed => return None,
            };
            Some(TensorVariant { cfg: device.cfg(), ident: &device.ident, arm })
        })
        .collect();
    let doc =
        format!("A {} tensor of `{}`, on one of the variants of `{}`.", kind.word(), model.items.backend, model.ident);
    // One match arm per backend arm, down into the autodiff tensor enum: cloning that enum by value here, at the call
    // site, would report an `Autodiff<..>` backend path (through an alias) once more, there.
    let clone = match_tensor_of(model, arms, kind, quote!(self), quote!(tensor), |arm| {
        arm.tensor_of(model, kind, arm.call(clone_fn, quote!(tensor)))
    });
    let mut tokens = tensor_enum(model, kind, tensor, &doc, quote!(), &variants, clone);
    if let Some(autodiff) = model.autodiff() {
        let variants: Vec<TensorVariant> = arms
            .iter()
            .filter_map(|arm| {
                let base = arm.base?;
                Some(TensorVariant { cfg: base.cfg(), ident: &base.ident, arm: Some(arm) })
            })
            .collect();
        let clones = arms.iter().filter_map(|arm| {
            let base = arm.base?;
            let (cfg, variant, clone) = (base.cfg(), &base.ident, arm.call(clone_fn, quote!(tensor)));
            let clone_arm =
                arm.located(quote!(#autodiff_tensor::#variant(ref tensor) => #autodiff_tensor::#variant(#clone),));
            Some(quote!(#cfg #clone_arm))
        });
        let clone = quote!(match *self { #(#clones)* });
        let doc = format!(
            "A {} tensor of the `{}` variant: `Autodiff` over one of the base backends.",
            kind.word(),
            autodiff.ident
        );
        tokens.extend(tensor_enum(model, kind, autodiff_tensor, &doc, autodiff.cfg(), &variants, clone));
    }
    tokens
}

struct TensorVariant<'a> {
    cfg: TokenStream,
    ident: &'a syn::Ident,
    /// The arm whose tensor the variant holds; `None` for the autodiff variant, which holds the autodiff tensor enum.
    arm: Option<&'a Arm<'a>>,
}

/// A tensor enum with `Clone` (whose body is `clone`) and `Debug` written out, through the arm's own
/// `clone_tensor` and `debug_tensor`: derived ones, or `Clone::clone` of the arm's tensor type, would each report a
/// backend path that is not a backend once more (for `Autodiff<Autodiff<..>>`, as a missing `Clone` of its tensor).
fn tensor_enum(
    model: &Model,
    kind: TensorKind,
    ident: &syn::Ident,
    doc: &str,
    cfg: TokenStream,
    variants: &[TensorVariant],
    clone: TokenStream,
) -> TokenStream {
    let (_, autodiff_tensor) = kind.enums(&model.items);
    let (path_item, _, debug_fn) = kind.path_items();
    let vis = &model.vis;
    let definitions = variants.iter().map(|TensorVariant { cfg, ident, arm }| {
        let field = match arm {
            Some(arm) => arm.item(path_item),
            None => quote!(#autodiff_tensor),
        };
        quote!(#cfg #ident(#field),)
    });
    let debugs = variants.iter().map(|TensorVariant { cfg, ident: variant, arm }| {
        let name = variant.to_string();
        let debug_arm = |field: TokenStream| {
            quote!(#ident::#variant(ref tensor) => {
                let mut tuple = f.debug_tuple(#name);
                ::core::fmt::DebugTuple::field(&mut tuple, #field);
                tuple.finish()
            })
        };
        let debug = match arm {
            Some(arm) => arm.located(debug_arm(arm.call(debug_fn, quote!(tensor)))),
            None => debug_arm(quote!(tensor)),
        };
        quote!(#cfg #debug)
    });
    quote! {
        #[doc = #doc]
        #cfg
        #vis enum #ident { #(#definitions)* }

        #cfg
        #[automatically_derived]
        impl ::core::clone::Clone for #ident {
            #[inline]
            fn clone(&self) -> Self { #clone }
        }

        #cfg
        #[automatically_derived]
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
