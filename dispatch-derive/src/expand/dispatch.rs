//! `impl Dispatch`, the `DeviceOf` impls that decide which ops accept the enum, and the `From` conversions.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};

use crate::model::{Model, Role};

/// `impl Dispatch` for a local enum: it routes to itself.
pub fn local_dispatch_impl(model: &Model, names: &TokenStream) -> TokenStream {
    let private = &model.private;
    let (ident, backend) = (&model.ident, &model.items.backend);
    let base = base_type(model);
    quote! {
        #[automatically_derived]
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
        #[automatically_derived]
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
        #[automatically_derived]
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
        #[automatically_derived]
        impl ::core::convert::From<#local> for #ident {
            fn from(device: #local) -> Self {
                match device { #(#local_arms)* }
            }
        }

        /// Refused by every single-backend op: `RouteFirst` has no impl, and its message says to route first.
        #[automatically_derived]
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

/// `From<field>` for every variant that `valid.rs` let have one: two that would share it are an error there, and a
/// backend variant whose field is a projection gets none (see `valid::is_projection`). An autodiff or distributed
/// variant's impl is for the type its role requires, built through the field's role trait, so that a field of the
/// wrong type is one error at the field (its role's) and not also a conflict with another variant's `From`.
pub fn from_impls(model: &Model) -> TokenStream {
    let private = &model.private;
    let ident = &model.ident;
    let impls = model.devices.iter().filter(|device| device.from_impl).map(|device| {
        let (cfg, variant, field) = (device.cfg(), &device.ident, &device.field);
        let span = device.field_span();
        let (source, into_field) = match device.role {
            Role::Backend(_) => (quote!(#field), quote!(device)),
            Role::Autodiff => (
                quote!(#private::AutodiffDevice<#ident>),
                quote_spanned!(span=> <#field as #private::AutodiffField<#ident>>::from_base(device.into_base())),
            ),
            Role::Distributed => (
                quote!(#private::DistributedDevice<#ident>),
                quote_spanned!(span=> <#field as #private::DistributedField<#ident>>::from_distributed(device)),
            ),
        };
        quote! {
            #cfg
            #[automatically_derived]
            impl ::core::convert::From<#source> for #ident {
                #[inline]
                fn from(device: #source) -> Self { #ident::#variant(#into_field) }
            }
        }
    });
    quote!(#(#impls)*)
}
