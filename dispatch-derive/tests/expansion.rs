//! Scans the expansion of a sample enum (every role, compound cfgs) for what the derive must never generate: a
//! wildcard match arm, `dyn`, or anything that panics.
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
#[path = "../src/model.rs"]
mod model;
#[path = "../src/valid.rs"]
mod valid;

use proc_macro2::{TokenStream, TokenTree};
use quote::quote;

fn sample() -> TokenStream {
    quote! {
        #[derive(Clone, Debug, PartialEq, Dispatch)]
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

#[test]
fn every_variant_cfg_reaches_every_item_generated_for_it() {
    let text = derive::derive(sample()).to_string();
    let ndarray_cfg = "cfg (all (feature = \"ndarray\" , not (target_os = \"none\")))";
    let host_cfg = "cfg (any (unix , windows))";
    // Every place the `NdArray` variant appears is guarded: each `NdArray (` pattern or constructor follows its cfg.
    let guarded = text.matches(ndarray_cfg).count();
    let uses = text.matches(":: NdArray (").count();
    assert!(guarded >= 30, "{guarded} guards");
    assert!(uses >= guarded, "{uses} uses, {guarded} guards");
    assert!(text.matches(host_cfg).count() >= 30);
    // The autodiff leaf over the host backend needs both the autodiff variant (no cfg) and the host cfg.
    assert!(text.contains(&format!("# [{host_cfg}] \"autodiff:host\"")), "{text}");
}
