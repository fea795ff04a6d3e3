//! The code of one op of an extension: its pointer among a backend's ops, the function that pointer calls, its
//! visitor, and the method every derived backend gets.
//!
//! The op's return type is the user's (`Result<T>` of any path), and its error type is what generated code cannot
//! check by syntax: it must be `dispatch_core::Error`. Where the user's return type meets generated code (the
//! method's output, the op's own output), its error is converted through `__DispatchError`, which only
//! `dispatch_core::Error` implements, each conversion spanned at the return type: another error type is then one
//! unmet bound there, `E: __DispatchError`, the same at both places, which rustc reports once.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Ident, ReturnType};

use super::ir::{Kind, Op, Output};
use crate::hidden::{self, ROUTES};
use crate::model::replace_self;

/// What every piece of an op's code names: dispatch-core, the extension and its hidden module.
pub struct Context<'a> {
    pub krate: TokenStream,
    /// `<krate>::__private01`.
    pub private: TokenStream,
    pub trait_ident: &'a Ident,
    pub hidden: Ident,
}

/// The generic parameter standing for a backend (the derived one, or one implementing the extension).
fn backend() -> Ident {
    format_ident!("__DispatchBackend")
}

/// The trait naming the error type of the user's return type, `Result<T, E>` of any spelling.
pub fn result_trait() -> Ident {
    format_ident!("__DispatchResult")
}

/// The trait the error of an op's output is converted through (see the module's documentation).
pub fn error_trait() -> Ident {
    format_ident!("__DispatchError")
}

fn visitor_ident(op: &Op) -> Ident {
    format_ident!("__dispatch_visit_{}", op.ident())
}

fn call_ident(op: &Op) -> Ident {
    format_ident!("__dispatch_call_{}", op.ident())
}

