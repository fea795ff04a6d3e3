//! The `impl Module<B>` of a valid model: `map_params` rebuilds the struct field by field, in declaration order,
//! each visited field mapped under its name and each skipped one moved as it is.

use proc_macro2::{Span, TokenStream};
use quote::{quote, quote_spanned};
use syn::Ident;
use syn::spanned::Spanned;

use super::model::{FieldRole, Model};

pub fn expand(model: &Model) -> TokenStream {
    let Model { backend, private, fields, .. } = model;
    // Prefixed: a user's constant called `name` would turn a parameter of that name into a constant pattern, which
    // not even a hygienic span prevents (items resolve at the call site).
    let name = Ident::new("__dispatch_name", Span::mixed_site());
    let mapper = Ident::new("__dispatch_mapper", Span::mixed_site());
    let values = fields.iter().map(|field| {
        let (member, ty) = (&field.member, field.ty);
        match &field.role {
            FieldRole::Visited { name: param, .. } => {
                // Spanned on the field's type, so that a type that is not a module is one error there, in the
                // words of `FieldModule`'s `on_unimplemented`. `self` stays outside the span: under the span of
                // a struct written by a `macro_rules!`, it would not resolve.
                let map_field = quote_spanned!(ty.span()=> <#ty as #private::FieldModule<#backend>>::map_field);
                quote!(#member: #map_field(self.#member, &#private::join_name(#name, #param), #mapper)?)
            }
            FieldRole::Skipped => quote!(#member: self.#member),
        }
    });
    let bounds = fields.iter().filter_map(|field| match field.role {
        FieldRole::Visited { needs_bound: true, .. } => {
            let ty = field.ty;
            Some(quote_spanned!(ty.span()=> #ty: #private::Module<#backend>))
        }
        FieldRole::Visited { needs_bound: false, .. } | FieldRole::Skipped => None,
    });
    let visits_nothing = fields.iter().all(|field| matches!(field.role, FieldRole::Skipped));
    let unused = visits_nothing.then(|| quote!(let _ = (#name, #mapper);));
    let header = impl_header(model, bounds.collect());
    quote! {
        const _: () = {
            #[automatically_derived]
            #header {
                fn map_params(
                    self,
                    #name: &#private::str,
                    #mapper: &mut dyn #private::ParamMapper<#backend>,
                ) -> #private::Result<Self> {
                    #unused
                    #private::Ok(Self { #(#values,)* })
                }
            }
        };
    }
}

/// `impl<...> Module<B> for Struct<...> where ...`: the struct's own generics and where clause, `B: Backend`, and
/// `extra_bounds`.
pub fn impl_header(model: &Model, extra_bounds: Vec<TokenStream>) -> TokenStream {
    let Model { original, backend, private, .. } = model;
    let ident = &original.ident;
    let (impl_generics, type_generics, where_clause) = original.generics.split_for_impl();
    let predicates = where_clause.map(|clause| &clause.predicates).into_iter().flatten();
    quote! {
        impl #impl_generics #private::Module<#backend> for #ident #type_generics
        where
            #backend: #private::Backend,
            #(#predicates,)*
            #(#extra_bounds,)*
    }
}
