//! What `#[extension]` puts in the hidden module beside a trait, which a derived enum reaches: the names, and the
//! items that do not depend on the trait's ops, one definition for both sides. The derive builds a stand-in module
//! from the same items for a listed trait that has no hidden module (see `expand::arms::extension_routes`), whose
//! marker trait carries the error a build shows for it. Every
//! name is prefixed `__dispatch`/`__Dispatch`, so none meets a user's name: the module sees the user's items through
//! `use super::*`, which its own items would otherwise shadow.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::Ident;

/// Each kind of operand an op is sent by: dispatch-core's visitor trait, the `Routes` method and the backend's
/// type of it.
pub const ROUTES: [(&str, &str, &str); 4] = [
    ("VisitFloat", "route_float", "FloatTensor"),
    ("VisitInt", "route_int", "IntTensor"),
    ("VisitBool", "route_bool", "BoolTensor"),
    ("VisitDevice", "route_device", "Device"),
];

/// The items of a hidden module that every extension has, whatever its ops: a visitor trait per kind of operand,
/// the struct of a backend's ops (`pointer_fields`, filled in by `pointers`), the `const fn` giving them to a
/// backend that meets `bound`, the routes trait, and the marker trait with its token: `unmarked` is `None` in the
/// module `#[extension]` writes, where every type implements the marker, and in the derive's stand-in the error
/// shown where the marker is missing.
pub fn module_items(
    private: &TokenStream,
    pointer_fields: impl Iterator<Item = TokenStream>,
    pointers: impl Iterator<Item = TokenStream>,
    bound: &TokenStream,
    unmarked: Option<&Unmarked>,
) -> TokenStream {
    let (routes_trait, ops_struct, ops_fn) = (routes_trait(), ops_struct(), ops_fn());
    let (marked_trait, token) = (marked_trait(), marked_token());
    let marker = match unmarked {
        None => quote! {
            /// Held by every type here, and by none in the derive's stand-in: how a derived enum tells the two apart.
            pub trait #marked_trait<__DispatchOf: ?Sized> {
                const CHECKED: () = ();
            }
            impl<__DispatchAny: ?Sized> #marked_trait<#token> for __DispatchAny {}
        },
        Some(Unmarked { message, label, notes }) => quote! {
            #[diagnostic::on_unimplemented(message = #message, label = #label #(, note = #notes)*)]
            pub trait #marked_trait<__DispatchOf: ?Sized> {
                const CHECKED: () = ();
            }
        },
    };
    let visit_traits = ROUTES.map(|(core_visit_trait, _, routed)| {
        let (visit_trait, routed) = (visit_trait(core_visit_trait), format_ident!("{}", routed));
        quote! {
            /// An op of the extension, run on the arm its first operand lives on with that arm's ops.
            pub trait #visit_trait<__DispatchBackend: #private::Backend>: #private::Visit<__DispatchBackend> {
                fn visit<__DispatchArm: #private::Arm<__DispatchBackend>>(
                    self,
                    routed: &<<__DispatchArm as #private::Arm<__DispatchBackend>>::Backend as #private::Backend>::#routed,
                    ops: &#ops_struct<<__DispatchArm as #private::Arm<__DispatchBackend>>::Backend>,
                ) -> Self::Output;
            }
        }
    });
    let route_methods = ROUTES.map(|(core_visit_trait, route, routed)| {
        let (visit_trait, route, routed) =
            (visit_trait(core_visit_trait), format_ident!("{}", route), format_ident!("{}", routed));
        quote!(fn #route<V: #visit_trait<Self>>(operand: &Self::#routed, visit: V) -> V::Output;)
    });
    quote! {
        #(#visit_traits)*

        /// The ops of a backend, which implements the extension.
        pub struct #ops_struct<__DispatchBackend: #private::Backend> {
            #(#pointer_fields)*
            /// Ties the pointers' types to the backend.
            pub __dispatch_marker: ::core::marker::PhantomData<fn() -> __DispatchBackend>,
        }

        /// The backend's own ops: callable only for a backend that implements the extension.
        pub const fn #ops_fn<__DispatchBackend: #bound>() -> #ops_struct<__DispatchBackend> {
            #ops_struct { #(#pointers)* __dispatch_marker: ::core::marker::PhantomData }
        }

        /// What a derived backend implements for each extension it lists: the arm of each kind of operand.
        pub trait #routes_trait: #private::Backend {
            #(#route_methods)*
        }

        /// The marker's own parameter, so that another extension's marker, which every type holds, is not the
        /// one rustc names when this one is missing.
        pub struct #token;

        #marker
    }
}

/// The error of a listed trait without a hidden module, which the stand-in's marker carries: rustc shows it where
/// the derive checks the marker, at the user's path.
pub struct Unmarked {
    pub message: String,
    pub label: String,
    pub notes: Vec<String>,
}

/// The hidden module of the extension `trait_ident`, beside the trait; spanned at `trait_ident`, so that a path to
/// it built from the user's path is reported at the user's tokens.
pub fn module(trait_ident: &Ident) -> Ident {
    format_ident!("__dispatch_extension_{}", trait_ident, span = trait_ident.span())
}

/// The trait a derived backend implements for the extension: the arm of each kind of operand.
pub fn routes_trait() -> Ident {
    format_ident!("__DispatchRoutes")
}

/// The module's visitor trait standing for dispatch-core's `core_visit_trait` (`VisitFloat`, ..., `VisitDevice`).
pub fn visit_trait(core_visit_trait: &str) -> Ident {
    format_ident!("__Dispatch{}", core_visit_trait)
}

/// The struct of a backend's ops as function pointers.
pub fn ops_struct() -> Ident {
    format_ident!("__DispatchOps")
}

/// `const fn` giving a backend's ops, bounded by the extension.
pub fn ops_fn() -> Ident {
    format_ident!("__dispatch_ops")
}

/// The marker trait: every type holds it in an extension's hidden module, none in the derive's stand-in.
pub fn marked_trait() -> Ident {
    format_ident!("__DispatchMarked")
}

/// The marker trait's parameter, a type of each hidden module.
pub fn marked_token() -> Ident {
    format_ident!("__DispatchToken")
}