/// The type an operand of `kind` has for `backend`, borrowed for `lifetime` (empty for an elided one).
fn operand_type(context: &Context, kind: Kind, backend: &Ident, lifetime: &TokenStream) -> TokenStream {
    let private = &context.private;
    match kind {
        Kind::Float => quote!(&#lifetime <#backend as #private::Backend>::FloatTensor),
        Kind::Floats => quote!(&#lifetime [<#backend as #private::Backend>::FloatTensor]),
        Kind::Int => quote!(&#lifetime <#backend as #private::Backend>::IntTensor),
        Kind::Bool => quote!(&#lifetime <#backend as #private::Backend>::BoolTensor),
        Kind::Device => quote!(&#lifetime <#backend as #private::Backend>::Device),
        Kind::Plain(ty) => quote!(#ty),
    }
}

/// `dispatch_core::Result<T>` of an op's `output`, for `backend`.
fn output_type(context: &Context, output: Output, backend: &Ident) -> TokenStream {
    let private = &context.private;
    let inner = match output {
        Output::Float => quote!(<#backend as #private::Backend>::FloatTensor),
        Output::Int => quote!(<#backend as #private::Backend>::IntTensor),
        Output::Bool => quote!(<#backend as #private::Backend>::BoolTensor),
        Output::Plain(ty) => quote!(#ty),
    };
    quote!(#private::Result<#inner>)
}

/// `result`, of the derived backend's or the op's own result type, with its error converted to the other's:
/// `match result { Ok(value) => Ok(value), Err(error) => Err(<E as __DispatchError>::function(error)) }`, where `E`
/// is the error type of the user's return type (with `Self` spelled `self_type`). The bound is spanned at the
/// user's return type, resolved as the rest of the expansion.
fn convert_error(
    context: &Context,
    op: &Op,
    result: TokenStream,
    function: &str,
    self_type: Option<&Ident>,
) -> Option<TokenStream> {
    let ReturnType::Type(_, returned) = &op.original.sig.output else { return None };
    let at = Span::call_site().located_at(returned.span());
    let returned = match self_type {
        Some(self_type) => replace_self(quote!(#returned), self_type),
        None => quote!(#returned),
    };
    let (private, hidden) = (&context.private, &context.hidden);
    let (result_trait, error_trait, function) = (result_trait(), error_trait(), format_ident!("{}", function));
    let error_type = quote_spanned!(at=> <#returned as #hidden::#result_trait>::Error);
    let converted = quote_spanned!(at=> <#error_type as #hidden::#error_trait>::#function(__dispatch_error));
    Some(quote! {
        match #result {
            #private::Ok(__dispatch_value) => #private::Ok(__dispatch_value),
            #private::Err(__dispatch_error) => #private::Err(#converted),
        }
    })
}

/// The types `backend`'s op takes its operands as.
fn operand_types(context: &Context, op: &Op, backend: &Ident) -> Option<Vec<TokenStream>> {
    op.params.iter().map(|param| Some(operand_type(context, param.as_ref()?.kind?, backend, &quote!()))).collect()
}

/// `pub op: fn(operands) -> Result<T>,` in `__DispatchOps<__DispatchBackend>`.
pub fn pointer_field(context: &Context, op: &Op) -> Option<TokenStream> {
    let (name, backend) = (op.ident(), backend());
    let types = operand_types(context, op, &backend)?;
    let output = output_type(context, op.output?, &backend);
    let doc = format!("`{name}` of the backend.");
    Some(quote!(#[doc = #doc] pub #name: fn(#(#types),*) -> #output,))
}

/// `op: __dispatch_call_op::<__DispatchBackend>,`: the pointer, in `__dispatch_ops`.
pub fn pointer(op: &Op) -> TokenStream {
    let (name, call, backend) = (op.ident(), call_ident(op), backend());
    quote!(#name: #call::<#backend>,)
}

/// The function a backend's pointer calls: the backend's own op, its output converted to `dispatch_core::Result`.
pub fn call(context: &Context, op: &Op) -> Option<TokenStream> {
    let (name, trait_ident, backend) = (op.ident(), context.trait_ident, backend());
    let types = operand_types(context, op, &backend)?;
    let operands: Vec<Ident> = (0..types.len()).map(|index| format_ident!("__dispatch_operand_{}", index)).collect();
    let output = output_type(context, op.output?, &backend);
    let own_result = quote!(<#backend as super::#trait_ident>::#name(#(#operands),*));
    let converted = convert_error(context, op, own_result, "__dispatch_into", Some(&backend))?;
    let call = call_ident(op);
    let doc = format!("`{name}` of the backend, returning `dispatch_core::Result`.");
    Some(quote! {
        #[doc = #doc]
        #[inline(always)]
        pub fn #call<#backend: super::#trait_ident>(#(#operands: #types),*) -> #output {
            #converted
        }
    })
}

/// The visitor of one op: its operands, and `visit`, which takes them out of the derived backend's types through
/// the arm (a later operand on another arm is a `DeviceMismatch`), calls the arm's own op and puts the output back.
pub fn visitor(context: &Context, op: &Op) -> Option<TokenStream> {
    let (krate, private) = (&context.krate, &context.private);
    let name = op.ident();
    let output = op.output?;
    let routed_kind = op.routed_by()?.kind?;
    let params: Vec<_> = op.params.iter().flatten().collect();
    let idents: Vec<&Ident> = params.iter().map(|param| param.ident).collect();
    let backend = backend();
    let lifetime = quote!('__dispatch);
    let fields = params.iter().filter_map(|param| Some(operand_type(context, param.kind?, &backend, &lifetime)));
    let kinds = params.iter().filter_map(|param| Some(param.kind?.op_list_token()));
    let (core_visit_trait, routed) = route_of(routed_kind);
    let (visit_trait, routed) = (hidden::visit_trait(core_visit_trait), format_ident!("{}", routed));
    let ops_struct = hidden::ops_struct();
    let output_type = output_type(context, output, &backend);
    let output_kind = output.op_list_token();
    let visitor = visitor_ident(op);
    let doc = format!("`{name}` on the arm its operands live on.");
    let arm_backend = quote!(<__DispatchArm as #private::Arm<#backend>>::Backend);
    Some(quote! {
        #[doc = #doc]
        pub struct #visitor<#lifetime, #backend: #private::Backend>(
            #(pub #fields,)*
            pub ::core::marker::PhantomData<&#lifetime #backend>,
        );

        impl<#lifetime, #backend: #private::Backend> #private::Visit<#backend> for #visitor<#lifetime, #backend> {
            type Output = #output_type;
        }

        impl<#lifetime, #backend: #private::Backend> #visit_trait<#backend> for #visitor<#lifetime, #backend> {
            #[inline(always)]
            fn visit<__DispatchArm: #private::Arm<#backend>>(
                self,
                __dispatch_routed: &<#arm_backend as #private::Backend>::#routed,
                __dispatch_ops: &#ops_struct<#arm_backend>,
            ) -> Self::Output {
                // What dispatch-core's op macros name, which they resolve here.
                #[allow(unused_imports)]
                use #private::{Arm, Backend, Err, Ok, Some};
                let Self(#(#idents,)* _) = self;
                #krate::__op_operands!(#backend, __DispatchArm, #name, __dispatch_routed; first = []; #(#idents: #kinds),*);
                #krate::__op_output!(#backend, __DispatchArm, #output_kind, (__dispatch_ops.#name)(#(#idents),*))
            }
        }
    })
}

/// The op for every derived backend: its visitor sent to the arm of its first operand, and the output converted to
/// the user's return type.
pub fn method(context: &Context, op: &Op) -> Option<TokenStream> {
    let (private, hidden) = (&context.private, &context.hidden);
    let sig = &op.original.sig;
    let name = op.ident();
    let routed_by = op.routed_by()?;
    let routed_kind = routed_by.kind?;
    let idents: Vec<&Ident> = op.params.iter().flatten().map(|param| param.ident).collect();
    let (_, route, _) = ROUTES[route_index(routed_kind)];
    let route = format_ident!("{}", route);
    let (backend, routes_trait) = (backend(), hidden::routes_trait());
    let operand = routed_by.ident;
    let send = match routed_kind {
        Kind::Floats => {
            let parameter = format!("{operand}.len()");
            quote! {
                match #operand.first() {
                    #private::Some(__dispatch_first) => {
                        <#backend as #hidden::#routes_trait>::#route(__dispatch_first, __dispatch_visit)
                    }
                    #private::None => #private::Err(#private::Error::invalid_value(
                        ::core::stringify!(#name),
                        #parameter,
                        0usize,
                        "at least 1",
                    )),
                }
            }
        }
        _ => quote!(<#backend as #hidden::#routes_trait>::#route(#operand, __dispatch_visit)),
    };
    let converted = convert_error(context, op, send, "__dispatch_from", None)?;
    let visitor = visitor_ident(op);
    Some(quote! {
        #[inline]
        #sig {
            let __dispatch_visit = #hidden::#visitor::<#backend>(#(#idents,)* ::core::marker::PhantomData);
            #converted
        }
    })
}

fn route_index(kind: Kind) -> usize {
    match kind {
        Kind::Float | Kind::Floats => 0,
        Kind::Int => 1,
        Kind::Bool => 2,
        Kind::Device | Kind::Plain(_) => 3,
    }
}

/// dispatch-core's visitor trait and the backend's type of the operand `kind` routes by.
fn route_of(kind: Kind) -> (&'static str, &'static str) {
    let (visit_trait, _, routed) = ROUTES[route_index(kind)];
    (visit_trait, routed)
}
