//! `impl Dispatch`, the `DeviceOf` impls that decide which ops accept the enum, and the `From` conversions.

use std::collections::HashMap;

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};

use crate::model::{Device, Model, Role};

/// `impl Dispatch` for a local enum: it routes to itself.
pub fn local_dispatch_impl(model: &Model, names: &TokenStream) -> TokenStream {
    let private = &model.private;
    let (ident, backend) = (&model.ident, &model.items.backend);
    let base = base_type(model);
    quote! {
        impl #private::Dispatch for #ident {
            type Backend = #backend;
            type Local = #ident;
            type Base = #base;
            type Distributed = #private::Infallible;

            fn names() -> &'static [&'static str] { #names }

            #[inline]
            fn route(&self) -> #private::Route<#ident, #private::Infallible> {
                #private::Route::Local(::core::clone::Clone::clone(self))
            }

            #[inline]
            fn is_distributed(&self) -> bool { false }
        }

        /// Single-backend ops accept a local device of this backend.
        impl<B: #private::Backend<Device = #ident>> #private::DeviceOf<B> for #ident {
            #[inline]
            fn as_device(&self) -> &#ident { self }
        }
    }
}

/// `impl Dispatch` for an enum with `#[distributed]` variants: `route` splits it into its local enum or the
/// distributed device, and single-backend ops refuse it until it is routed.
pub fn routed_dispatch_impl(model: &Model, names: &TokenStream) -> TokenStream {
    let private = &model.private;
    let (ident, backend, local) = (&model.ident, &model.items.backend, &model.items.local);
    let base = base_type(model);
    let arms = model.devices.iter().map(|device| {
        let (cfg, variant, field) = (device.cfg(), &device.ident, &device.field);
        let span = device.field_span();
        match device.role {
            Role::Backend(_) => {
                quote!(#cfg #ident::#variant(ref device) =>
                    #private::Route::Local(#local::#variant(::core::clone::Clone::clone(device))),)
            }
            Role::Autodiff => {
                let base = quote_spanned!(span=> <#field as #private::AutodiffField<#ident>>::base(device));
                quote!(#cfg #ident::#variant(ref device) => #private::Route::Local(#local::#variant(
                    #private::AutodiffDevice::new(::core::clone::Clone::clone(#base))
                )),)
            }
            Role::Distributed => {
                let cluster =
                    quote_spanned!(span=> <#field as #private::DistributedField<#ident>>::distributed(device));
                quote!(#cfg #ident::#variant(ref device) =>
                    #private::Route::Distributed(::core::clone::Clone::clone(#cluster)),)
            }
        }
    });
    let distributed_arms = model.devices.iter().map(|device| {
        let (cfg, variant) = (device.cfg(), &device.ident);
        let distributed = matches!(device.role, Role::Distributed);
        quote!(#cfg #ident::#variant(_) => #distributed,)
    });
    let local_arms = model.devices.iter().filter(|device| !matches!(device.role, Role::Distributed)).map(|device| {
        let (cfg, variant) = (device.cfg(), &device.ident);
        let into = match device.role {
            Role::Autodiff => {
                let field = &device.field;
                let from_base =
                    quote_spanned!(device.field_span()=> <#field as #private::AutodiffField<#ident>>::from_base);
                quote!(#ident::#variant(#from_base(device.into_base())))
            }
            Role::Backend(_) | Role::Distributed => quote!(#ident::#variant(device)),
        };
        quote!(#cfg #local::#variant(device) => #into,)
    });
    quote! {
        impl #private::Dispatch for #ident {
            type Backend = #backend;
            type Local = #local;
            type Base = #base;
            type Distributed = #private::DistributedDevice<#ident>;

            fn names() -> &'static [&'static str] { #names }

            #[inline]
            fn route(&self) -> #private::Route<#local, #private::DistributedDevice<#ident>> {
                match *self { #(#arms)* }
            }

            #[inline]
            fn is_distributed(&self) -> bool {
                match *self { #(#distributed_arms)* }
            }
        }

        /// A local device is a device of the enum too.
        impl ::core::convert::From<#local> for #ident {
            fn from(device: #local) -> Self {
                match device { #(#local_arms)* }
            }
        }

        /// Refused by every single-backend op: `RouteFirst` has no impl, and its message says to route first.
        impl<B: #private::Backend<Device = #local>> #private::DeviceOf<B> for #ident
        where
            B: #private::RouteFirst<#ident>,
        {
            fn as_device(&self) -> &#local {
                <B as #private::RouteFirst<#ident>>::local(self)
            }
        }
    }
}

fn base_type(model: &Model) -> TokenStream {
    let private = &model.private;
    let base = &model.items.base;
    // The base enum exists whether or not a cfg compiles the autodiff variant in.
    match model.autodiff() {
        Some(_) => quote!(#base),
        None => quote!(#private::Infallible),
    }
}

/// `From<field>` for every variant whose field type is unique, as far as syntax tells: no other variant spells
/// the same type or names the same backend (whose device it then holds too), comparing paths by their last
/// segment so that `Candle` and `backends::Candle` count as one. `#[dispatch(no_from)]` opts a variant out where
/// aliases hide that two types are one.
pub fn from_impls(model: &Model) -> TokenStream {
    let ident = &model.ident;
    let keys = |device: &Device| {
        let mut keys = vec![format!("field {}", type_key(&device.field))];
        if let Role::Backend(backend) = &device.role {
            keys.push(format!("backend {}", type_key(backend)));
        }
        keys
    };
    let mut counts: HashMap<String, usize> = HashMap::new();
    for key in model.devices.iter().flat_map(keys) {
        *counts.entry(key).or_default() += 1;
    }
    let unique = |device: &&Device| keys(device).iter().all(|key| counts.get(key) == Some(&1));
    let impls = model.devices.iter().filter(|device| device.from_impl).filter(unique).map(|device| {
        let (cfg, variant, field) = (device.cfg(), &device.ident, &device.field);
        quote! {
            #cfg
            impl ::core::convert::From<#field> for #ident {
                #[inline]
                fn from(device: #field) -> Self { #ident::#variant(device) }
            }
        }
    });
    quote!(#(#impls)*)
}

/// A type by its last path segment (`backends::Candle` is `Candle`), or as written if it is not a plain path.
fn type_key(ty: &syn::Type) -> String {
    match ty {
        syn::Type::Path(path) if path.qself.is_none() => match path.path.segments.last() {
            Some(last) => quote!(#last).to_string(),
            None => quote!(#ty).to_string(),
        },
        _ => quote!(#ty).to_string(),
    }
}
