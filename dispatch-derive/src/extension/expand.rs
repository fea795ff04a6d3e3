//! The code of a valid extension: the trait as written (plus a `Backend` supertrait and a diagnostic for a
//! missing impl, unless it has its own), a hidden module beside it, and the trait for every derived backend.
//!
//! The hidden module, `__dispatch_extension_<Trait>`, holds what a derived enum's backend needs to send each op to
//! the variant its operands live on: `Routes`, which the derive implements with one exhaustive `match` per kind of
//! operand; a visitor per op; and `Ops<X>`, backend `X`'s ops as function pointers, which `ops::<X>()` gives only
//! for an `X` that implements the trait. The derive calls `ops::<X>()` once per arm, spanned at the variant, and
//! hands the result to the visitor: a variant whose backend lacks the trait is one unmet bound, reported there.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};
use syn::{Ident, TypeParamBound};

use super::ir::{Extension, Kind, Op, Output};

/// The hidden module of extension `ident`: the derive reaches it by this name, beside the path it is given.
pub fn hidden_module(ident: &Ident) -> Ident {
    format_ident!("__dispatch_extension_{}", ident)
}

/// Each kind of operand an op is sent by: its visitor trait, `Routes` method and the backend's type of it.
const ROUTES: [(&str, &str, &str); 4] = [
    ("VisitFloat", "route_float", "FloatTensor"),
    ("VisitInt", "route_int", "IntTensor"),
    ("VisitBool", "route_bool", "BoolTensor"),
    ("VisitDevice", "route_device", "Device"),
];

