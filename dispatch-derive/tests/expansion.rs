//! Scans the expansion of a sample enum (every role, compound cfgs) for what the derive must never generate: a
//! wildcard match arm, `dyn`, anything that panics, or a mention of a cfg'd variant outside its cfg.
//!
//! It includes the derive's pipeline with `#[path]`, as a bench can: a proc-macro crate exports nothing else.

#![allow(dead_code)]

#[path = "../src/ast.rs"]
mod ast;
#[path = "../src/attr.rs"]
mod attr;
#[path = "../src/derive.rs"]
mod derive;
#[path = "../src/expand/mod.rs"]
mod expand;
#[path = "../src/fallback.rs"]
mod fallback;
#[path = "../src/hidden.rs"]
mod hidden;
#[path = "../src/model.rs"]
mod model;
#[path = "../src/valid.rs"]
mod valid;

use proc_macro2::{TokenStream, TokenTree};
use quote::quote;

fn sample() -> TokenStream {
    quote! {
        #[derive(Clone, Debug, PartialEq, Dispatch)]
        #[dispatch(extensions(Fused, ops::Scaled))]
        pub enum Device {
            #[backend(Candle)]
            Cpu(<Candle as Backend>::Device),
            #[cfg(all(feature = "ndarray", not(target_os = "none")))]
            #[backend(dispatch_core::backends::NdArray)]
            NdArray(NdArrayDevice),
            #[cfg(any(unix, windows))]
            #[backend(my::HostBackend)]
            #[dispatch(name = "host")]
            Mine(HostDevice),
            #[autodiff]
            Autodiff(AutodiffDevice<Self>),
            #[distributed]
            Cluster(DistributedDevice<Self>),
        }
    }
}

/// Identifiers and `_ =>` arms anywhere in `tokens`.
fn scan(tokens: TokenStream, idents: &mut Vec<String>, wildcard_arms: &mut usize) {
    let tokens: Vec<TokenTree> = tokens.into_iter().collect();
    for (index, token) in tokens.iter().enumerate() {
        match token {
            TokenTree::Ident(ident) => idents.push(ident.to_string()),
            TokenTree::Group(group) => scan(group.stream(), idents, wildcard_arms),
            TokenTree::Punct(punct) if punct.as_char() == '=' => {
                let arrow = matches!(tokens.get(index + 1), Some(TokenTree::Punct(next)) if next.as_char() == '>');
                let after_underscore =
                    index > 0 && matches!(&tokens[index - 1], TokenTree::Ident(ident) if ident == "_");
                if arrow && after_underscore {
                    *wildcard_arms += 1;
                }
            }
            TokenTree::Punct(_) | TokenTree::Literal(_) => {}
        }
    }
}

#[test]
fn the_expansion_has_no_wildcard_arm_no_dyn_and_nothing_that_panics() {
    let expansion = derive::derive(sample());
    let text = expansion.to_string();
    assert!(!text.contains("compile_error"), "the sample must expand: {text}");
    let (mut idents, mut wildcard_arms) = (Vec::new(), 0);
    scan(expansion, &mut idents, &mut wildcard_arms);
    assert_eq!(wildcard_arms, 0, "{text}");
    for forbidden in ["dyn", "panic", "unreachable", "unimplemented", "todo", "unwrap", "expect"] {
        assert!(!idents.iter().any(|ident| ident == forbidden), "`{forbidden}` in the expansion: {text}");
    }
    assert!(idents.len() > 1000, "the scan saw the whole expansion ({} identifiers)", idents.len());
}

/// Walks a syntax tree and finds every mention of a cfg'd variant (an identifier of its, or a name literal with
/// its name as one `:`-separated part) that is not inside an item, arm, variant, field, statement or expression
/// carrying the variant's cfg.
struct CfgGuards<'a> {
    cfg: &'a str,
    idents: &'a [&'a str],
    name: &'a str,
    /// For each node being visited, whether its own attributes include `cfg`.
    guards: Vec<bool>,
    mentions: usize,
    unguarded: Vec<String>,
}

