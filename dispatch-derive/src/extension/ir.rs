//! An extension as written: the trait, its arguments, and each op's parameters and output sorted into the kinds
//! of dispatch-core's op list, each keeping its syn node for errors and expansion.

use darling::FromMeta;
use darling::ast::NestedMeta;
use darling::error::Accumulator;
use proc_macro2::{TokenStream, TokenTree};
use quote::quote;
use syn::{FnArg, Ident, ItemTrait, Pat, Path, ReturnType, TraitItem, TraitItemFn, Type};

/// The arguments of `#[extension(...)]`.
#[derive(Default, FromMeta)]
pub struct Options {
    /// Where dispatch-core is, for users who renamed the dependency; `::dispatch_core` by default.
    #[darling(rename = "crate")]
    pub krate: Option<Path>,
}

impl Options {
    pub fn parse(attr: TokenStream, errors: &mut Accumulator) -> Options {
        let parsed =
            NestedMeta::parse_meta_list(attr).map_err(darling::Error::from).and_then(|list| Options::from_list(&list));
        errors.handle(parsed).unwrap_or_default()
    }

    /// The path to dispatch-core.
    pub fn krate(&self) -> TokenStream {
        match &self.krate {
            Some(krate) => quote!(#krate),
            None => quote!(::dispatch_core),
        }
    }
}

pub struct Extension<'a> {
    pub original: &'a ItemTrait,
    pub options: Options,
    pub ops: Vec<Op<'a>>,
    /// Items other than fns, which an extension cannot hold (`valid` reports them).
    pub others: Vec<&'a TraitItem>,
}

pub struct Op<'a> {
    pub original: &'a TraitItemFn,
    /// The parameters in order; `None` where a parameter is `self` or not a plain `name: Type`.
    pub params: Vec<Option<Param<'a>>>,
    /// The output inside `Result<..>`, if the op returns a `Result` of one type.
    pub output: Option<Output<'a>>,
}

pub struct Param<'a> {
    pub ident: &'a Ident,
    pub ty: &'a Type,
    /// `None` for a type that mentions `Self` but is none of the backend's own.
    pub kind: Option<Kind<'a>>,
}

/// What a parameter or output is, in the words of dispatch-core's op list.
#[derive(Clone, Copy)]
pub enum Kind<'a> {
    /// `&Self::FloatTensor` (as output, `Self::FloatTensor`).
    Float,
    /// `&[Self::FloatTensor]`.
    Floats,
    /// `&Self::IntTensor` (as output, `Self::IntTensor`).
    Int,
    /// `&Self::BoolTensor` (as output, `Self::BoolTensor`).
    Bool,
    /// `&Self::Device`.
    Device,
    /// Any other type, which does not mention `Self`: passed as it is.
    Plain(&'a Type),
}

/// What an op returns inside its `Result`.
#[derive(Clone, Copy)]
pub enum Output<'a> {
    /// `Self::FloatTensor`.
    Float,
    /// `Self::IntTensor`.
    Int,
    /// `Self::BoolTensor`.
    Bool,
    /// Any other type, which does not mention `Self`.
    Plain(&'a Type),
}

impl Kind<'_> {
    /// The kind's token in dispatch-core's op list: `Float`, `[Float]`, ... or `(Type)`.
    pub fn op_list_token(&self) -> TokenStream {
        match self {
            Kind::Float => quote!(Float),
            Kind::Floats => quote!([Float]),
            Kind::Int => quote!(Int),
            Kind::Bool => quote!(Bool),
            Kind::Device => quote!(Device),
            Kind::Plain(ty) => quote!((#ty)),
        }
    }
}

impl<'a> Extension<'a> {
    pub fn from_syn(original: &'a ItemTrait, options: Options) -> Self {
        let (mut ops, mut others) = (Vec::new(), Vec::new());
        for item in &original.items {
            match item {
                TraitItem::Fn(function) => ops.push(Op::from_syn(function)),
                other => others.push(other),
            }
        }
        Extension { original, options, ops, others }
    }
}

impl<'a> Op<'a> {
    fn from_syn(original: &'a TraitItemFn) -> Self {
        let params = original
            .sig
            .inputs
            .iter()
            .map(|input| match input {
                FnArg::Typed(typed) => match &*typed.pat {
                    Pat::Ident(pat) if pat.by_ref.is_none() && pat.subpat.is_none() => {
                        Some(Param { ident: &pat.ident, ty: &typed.ty, kind: Kind::of_param(&typed.ty) })
                    }
                    _ => None,
                },
                FnArg::Receiver(_) => None,
            })
            .collect();
        let output = match &original.sig.output {
            ReturnType::Type(_, ty) => result_of(ty).and_then(Output::of),
            ReturnType::Default => None,
        };
        Op { original, params, output }
    }

    pub fn ident(&self) -> &'a Ident {
        &self.original.sig.ident
    }

    /// The operand the op is sent by: its first tensor, else its first device (the op list's rule).
    pub fn routed_by(&self) -> Option<&Param<'a>> {
        let params = || self.params.iter().flatten();
        let tensor =
            params().find(|param| matches!(param.kind, Some(Kind::Float | Kind::Floats | Kind::Int | Kind::Bool)));
        tensor.or_else(|| params().find(|param| matches!(param.kind, Some(Kind::Device))))
    }
}