pub fn expand(extension: &Extension) -> TokenStream {
    let original = extension.original;
    let krate = extension.options.krate();
    let private = quote!(#krate::__private01);
    let (vis, ident) = (&original.vis, &original.ident);
    let hidden = hidden_module(ident);
    let trait_item = trait_item(extension, &krate);

    let visit_traits = ROUTES.map(|(visit_trait, _, routed)| {
        let (visit_trait, routed) = (format_ident!("{}", visit_trait), format_ident!("{}", routed));
        quote! {
            /// An op of the extension, run on the arm its first operand lives on with that arm's `ops`.
            pub trait #visit_trait<B: Backend>: Visit<B> {
                fn visit<A: Arm<B>>(
                    self,
                    routed: &<A::Backend as Backend>::#routed,
                    ops: &Ops<A::Backend>,
                ) -> Self::Output;
            }
        }
    });
    let op_fields = extension.ops.iter().filter_map(|op| {
        let name = op.ident();
        let types = op.params.iter().map(|param| param.as_ref()?.kind.map(pointer_type)).collect::<Option<Vec<_>>>()?;
        let output = op.output.map(|output| output_type(output, &quote!(__X), &private))?;
        let doc = format!("`{name}` of the backend.");
        Some(quote!(#[doc = #doc] pub #name: fn(#(#types),*) -> #output,))
    });
    let op_pointers = extension.ops.iter().map(|op| {
        let name = op.ident();
        quote!(#name: <__X as super::#ident>::#name,)
    });
    let route_methods = ROUTES.map(|(visit_trait, route, routed)| {
        let (visit_trait, route, routed) =
            (format_ident!("{}", visit_trait), format_ident!("{}", route), format_ident!("{}", routed));
        quote!(fn #route<V: #visit_trait<Self>>(operand: &Self::#routed, visit: V) -> V::Output;)
    });
    let visitors = extension.ops.iter().map(|op| visitor(op, &krate, &private));
    let methods = extension.ops.iter().map(|op| method(op, &hidden, &private));
    quote! {
        #trait_item

        #[doc(hidden)]
        #[allow(non_camel_case_types, non_snake_case)]
        #vis mod #hidden {
            #[allow(unused_imports)]
            use super::*;
            #[allow(unused_imports)]
            use #private::{Arm, Backend, Visit};

            #(#visit_traits)*

            /// The ops of a backend, which implements the extension.
            pub struct Ops<__X: Backend> {
                #(#op_fields)*
                /// Ties the pointers' types to the backend.
                pub marker: ::core::marker::PhantomData<fn() -> __X>,
            }

            /// The backend's own ops: callable only for a backend that implements the extension.
            pub const fn ops<__X: super::#ident>() -> Ops<__X> {
                Ops { #(#op_pointers)* marker: ::core::marker::PhantomData }
            }

            /// What a derived backend implements for each extension it lists: the arm of each kind of operand.
            pub trait Routes: Backend {
                #(#route_methods)*
            }

            #(#visitors)*
        }

        // Not a way to implement the trait a user should be pointed to: a missing impl is reported as such.
        #[diagnostic::do_not_recommend]
        #[automatically_derived]
        impl<__B: #hidden::Routes> #ident for __B {
            #(#methods)*
        }
    }
}

/// The trait as written, with `Backend` among its supertraits and, unless it has its own, a diagnostic that names
/// the missing impl at the variant whose backend lacks it.
fn trait_item(extension: &Extension, krate: &TokenStream) -> TokenStream {
    let original = extension.original;
    let (attrs, vis, ident, items) = (&original.attrs, &original.vis, &original.ident, &original.items);
    let has_diagnostic = attrs.iter().any(|attr| {
        let segments: Vec<String> = attr.path().segments.iter().map(|segment| segment.ident.to_string()).collect();
        segments == ["diagnostic", "on_unimplemented"]
    });
    let diagnostic = (!has_diagnostic).then(|| {
        let name = ident.to_string();
        let message = format!("the backend `{{Self}}` does not implement the extension `{name}`");
        let label = format!("this variant's backend has no `impl {name}`");
        let note = format!(
            "implement `{name}` for `{{Self}}`, or leave `{name}` out of this enum's `#[dispatch(extensions(...))]`"
        );
        let autodiff = format!(
            "for `Autodiff<B>`, `impl<B: {name} + BaseBackend> {name} for Autodiff<B>` records each op's backward \
             rule with `AutodiffTensor::custom_op`"
        );
        quote!(#[diagnostic::on_unimplemented(message = #message, label = #label, note = #note, note = #autodiff)])
    });
    let has_backend = original.supertraits.iter().any(|bound| match bound {
        TypeParamBound::Trait(bound) => bound.path.segments.last().is_some_and(|segment| segment.ident == "Backend"),
        _ => false,
    });
    let backend = (!has_backend).then(|| quote!(#krate::Backend));
    let bounds: Vec<TokenStream> = original.supertraits.iter().map(|bound| quote!(#bound)).chain(backend).collect();
    quote! {
        #(#attrs)*
        #diagnostic
        #vis trait #ident: #(#bounds)+* {
            #(#items)*
        }
    }
}

/// The type a visitor holds an operand of `kind` as, for backend `__B` and lifetime `'__a`.
fn field_type(kind: Kind) -> TokenStream {
    match kind {
        Kind::Float => quote!(&'__a <__B as Backend>::FloatTensor),
        Kind::Floats => quote!(&'__a [<__B as Backend>::FloatTensor]),
        Kind::Int => quote!(&'__a <__B as Backend>::IntTensor),
        Kind::Bool => quote!(&'__a <__B as Backend>::BoolTensor),
        Kind::Device => quote!(&'__a <__B as Backend>::Device),
        Kind::Plain(ty) => quote!(#ty),
    }
}

/// The type a backend `__X`'s op takes an operand of `kind` as.
fn pointer_type(kind: Kind) -> TokenStream {
    match kind {
        Kind::Float => quote!(&<__X as Backend>::FloatTensor),
        Kind::Floats => quote!(&[<__X as Backend>::FloatTensor]),
        Kind::Int => quote!(&<__X as Backend>::IntTensor),
        Kind::Bool => quote!(&<__X as Backend>::BoolTensor),
        Kind::Device => quote!(&<__X as Backend>::Device),
        Kind::Plain(ty) => quote!(#ty),
    }
}

/// `Result<T>` of an op's `output`, for backend `backend`.
fn output_type(output: Output, backend: &TokenStream, private: &TokenStream) -> TokenStream {
    let inner = match output {
        Output::Float => quote!(<#backend as Backend>::FloatTensor),
        Output::Int => quote!(<#backend as Backend>::IntTensor),
        Output::Bool => quote!(<#backend as Backend>::BoolTensor),
        Output::Plain(ty) => quote!(#ty),
    };
    quote!(#private::Result<#inner>)
}

/// The visitor trait and the backend's type of the operand `kind` routes by.
fn route_of(kind: Kind) -> (&'static str, &'static str, &'static str) {
    match kind {
        Kind::Float | Kind::Floats => ROUTES[0],
        Kind::Int => ROUTES[1],
        Kind::Bool => ROUTES[2],
        Kind::Device | Kind::Plain(_) => ROUTES[3],
    }
}

/// The visitor of one op: its operands, and `visit`, which takes them out of the derived backend's types through
/// the arm (a later operand on another arm is a `DeviceMismatch`), calls the arm's own op and puts the output back.
fn visitor(op: &Op, krate: &TokenStream, private: &TokenStream) -> TokenStream {
    let name = op.ident();
    let params: Vec<_> = op.params.iter().flatten().collect();
    let (Some(output), Some(routed_by)) = (op.output, op.routed_by()) else { return quote!() };
    let Some(routed_kind) = routed_by.kind else { return quote!() };
    let idents: Vec<&Ident> = params.iter().map(|param| param.ident).collect();
    let fields = params.iter().filter_map(|param| param.kind.map(field_type));
    let kinds = params.iter().filter_map(|param| param.kind.map(|kind| kind.op_list_token()));
    let (visit_trait, _, routed) = route_of(routed_kind);
    let (visit_trait, routed) = (format_ident!("{}", visit_trait), format_ident!("{}", routed));
    let output_type = output_type(output, &quote!(__B), private);
    let output_kind = output.op_list_token();
    let doc = format!("`{name}` on the arm its operands live on.");
    quote! {
        #[doc = #doc]
        pub struct #name<'__a, __B: Backend> {
            #(pub #idents: #fields,)*
            pub marker: ::core::marker::PhantomData<&'__a __B>,
        }

        impl<'__a, __B: Backend> Visit<__B> for #name<'__a, __B> {
            type Output = #output_type;
        }

        impl<'__a, __B: Backend> #visit_trait<__B> for #name<'__a, __B> {
            #[inline(always)]
            fn visit<__A: Arm<__B>>(
                self,
                routed: &<__A::Backend as Backend>::#routed,
                ops: &Ops<__A::Backend>,
            ) -> Self::Output {
                let Self { #(#idents,)* marker: _ } = self;
                #krate::__op_operands!(__B, __A, #name, routed; first = []; #(#idents: #kinds),*);
                #krate::__op_output!(__B, __A, #output_kind, (ops.#name)(#(#idents),*))
            }
        }
    }
}

/// The op for every derived backend: its visitor sent to the arm of its first operand.
fn method(op: &Op, hidden: &Ident, private: &TokenStream) -> TokenStream {
    let sig = &op.original.sig;
    let name = op.ident();
    let Some(routed_by) = op.routed_by() else { return quote!() };
    let Some(routed_kind) = routed_by.kind else { return quote!() };
    let idents: Vec<&Ident> = op.params.iter().flatten().map(|param| param.ident).collect();
    let (_, route, _) = route_of(routed_kind);
    let route = format_ident!("{}", route);
    let operand = routed_by.ident;
    let send = match routed_kind {
        Kind::Floats => {
            let message = format!("`{name}` needs at least one tensor, got an empty list");
            quote! {
                match #operand.first() {
                    #private::Some(first) => <__B as #hidden::Routes>::#route(first, visit),
                    #private::None => #private::Err(#private::Error::invalid(::core::stringify!(#name), #message)),
                }
            }
        }
        _ => quote!(<__B as #hidden::Routes>::#route(#operand, visit)),
    };
    quote! {
        #[inline]
        #sig {
            let visit = #hidden::#name::<__B> { #(#idents,)* marker: ::core::marker::PhantomData };
            #send
        }
    }
}