impl<'a> CfgGuards<'a> {
    fn check(file: &syn::File, cfg: &'a str, idents: &'a [&'a str], name: &'a str) -> (usize, Vec<String>) {
        let mut guards = CfgGuards { cfg, idents, name, guards: Vec::new(), mentions: 0, unguarded: Vec::new() };
        syn::visit::visit_file(&mut guards, file);
        (guards.mentions, guards.unguarded)
    }

    /// Visits `node` knowing whether its outer attributes, which syn prints first, include the cfg.
    fn guarded<T: quote::ToTokens>(&mut self, node: &T, visit: impl FnOnce(&mut Self)) {
        let mut guarded = false;
        let mut tokens = node.to_token_stream().into_iter();
        while let (Some(TokenTree::Punct(pound)), Some(TokenTree::Group(attr))) = (tokens.next(), tokens.next()) {
            if pound.as_char() != '#' {
                break;
            }
            guarded |= attr.stream().to_string() == self.cfg;
        }
        self.guards.push(guarded);
        visit(self);
        self.guards.pop();
    }

    fn mention(&mut self, what: String) {
        self.mentions += 1;
        if !self.guards.contains(&true) {
            self.unguarded.push(what);
        }
    }
}

impl<'ast> syn::visit::Visit<'ast> for CfgGuards<'_> {
    fn visit_item(&mut self, node: &'ast syn::Item) {
        self.guarded(node, |this| syn::visit::visit_item(this, node));
    }
    fn visit_impl_item(&mut self, node: &'ast syn::ImplItem) {
        self.guarded(node, |this| syn::visit::visit_impl_item(this, node));
    }
    fn visit_variant(&mut self, node: &'ast syn::Variant) {
        self.guarded(node, |this| syn::visit::visit_variant(this, node));
    }
    fn visit_field(&mut self, node: &'ast syn::Field) {
        self.guarded(node, |this| syn::visit::visit_field(this, node));
    }
    fn visit_arm(&mut self, node: &'ast syn::Arm) {
        self.guarded(node, |this| syn::visit::visit_arm(this, node));
    }
    fn visit_stmt(&mut self, node: &'ast syn::Stmt) {
        self.guarded(node, |this| syn::visit::visit_stmt(this, node));
    }
    fn visit_expr(&mut self, node: &'ast syn::Expr) {
        self.guarded(node, |this| syn::visit::visit_expr(this, node));
    }
    fn visit_ident(&mut self, ident: &'ast proc_macro2::Ident) {
        if self.idents.iter().any(|watched| ident == watched) {
            self.mention(format!("identifier `{ident}`"));
        }
    }
    fn visit_lit_str(&mut self, literal: &'ast syn::LitStr) {
        if literal.value().split(':').any(|part| part == self.name) {
            self.mention(format!("name {:?}", literal.value()));
        }
    }
}

#[test]
fn every_variant_cfg_reaches_every_item_generated_for_it() {
    let expansion = derive::derive(sample());
    let file: syn::File = syn::parse2(expansion.clone()).unwrap_or_else(|error| panic!("{error}: {expansion}"));
    // The variant, its backend path and its field type; the autodiff leaf over it and its name `autodiff:ndarray`
    // need its cfg as well as the autodiff variant's.
    let cases: [(&str, &[&str], &str); 2] = [
        ("cfg (all (feature = \"ndarray\" , not (target_os = \"none\")))", &["NdArray", "NdArrayDevice"], "ndarray"),
        ("cfg (any (unix , windows))", &["Mine", "HostBackend", "HostDevice"], "host"),
    ];
    for (cfg, idents, name) in cases {
        let (mentions, unguarded) = CfgGuards::check(&file, cfg, idents, name);
        assert!(unguarded.is_empty(), "{} of {mentions} mentions lack `#[{cfg}]`: {unguarded:#?}", unguarded.len());
        // Its tensor, local, base and autodiff tensor variants, two `From` impls, two names, and an arm in each
        // of some forty ops and impls.
        assert!(mentions >= 100, "the walk saw every item: {mentions} mentions of {idents:?}");
    }
}

/// Every `impl` in a syntax tree, with whether it carries `#[automatically_derived]`.
#[derive(Default)]
struct Impls {
    marked: usize,
    unmarked: Vec<String>,
}

impl<'ast> syn::visit::Visit<'ast> for Impls {
    fn visit_item_impl(&mut self, node: &'ast syn::ItemImpl) {
        if node.attrs.iter().any(|attr| attr.path().is_ident("automatically_derived")) {
            self.marked += 1;
        } else {
            let self_ty = &node.self_ty;
            let trait_ = node.trait_.as_ref().map(|(path, _)| quote!(#path).to_string());
            self.unmarked.push(format!("impl {trait_:?} for {}", quote!(#self_ty)));
        }
        syn::visit::visit_item_impl(self, node);
    }
}

#[test]
fn every_generated_impl_is_marked_automatically_derived() {
    let failing = quote! {
        pub enum Device { #[backend(Candle)] #[dispatch(name = "")] Cpu(CandleDevice) }
    };
    let local = quote! {
        pub enum Device {
            #[backend(Candle)] Cpu(CandleDevice),
            #[autodiff] Autodiff(AutodiffDevice<Self>),
        }
    };
    // The full sample, an enum without distributed variants, and the stubs that stand in after an error.
    for (input, at_least) in [(sample(), 20), (local, 15), (failing, 5)] {
        let expansion = derive::derive(input);
        let file: syn::File = syn::parse2(expansion.clone()).unwrap_or_else(|error| panic!("{error}: {expansion}"));
        let mut impls = Impls::default();
        syn::visit::visit_file(&mut impls, &file);
        assert!(impls.unmarked.is_empty(), "impls without `#[automatically_derived]`: {:#?}", impls.unmarked);
        assert!(impls.marked >= at_least, "the walk saw every impl: {} of at least {at_least}", impls.marked);
    }
}
