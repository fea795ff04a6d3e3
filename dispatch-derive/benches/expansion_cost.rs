//! Group 3 of BENCHMARKS.md: what `#[derive(Dispatch)]` costs at compile time, by calling its expansion function
//! directly on enums of 4, 16, 64 and 256 variants.
//!
//! A proc-macro crate exports nothing but its macros, so the pipeline is included with `#[path]`, as the derive's
//! own `tests/expansion.rs` does. Outside rustc, `proc_macro2` runs on its own token implementation; inside rustc
//! the same code runs on the compiler's, so these times are the derive's own work, not the compiler's bridge.
//!
//! Two series: enums of `#[backend]` variants alone, and the same with one of them turned into an `#[autodiff]`
//! variant (which dispatches to `Autodiff<B>` for every base backend, so it doubles the match arms). The bench
//! prints the generated token count of each size; criterion reports time per variant, which stays flat when the
//! growth is linear.

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

use std::hint::black_box;

use criterion::{BatchSize, BenchmarkId, Criterion, SamplingMode, Throughput, criterion_group, criterion_main};
use proc_macro2::{TokenStream, TokenTree};
use quote::{format_ident, quote};

const SIZES: [usize; 4] = [4, 16, 64, 256];

#[derive(Clone, Copy, Debug)]
enum Series {
    /// Every variant is `#[backend]`, alternating candle and ndarray.
    Backends,
    /// The last variant is `#[autodiff]` over all the others.
    WithAutodiff,
}

impl Series {
    fn name(self) -> &'static str {
        match self {
            Series::Backends => "backends",
            Series::WithAutodiff => "with_autodiff",
        }
    }
}

/// A device enum of `variants` variants, as a user would write it.
fn device_enum(series: Series, variants: usize) -> TokenStream {
    let backend_count = match series {
        Series::Backends => variants,
        Series::WithAutodiff => variants - 1,
    };
    let backends = (0..backend_count).map(|index| {
        let ident = format_ident!("Device{}", index);
        // Many variants share a field type, so none can have a `From` of its own.
        if index % 2 == 0 {
            quote!(#[backend(Candle)] #[dispatch(no_from)] #ident(CandleDevice),)
        } else {
            quote!(#[backend(NdArray)] #[dispatch(no_from)] #ident(NdArrayDevice),)
        }
    });
    let autodiff = matches!(series, Series::WithAutodiff).then(|| quote!(#[autodiff] Autodiff(AutodiffDevice<Self>),));
    quote! {
        #[derive(Clone, Debug, PartialEq, Dispatch)]
        pub enum Device {
            #(#backends)*
            #autodiff
        }
    }
}

/// Every token of `tokens`, counting a delimited group as one token plus its contents.
fn token_count(tokens: TokenStream) -> usize {
    tokens
        .into_iter()
        .map(|token| match token {
            TokenTree::Group(group) => 1 + token_count(group.stream()),
            TokenTree::Ident(_) | TokenTree::Punct(_) | TokenTree::Literal(_) => 1,
        })
        .sum()
}

/// Expands every size once, refuses an expansion that is a compile error, and prints the token counts.
fn report_token_counts(series: Series) {
    eprintln!("derive/{}: variants, generated tokens, tokens per variant", series.name());
    for variants in SIZES {
        let expansion = derive::derive(device_enum(series, variants));
        assert!(
            !expansion.to_string().contains("compile_error"),
            "the {variants}-variant enum must expand: {expansion}"
        );
        let tokens = token_count(expansion);
        eprintln!("  {variants:>4} {tokens:>9} {:>9.1}", tokens as f64 / variants as f64);
    }
}

fn expansion(c: &mut Criterion) {
    for series in [Series::Backends, Series::WithAutodiff] {
        report_token_counts(series);
        let mut group = c.benchmark_group(format!("derive/{}", series.name()));
        // Up to a few hundred milliseconds per expansion: flat sampling keeps the largest enums to seconds.
        group.sampling_mode(SamplingMode::Flat).sample_size(30);
        for variants in SIZES {
            let input = device_enum(series, variants);
            group.throughput(Throughput::Elements(variants as u64));
            group.bench_function(BenchmarkId::from_parameter(variants), |b| {
                // The input is cloned outside the timed part: the derive owns its input, as rustc hands it over.
                b.iter_batched(|| input.clone(), |input| black_box(derive::derive(input)), BatchSize::SmallInput)
            });
        }
        group.finish();
    }
}

criterion_group!(benches, expansion);
criterion_main!(benches);