impl<'a> Kind<'a> {
    fn of_param(ty: &'a Type) -> Option<Self> {
        let Type::Reference(reference) = ty else { return plain(ty) };
        if reference.mutability.is_some() {
            return plain(ty);
        }
        if let Type::Slice(slice) = &*reference.elem {
            return if own_type(&slice.elem) == Some("FloatTensor") { Some(Kind::Floats) } else { plain(ty) };
        }
        match own_type(&reference.elem) {
            Some("FloatTensor") => Some(Kind::Float),
            Some("IntTensor") => Some(Kind::Int),
            Some("BoolTensor") => Some(Kind::Bool),
            Some("Device") => Some(Kind::Device),
            _ => plain(ty),
        }
    }
}

impl<'a> Output<'a> {
    fn of(ty: &'a Type) -> Option<Self> {
        match own_type(ty) {
            Some("FloatTensor") => Some(Output::Float),
            Some("IntTensor") => Some(Output::Int),
            Some("BoolTensor") => Some(Output::Bool),
            _ => (!mentions_self(quote!(#ty))).then_some(Output::Plain(ty)),
        }
    }

    /// The output's token in dispatch-core's op list.
    pub fn op_list_token(&self) -> TokenStream {
        match self {
            Output::Float => quote!(Float),
            Output::Int => quote!(Int),
            Output::Bool => quote!(Bool),
            Output::Plain(ty) => quote!((#ty)),
        }
    }
}

/// A type that does not mention `Self`, as a plain kind.
fn plain(ty: &Type) -> Option<Kind<'_>> {
    (!mentions_self(quote!(#ty))).then_some(Kind::Plain(ty))
}

/// `X` of `Self::X`.
fn own_type(ty: &Type) -> Option<&'static str> {
    let Type::Path(path) = ty else { return None };
    let segments: Vec<String> = path.path.segments.iter().map(|segment| segment.ident.to_string()).collect();
    if path.qself.is_some() || segments.len() != 2 || segments[0] != "Self" {
        return None;
    }
    ["FloatTensor", "IntTensor", "BoolTensor", "Device"].into_iter().find(|name| segments[1] == *name)
}

/// `T` of `Result<T>` or `Result<T, E>` (any path ending in `Result`). Whether the error type is
/// `dispatch_core::Error` is for the compiler to tell: the expansion converts the output through a trait that only
/// `Result<T, dispatch_core::Error>` implements (see `op`).
fn result_of(ty: &Type) -> Option<&Type> {
    let Type::Path(path) = ty else { return None };
    let last = path.path.segments.last()?;
    let syn::PathArguments::AngleBracketed(arguments) = &last.arguments else { return None };
    let types: Vec<&Type> = arguments
        .args
        .iter()
        .filter_map(|argument| match argument {
            syn::GenericArgument::Type(ty) => Some(ty),
            _ => None,
        })
        .collect();
    match types.as_slice() {
        [ok] | [ok, _] if last.ident == "Result" => Some(ok),
        _ => None,
    }
}

/// Whether `tokens` name `Self` anywhere.
pub fn mentions_self(tokens: TokenStream) -> bool {
    tokens.into_iter().any(|token| match token {
        TokenTree::Ident(ident) => ident == "Self",
        TokenTree::Group(group) => mentions_self(group.stream()),
        _ => false,
    })
}
