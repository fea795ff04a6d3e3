//! The validated model the expansion works from: the backend parameter is found, every field is either visited
//! under its parameter name or skipped. Only `valid.rs` builds one.

use proc_macro2::TokenStream;
use quote::quote;
use syn::{DeriveInput, Ident, Member, Path, Type};

pub struct Model<'a> {
    pub original: &'a DeriveInput,
    /// The type parameter the parameters' tensors are generic over: `B` of `impl Module<B>`.
    pub backend: &'a Ident,
    /// `<crate>::__private01`, the one path generated code reaches dispatch-nn through.
    pub private: TokenStream,
    /// Every field, in declaration order.
    pub fields: Vec<Field<'a>>,
}

pub struct Field<'a> {
    /// `self.<member>`: the field's name, or its index in a tuple struct.
    pub member: Member,
    pub ty: &'a Type,
    pub role: FieldRole,
}

pub enum FieldRole {
    /// A module whose parameters are named `<module's name>.<name>.<...>`.
    Visited {
        name: String,
        /// Whether its type names a type parameter other than the backend (`Vec<M>`), and so needs
        /// `Type: Module<B>` in the impl's where clause: only the user's choice of `M` can tell.
        needs_bound: bool,
    },
    /// `#[module(skip)]`: kept as it is.
    Skipped,
}

/// The path generated code reaches dispatch-nn's runtime through: bumped with every breaking change to what it
/// holds, and private, so no user item can shadow it.
pub fn private_path(krate: Option<&Path>) -> TokenStream {
    match krate {
        Some(krate) => quote!(#krate::__private01),
        None => quote!(::dispatch_nn::__private01),
    }
}
