//! The concrete backends of a local enum, one "leaf" each: a `#[backend(P)]` variant dispatches to `P`, the
//! `#[autodiff]` variant to `Autodiff<P>` for every base `P`. Every generated op is one `match` with one arm per
//! leaf, built here, so that each arm names its concrete backend and is monomorphised.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::Type;

use crate::model::{Device, Model, Role};

pub struct Leaf<'a> {
    /// The local variant.
    pub device: &'a Device,
    /// For an autodiff leaf, the base variant whose backend `Autodiff` wraps.
    pub base: Option<&'a Device>,
    /// The base backend's path as the user wrote it.
    pub backend_path: &'a Type,
    /// `Leaf` or `AutodiffLeaf`: the private trait through which this arm reaches its backend's ops.
    ops_trait: TokenStream,
    /// The cfgs of the variant and, for an autodiff leaf, of its base.
    pub cfg: TokenStream,
}

/// Every leaf of a local model, in variant order.
pub fn leaves(model: &Model) -> Vec<Leaf<'_>> {
    let private = &model.private;
    let mut leaves = Vec::new();
    for device in &model.devices {
        match &device.role {
            Role::Backend(path) => leaves.push(Leaf {
                device,
                base: None,
                backend_path: path,
                ops_trait: quote!(#private::Leaf),
                cfg: device.cfg(),
            }),
            Role::Autodiff => {
                for (base, path) in model.backends() {
                    let (device_cfg, base_cfg) = (device.cfg(), base.cfg());
                    leaves.push(Leaf {
                        device,
                        base: Some(base),
                        backend_path: path,
                        ops_trait: quote!(#private::AutodiffLeaf),
                        cfg: quote!(#device_cfg #base_cfg),
                    });
                }
            }
            Role::Distributed => {}
        }
    }
    leaves
}

fn spanned(ty: &Type) -> proc_macro2::Span {
    syn::spanned::Spanned::span(ty)
}

impl Leaf<'_> {
    /// The user's backend path's span, where generated code of this leaf's type is reported.
    pub fn span(&self) -> proc_macro2::Span {
        spanned(self.backend_path)
    }

    /// `<P as Leaf>::item`, all of it spanned on the user's backend path: the one place where a path that is not a
    /// (base) backend is reported.
    pub fn item(&self, item: &str) -> TokenStream {
        let (path, ops_trait) = (self.backend_path, &self.ops_trait);
        let item = quote::format_ident!("{}", item, span = spanned(path));
        quote_spanned!(spanned(path)=> <#path as #ops_trait>::#item)
    }

    /// `Tensor::V(binding)` or `Tensor::A(AutodiffTensor::V(binding))`, as a pattern or an expression.
    pub fn tensor(&self, model: &Model, inner: TokenStream) -> TokenStream {
        let tensor = &model.items.tensor;
        let variant = &self.device.ident;
        match self.base {
            None => quote!(#tensor::#variant(#inner)),
            Some(base) => {
                let autodiff_tensor = &model.items.autodiff_tensor;
                let base = &base.ident;
                quote!(#tensor::#variant(#autodiff_tensor::#base(#inner)))
            }
        }
    }

    /// A closure that puts this leaf's backend tensor into the tensor enum, for `Result::map`.
    pub fn wrap_tensor(&self, model: &Model) -> TokenStream {
        let wrapped = self.tensor(model, quote!(tensor));
        quote!(|tensor| #wrapped)
    }

    /// `<BackendDevice as BackendField<P>>`, spanned on the variant's field: a field that is not the backend's
    /// device is reported there.
    fn field_check(&self, model: &Model) -> TokenStream {
        let private = &model.private;
        let path = self.backend_path;
        let field_device = self.base.unwrap_or(self.device);
        let field = &field_device.field;
        quote_spanned!(field_device.field_span()=> <#field as #private::BackendField<#path>>)
    }

    /// The local device holding `device`, the backend's own device.
    pub fn wrap_device(&self, model: &Model, device: TokenStream) -> TokenStream {
        let check = self.field_check(model);
        let local = &model.ident;
        let variant = &self.device.ident;
        let field_device = quote!(#check::from_backend_device(#device));
        match self.base {
            None => quote!(#local::#variant(#field_device)),
            Some(base) => {
                let private = &model.private;
                let (base_enum, base_variant) = (&model.items.base, &base.ident);
                let autodiff_field = &self.device.field;
                let from_base = quote_spanned!(self.device.field_span()=>
                    <#autodiff_field as #private::AutodiffField<#local>>::from_base
                );
                quote!(#local::#variant(#from_base(#base_enum::#base_variant(#field_device))))
            }
        }
    }
}

/// `match *tensor { <one arm per leaf> }`, each arm binding the backend's own tensor as `binding`.
pub fn match_tensor(
    model: &Model,
    leaves: &[Leaf],
    scrutinee: TokenStream,
    binding: TokenStream,
    body: impl Fn(&Leaf) -> TokenStream,
) -> TokenStream {
    let arms = leaves.iter().map(|leaf| {
        let cfg = &leaf.cfg;
        let pattern = leaf.tensor(model, quote!(ref #binding));
        let body = body(leaf);
        quote!(#cfg #pattern => #body,)
    });
    quote!(match *#scrutinee { #(#arms)* })
}

/// `match *device { ... }` down to each leaf's backend device, bound as `device: &<P as Leaf>::Device`. An
/// autodiff variant's arm matches on its base device, one arm per base.
pub fn match_device(
    model: &Model,
    leaves: &[Leaf],
    scrutinee: TokenStream,
    body: impl Fn(&Leaf) -> TokenStream,
) -> TokenStream {
    let local = &model.ident;
    let private = &model.private;
    let leaf_arm = |leaf: &Leaf, pattern: TokenStream| {
        let cfg = &leaf.cfg;
        let check = leaf.field_check(model);
        let body = body(leaf);
        quote!(#cfg #pattern => { let device = #check::backend_device(device); #body })
    };
    let arms = model.devices.iter().map(|device| {
        let (cfg, variant) = (device.cfg(), &device.ident);
        match &device.role {
            Role::Backend(_) => {
                let arms = leaves.iter().filter(|leaf| leaf.base.is_none() && leaf.device.ident == *variant);
                let arms = arms.map(|leaf| leaf_arm(leaf, quote!(#local::#variant(ref device))));
                quote!(#(#arms)*)
            }
            Role::Autodiff => {
                let base_enum = &model.items.base;
                let field = &device.field;
                let base_of = quote_spanned!(device.field_span()=> <#field as #private::AutodiffField<#local>>::base);
                let arms = leaves.iter().filter_map(|leaf| {
                    let base = leaf.base?;
                    let base_variant = &base.ident;
                    Some(leaf_arm(leaf, quote!(#base_enum::#base_variant(ref device))))
                });
                quote!(#cfg #local::#variant(ref device) => match *#base_of(device) { #(#arms)* })
            }
            Role::Distributed => quote!(),
        }
    });
    quote!(match *#scrutinee { #(#arms)* })
}
