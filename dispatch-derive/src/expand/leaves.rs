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
    /// Where generated code that handles this leaf's tensors and devices is reported: at the user's backend path,
    /// but resolved as the rest of the expansion, so that its locals and the call site's are the same.
    ///
    /// A path that is not a (base) backend fails one bound, `P: Leaf`, in every such piece of code; spanned the same
    /// everywhere, rustc reports it once. Code spanned at the call site would report it once more there, and a
    /// binding or call spanning both places once more between them.
    pub fn span(&self) -> proc_macro2::Span {
        proc_macro2::Span::call_site().located_at(spanned(self.backend_path))
    }

    /// `tokens`, every one of them (groups included) spanned at `span()`.
    pub fn located(&self, tokens: TokenStream) -> TokenStream {
        located_at(tokens, self.span())
    }

    /// `<P as Leaf>::item`: how generated code names this leaf's types and ops.
    pub fn item(&self, item: &str) -> TokenStream {
        let (path, ops_trait) = (self.backend_path, &self.ops_trait);
        let item = quote::format_ident!("{}", item);
        self.located(quote!(<#path as #ops_trait>::#item))
    }

    /// `<P as Leaf>::op(args)`.
    pub fn call(&self, op: &str, args: TokenStream) -> TokenStream {
        let op = self.item(op);
        self.located(quote!(#op(#args)))
    }

    /// `Ok(Tensor::V(<P as Leaf>::op(args)?))`: the backend's tensor put into the tensor enum.
    ///
    /// Written with `?` rather than `Result::map`: with `map`, LLVM copied the result through a store-forwarding
    /// stall that made a 1-element candle add 4-7% slower than the backend called directly (BENCHMARKS.md, group 1).
    pub fn call_and_wrap(&self, model: &Model, op: &str, args: TokenStream) -> TokenStream {
        let private = &model.private;
        let call = self.call(op, args);
        let wrapped = self.tensor(model, quote!(#call?));
        self.located(quote!(#private::Ok(#wrapped)))
    }

    /// `Tensor::V(binding)` or `Tensor::A(AutodiffTensor::V(binding))`, as a pattern or an expression.
    pub fn tensor(&self, model: &Model, inner: TokenStream) -> TokenStream {
        let tensor = &model.items.tensor;
        let variant = &self.device.ident;
        let tokens = match self.base {
            None => quote!(#tensor::#variant(#inner)),
            Some(base) => {
                let autodiff_tensor = &model.items.autodiff_tensor;
                let base = &base.ident;
                quote!(#tensor::#variant(#autodiff_tensor::#base(#inner)))
            }
        };
        self.located(tokens)
    }

    /// A closure that puts this leaf's backend tensor into the tensor enum, for `Result::map`.
    pub fn wrap_tensor(&self, model: &Model) -> TokenStream {
        let wrapped = self.tensor(model, quote!(tensor));
        self.located(quote!(|tensor| #wrapped))
    }

    /// `<BackendDevice as BackendField<P, <P as Leaf>::Device>>`, spanned on the variant's field, where a field that
    /// is not the backend's device is reported; naming `P`'s device is this leaf's code, spanned as such.
    fn field_check(&self, model: &Model) -> TokenStream {
        let private = &model.private;
        let path = self.backend_path;
        let backend_device = self.located(quote!(<#path as #private::Leaf>::Device));
        let field_device = self.base.unwrap_or(self.device);
        let field = &field_device.field;
        quote_spanned!(field_device.field_span()=> <#field as #private::BackendField<#path, #backend_device>>)
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

/// `match *tensor { <one arm per leaf> }`, each arm binding the backend's own tensor as `binding`; `body` spans its
/// code with `Leaf::located` or builds it with `Leaf`'s methods, which do.
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
/// autodiff variant's arm matches on its base device, one arm per base. `body` is spanned as `match_tensor`'s.
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
        let (backend_device, body) = (leaf.located(quote!(device)), body(leaf));
        quote!(#cfg #pattern => { let #backend_device = #check::backend_device(device); #body })
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

/// `tokens`, every one of them (groups included) spanned at `span`.
fn located_at(tokens: TokenStream, span: proc_macro2::Span) -> TokenStream {
    tokens
        .into_iter()
        .map(|mut token| {
            if let proc_macro2::TokenTree::Group(group) = &token {
                let mut located = proc_macro2::Group::new(group.delimiter(), located_at(group.stream(), span));
                located.set_span(span);
                token = proc_macro2::TokenTree::Group(located);
            }
            token.set_span(span);
            token
        })
        .collect()
}
