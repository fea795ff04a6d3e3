//! `Display`, `FromStr`, the list of names and the devices available: names are per device. A backend variant is
//! its name alone on its field type's default device (`candle`) and `name:<device>` on any other
//! (`candle:cuda:1`), the device written by its own `Display`; the autodiff variant is its name and its base's
//! (`autodiff:candle:cuda:1`); a distributed variant its name and its ranks (`cluster:candle,candle:cuda:1`). So
//! `Display` then `FromStr` gives back an equal device, for every device.

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
                    let name = dispatch_device_name::qualify(&device.name, &base.name);
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

/// `Display`: see the module's documentation.
pub fn display_impl(model: &Model, named: &Named) -> TokenStream {
    let private = &model.private;
    let ident = named.ident;
    let arms = named.devices.iter().map(|device| {
        let (cfg, variant, name, field) = (device.cfg(), &device.ident, &device.name, &device.field);
        let span = device.field_span();
        match device.role {
            Role::Backend(_) => {
                let write = quote_spanned!(span=> <#field as #private::DeviceNames>::write_name(
                    device, #name, &<#field as #private::DefaultDevice>::default_device(), f
                ));
                quote!(#cfg #ident::#variant(ref device) => #write,)
            }
            Role::Autodiff => {
                let base = quote_spanned!(span=> <#field as #private::AutodiffField<#ident>>::base(device));
                quote!(#cfg #ident::#variant(ref device) => #private::device_name::write_qualified(f, #name, #base),)
            }
            Role::Distributed => {
                let cluster =
                    quote_spanned!(span=> <#field as #private::DistributedField<#ident>>::distributed(device));
                quote!(#cfg #ident::#variant(ref device) => #private::device_name::write_qualified(f, #name, #cluster),)
            }
        }
    });
    quote! {
        #[automatically_derived]
        impl ::core::fmt::Display for #ident {
            fn fmt(&self, f: &mut ::core::fmt::Formatter<'_>) -> ::core::fmt::Result {
                match *self { #(#arms)* }
            }
        }
    }
}

/// Reads what `Display` writes: a backend variant's name alone gives its field type's default device, and
/// `name:<device>` the device its field type reads from `<device>`. An error in the part after a name is the
/// error of what reads that part (a device type, the base enum, the cluster), which lists its own choices.
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
                let parse = quote_spanned!(span=> <#field as #private::DeviceNames>::parse_device(device));
                quote! {
                    if input == #name {
                        return #private::Ok(#ident::#variant(#default));
                    }
                    if let #private::Some(device) = #private::device_name::qualified(input, #name) {
                        return #parse.map(#ident::#variant);
                    }
                }
            }
            Role::Autodiff => {
                let from_base = quote_spanned!(span=> <#field as #private::AutodiffField<#ident>>::from_base);
                quote! {
                    if let #private::Some(base) = #private::device_name::qualified(input, #name) {
                        return <#base_enum as ::core::str::FromStr>::from_str(base)
                            .map(|base| #ident::#variant(#from_base(base)));
                    }
                }
            }
            Role::Distributed => {
                let from_distributed =
                    quote_spanned!(span=> <#field as #private::DistributedField<#ident>>::from_distributed);
                quote! {
                    let spec =
                        if input == #name { #private::Some("") } else { #private::device_name::qualified(input, #name) };
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
        #[automatically_derived]
        impl ::core::str::FromStr for #ident {
            type Err = #private::ParseDeviceError;

            fn from_str(input: &str) -> #private::Result<Self, #private::ParseDeviceError> {
                #(#checks)*
                #private::Err(#private::ParseDeviceError::unknown(input, #names))
            }
        }
    }
}

/// `BackendDevice`: the devices available here, variant by variant in declaration order. A backend variant lists
/// its field type's, the autodiff variant one per available base device, a distributed variant none (see
/// `Dispatch`'s documentation for why).
pub fn backend_device_impl(model: &Model, named: &Named) -> TokenStream {
    let private = &model.private;
    let (ident, base_enum) = (named.ident, &model.items.base);
    let lists = named.devices.iter().map(|device| {
        let (cfg, variant, field) = (device.cfg(), &device.ident, &device.field);
        let span = device.field_span();
        match device.role {
            Role::Backend(_) => {
                let available = quote_spanned!(span=> <#field as #private::DeviceNames>::available_devices());
                quote! {
                    #cfg ::core::iter::Extend::extend(
                        &mut devices,
                        ::core::iter::IntoIterator::into_iter(#available).map(#ident::#variant),
                    );
                }
            }
            Role::Autodiff => {
                let from_base = quote_spanned!(span=> <#field as #private::AutodiffField<#ident>>::from_base);
                quote! {
                    #cfg ::core::iter::Extend::extend(
                        &mut devices,
                        ::core::iter::IntoIterator::into_iter(<#base_enum as #private::BackendDevice>::available())
                            .map(|base| #ident::#variant(#from_base(base))),
                    );
                }
            }
            Role::Distributed => quote!(),
        }
    });
    quote! {
        #[automatically_derived]
        impl #private::BackendDevice for #ident {
            // `mut` is unused when a cfg compiles every variant out.
            #[allow(unused_mut)]
            fn available() -> #private::Vec<Self> {
                let mut devices = #private::Vec::new();
                #(#lists)*
                devices
            }
        }
    }
}
