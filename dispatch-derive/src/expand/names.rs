//! `Display`, `FromStr` and the list of names: a backend variant is its name (`candle`), the autodiff variant its
//! name and its base's (`autodiff:candle`), a distributed variant its name and its ranks (`cluster:candle,ndarray`).
//!
//! Names are per variant, not per device: a backend variant's name does not say which of its backend's devices
//! it holds (candle on `cuda:1` displays as `candle`), and `FromStr` builds it with its field type's `Default`. So
//! a name read back gives the same variant, on its default device; only for a variant whose device type has one
//! value (ndarray's) is that the device it was written from.

use proc_macro2::{Ident, TokenStream};
use quote::{quote, quote_spanned};

use crate::model::{Device, Model, Role};

/// The enum the impls are for, and the devices it holds.
pub struct Named<'a> {
    pub ident: &'a Ident,
    pub devices: Vec<&'a Device>,
}

impl<'a> Named<'a> {
    /// The enum of a model, every device.
    pub fn enum_of(model: &'a Model) -> Self {
        Named { ident: &model.ident, devices: model.devices.iter().collect() }
    }

    /// The base enum of a model, its `#[backend]` devices.
    pub fn base_of(model: &'a Model) -> Self {
        Named { ident: &model.items.base, devices: model.backends().map(|(device, _)| device).collect() }
    }
}

/// The array of every compiled-in name, as a `&'static [&'static str]` expression.
pub fn names_array(model: &Model, named: &Named) -> TokenStream {
    let bases: Vec<&Device> = model.backends().map(|(device, _)| device).collect();
    let names = named.devices.iter().map(|device| {
        let cfg = device.cfg();
        match device.role {
            Role::Autodiff => {
                let names = bases.iter().map(|base| {
                    let base_cfg = base.cfg();
                    let name = format!("{}:{}", device.name, base.name);
                    quote!(#cfg #base_cfg #name,)
                });
                quote!(#(#names)*)
            }
            Role::Backend(_) | Role::Distributed => {
                let name = device.name_literal();
                quote!(#cfg #name,)
            }
        }
    });
    quote!(&[#(#names)*])
}

pub fn display_impl(model: &Model, named: &Named) -> TokenStream {
    let private = &model.private;
    let ident = named.ident;
    let arms = named.devices.iter().map(|device| {
        let (cfg, variant, name, field) = (device.cfg(), &device.ident, &device.name, &device.field);
        let span = device.field_span();
        match device.role {
            Role::Backend(_) => quote!(#cfg #ident::#variant(_) => f.write_str(#name),),
            Role::Autodiff => {
                let prefix = format!("{name}:");
                let base = quote_spanned!(span=> <#field as #private::AutodiffField<#ident>>::base(device));
                quote!(#cfg #ident::#variant(ref device) => {
                    f.write_str(#prefix)?;
                    ::core::fmt::Display::fmt(#base, f)
                })
            }
            Role::Distributed => {
                let prefix = format!("{name}:");
                let cluster =
                    quote_spanned!(span=> <#field as #private::DistributedField<#ident>>::distributed(device));
                quote!(#cfg #ident::#variant(ref device) => {
                    f.write_str(#prefix)?;
                    ::core::fmt::Display::fmt(#cluster, f)
                })
            }
        }
    });
    quote! {
        impl ::core::fmt::Display for #ident {
            fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                match *self { #(#arms)* }
            }
        }
    }
}

/// Reads the names `Display` writes; a backend variant's name gives the variant on its field type's default device,
/// whichever device it was written from.
pub fn from_str_impl(model: &Model, named: &Named, names: TokenStream) -> TokenStream {
    let private = &model.private;
    let ident = named.ident;
    let base_enum = &model.items.base;
    let checks = named.devices.iter().map(|device| {
        let (cfg, variant, name, field) = (device.cfg(), &device.ident, &device.name, &device.field);
        let span = device.field_span();
        let body = match device.role {
            Role::Backend(_) => {
                let default = quote_spanned!(span=> <#field as #private::DefaultDevice>::default_device());
                quote!(if input == #name { return #private::Ok(#ident::#variant(#default)); })
            }
            Role::Autodiff => {
                let prefix = format!("{name}:");
                let from_base = quote_spanned!(span=> <#field as #private::AutodiffField<#ident>>::from_base);
                quote! {
                    if let #private::Some(base) = input.strip_prefix(#prefix) {
                        if let #private::Ok(base) = <#base_enum as ::core::str::FromStr>::from_str(base) {
                            return #private::Ok(#ident::#variant(#from_base(base)));
                        }
                    }
                }
            }
            Role::Distributed => {
                let prefix = format!("{name}:");
                let from_distributed =
                    quote_spanned!(span=> <#field as #private::DistributedField<#ident>>::from_distributed);
                quote! {
                    let spec = if input == #name { #private::Some("") } else { input.strip_prefix(#prefix) };
                    if let #private::Some(spec) = spec {
                        return <#private::DistributedDevice<#ident> as ::core::str::FromStr>::from_str(spec)
                            .map(|cluster| #ident::#variant(#from_distributed(cluster)));
                    }
                }
            }
        };
        quote!(#cfg { #body })
    });
    quote! {
        impl ::core::str::FromStr for #ident {
            type Err = #private::ParseDeviceError;

            fn from_str(input: &str) -> #private::Result<Self, #private::ParseDeviceError> {
                #(#checks)*
                #private::Err(#private::ParseDeviceError::unknown(input, #names))
            }
        }
    }
}
