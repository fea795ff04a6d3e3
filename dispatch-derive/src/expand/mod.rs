//! Code generation from a valid model. An enum without `#[distributed]` variants gets the full treatment itself;
//! an enum with them gets a local enum of its other variants, which gets the full treatment, and routing.

mod arms;
mod backend;
mod dispatch;
mod names;
mod types;

use proc_macro2::TokenStream;
use quote::quote;

use crate::model::Model;
use names::Named;

pub fn expand(model: &Model) -> TokenStream {
    if !model.has_distributed() {
        return local_items(model);
    }
    let local = model.local_model();
    let local_enum = types::local_enum(model, &local);
    let local_items = local_items(&local);
    let device_impls = device_impls(model, dispatch::routed_dispatch_impl);
    quote!(#local_enum #local_items #device_impls)
}

/// What every device enum gets: `Display`, `FromStr`, `BackendDevice`, `Dispatch` (local or routed) and `From`.
fn device_impls(model: &Model, dispatch_impl: fn(&Model, &TokenStream) -> TokenStream) -> TokenStream {
    let private = &model.private;
    let named = Named::enum_of(model);
    let names = names::names_array(model, &named);
    let display = names::display_impl(model, &named);
    let from_str = names::from_str_impl(model, &named, quote!(<Self as #private::Dispatch>::names()));
    let backend_device = names::backend_device_impl(model, &named);
    let dispatch = dispatch_impl(model, &names);
    let from = dispatch::from_impls(model);
    quote! {
        const _: () = {
            #display
            #from_str
            #backend_device
            #dispatch
            #from
        };
    }
}

/// Everything a local enum (one without `#[distributed]` variants) gets: the backend, the tensor enums, the base
/// enum, and the impls.
fn local_items(model: &Model) -> TokenStream {
    let arms = arms::arms(model);
    let backend_struct = types::backend_struct(model);
    let tensor_enums = types::tensor_enums(model, &arms);
    let routes = arms::routes(model, &arms);
    let extension_routes = arms::extension_routes(model, &arms);
    let backend_impl = backend::backend_impl(model);
    let device_impls = device_impls(model, dispatch::local_dispatch_impl);
    let base = model.autodiff().map(|_| {
        let base_enum = types::base_enum(model);
        let named = Named::base_of(model);
        let names = names::names_array(model, &named);
        let display = names::display_impl(model, &named);
        let from_str = names::from_str_impl(model, &named, names);
        let backend_device = names::backend_device_impl(model, &named);
        quote! {
            #base_enum
            const _: () = {
                #display
                #from_str
                #backend_device
            };
        }
    });
    quote! {
        #backend_struct
        #tensor_enums
        #base
        const _: () = {
            #routes
            #extension_routes
            #backend_impl
        };
        #device_impls
    }
}
