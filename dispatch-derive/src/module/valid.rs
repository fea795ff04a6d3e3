//! Every rule the input must follow, in one place. Each broken rule is reported at the user's own tokens, and
//! checking goes on after it so that the user sees every error at once.
//!
//! That a visited field's type is a module is not checked here: only rustc knows, and the expansion asks it at
//! the field (see `expand.rs`).

use darling::Error;
use darling::error::Accumulator;
use proc_macro2::{TokenStream, TokenTree};
use quote::ToTokens;
use syn::ext::IdentExt;
use syn::{Generics, Ident, Member, TypeParam, TypeParamBound, WherePredicate};

use super::ast::{self, Input};
use super::model::{self, Field, FieldRole, Model};

/// The traits whose bound marks a type parameter as the backend (each implies `Backend`).
const BACKEND_TRAITS: [&str; 3] = ["Backend", "AutodiffBackend", "BaseBackend"];

/// The model of a valid input; `None` when no backend parameter was found, which is then in `errors`. Whatever
/// else it finds wrong goes to `errors` too: the model is only meant to be expanded when `errors` stays empty.
pub fn check<'a>(input: &Input<'a>, errors: &mut Accumulator) -> Option<Model<'a>> {
    if input.options.skip.is_present() {
        errors.push(
            syn::Error::new(
                input.options.skip.span(),
                "`skip` goes on a field, not on the struct: `#[module(skip)]` on a field that is not a parameter \
                 keeps it out of the module",
            )
            .into(),
        );
    }
    let backend = errors.handle(backend_parameter(input))?;
    let others: Vec<&Ident> =
        input.original.generics.type_params().map(|param| &param.ident).filter(|ident| *ident != backend).collect();
    Some(Model {
        original: input.original,
        backend,
        private: model::private_path(input.options.krate.as_ref()),
        fields: input.fields.iter().map(|field| model_field(field, &others)).collect(),
    })
}

/// The type parameter bounded by a backend trait, or else the only type parameter.
fn backend_parameter<'a>(input: &Input<'a>) -> darling::Result<&'a Ident> {
    let original = input.original;
    let generics = &original.generics;
    let params: Vec<&TypeParam> = generics.type_params().collect();
    let bounded: Vec<&TypeParam> =
        params.iter().copied().filter(|param| bounded_by_a_backend(param, generics)).collect();
    match (bounded.as_slice(), params.as_slice()) {
        ([backend], _) | ([], [backend]) => Ok(&backend.ident),
        ([first, second, ..], _) => Err(Error::custom(format!(
            "`{}` and `{}` are both bounded by a backend trait: a module's parameters live on one backend, so \
             `#[derive(Module)]` needs exactly one backend type parameter",
            first.ident, second.ident
        ))
        .with_span(&second.ident)),
        ([], []) => Err(Error::custom(format!(
            "`#[derive(Module)]` needs `{}` to be generic over its backend, e.g. `struct {}<B: Backend>`: a module's \
             parameters are `Tensor<B>`s",
            original.ident, original.ident
        ))
        .with_span(&original.ident)),
        ([], [first, ..]) => {
            let listed: Vec<String> = params.iter().map(|param| format!("`{}`", param.ident)).collect();
            Err(Error::custom(format!(
                "`#[derive(Module)]` cannot tell which of {} is the backend: bound that one by `Backend`, e.g. \
                 `{}: Backend`",
                listed.join(", "),
                first.ident
            ))
            .with_span(&generics.params))
        }
    }
}

/// Whether `param` is bounded by a backend trait, where it is declared or in the where clause.
fn bounded_by_a_backend(param: &TypeParam, generics: &Generics) -> bool {
    let is_backend_trait = |bound: &TypeParamBound| match bound {
        TypeParamBound::Trait(bound) => {
            bound.path.segments.last().is_some_and(|segment| BACKEND_TRAITS.iter().any(|name| segment.ident == name))
        }
        _ => false,
    };
    let in_where_clause =
        generics.where_clause.iter().flat_map(|clause| &clause.predicates).any(|predicate| match predicate {
            WherePredicate::Type(predicate) => {
                let is_param = match &predicate.bounded_ty {
                    syn::Type::Path(path) => path.qself.is_none() && path.path.is_ident(&param.ident),
                    _ => false,
                };
                is_param && predicate.bounds.iter().any(is_backend_trait)
            }
            _ => false,
        });
    param.bounds.iter().any(is_backend_trait) || in_where_clause
}

fn model_field<'a>(field: &ast::Field<'a>, other_params: &[&Ident]) -> Field<'a> {
    let original = field.original;
    let (member, name) = match &original.ident {
        Some(ident) => (Member::Named(ident.clone()), ident.unraw().to_string()),
        None => (Member::from(field.index), field.index.to_string()),
    };
    let role = if field.options.skip.is_present() {
        FieldRole::Skipped
    } else {
        FieldRole::Visited { name, needs_bound: names_any(original.ty.to_token_stream(), other_params) }
    };
    Field { member, ty: &original.ty, role }
}

/// Whether `tokens` hold one of `idents` anywhere.
fn names_any(tokens: TokenStream, idents: &[&Ident]) -> bool {
    tokens.into_iter().any(|token| match token {
        TokenTree::Ident(ident) => idents.iter().any(|param| **param == ident),
        TokenTree::Group(group) => names_any(group.stream(), idents),
        TokenTree::Punct(_) | TokenTree::Literal(_) => false,
    })
}
