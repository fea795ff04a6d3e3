//! Unit tests of `#[derive(Module)]`'s pipeline on token streams: what is visited and under which name, which type
//! parameter is the backend, every error at once, and what the expansion may and may not contain.

use proc_macro2::{TokenStream, TokenTree};
use quote::quote;
use syn::DeriveInput;

use super::ast::Input;
use super::model::FieldRole;
use super::{derive, valid};

type Outcome = Result<(), String>;

fn parse(tokens: TokenStream) -> Result<DeriveInput, String> {
    syn::parse2(tokens).map_err(|error| error.to_string())
}

/// What the model of `tokens` says of each field: its parameter name, or `None` for a skipped one; and the
/// backend parameter.
fn visits(tokens: TokenStream) -> Result<(Vec<Option<String>>, String), String> {
    let input = parse(tokens)?;
    let mut errors = darling::Error::accumulator();
    let parsed = Input::from_syn(&input, &mut errors).ok_or("not a struct")?;
    let model = valid::check(&parsed, &mut errors);
    errors.finish().map_err(|error| error.to_string())?;
    let model = model.ok_or("no model without an error")?;
    let names = model
        .fields
        .iter()
        .map(|field| match &field.role {
            FieldRole::Visited { name, .. } => Some(name.clone()),
            FieldRole::Skipped => None,
        })
        .collect();
    Ok((names, model.backend.to_string()))
}

/// The messages of every error the input has, in the order they are found.
fn errors_of(tokens: TokenStream) -> Result<Vec<String>, String> {
    let input = parse(tokens)?;
    let mut errors = darling::Error::accumulator();
    if let Some(parsed) = Input::from_syn(&input, &mut errors) {
        valid::check(&parsed, &mut errors);
    }
    Ok(errors.into_inner().into_iter().flatten().map(|error| error.to_string()).collect())
}

/// Every identifier in `tokens`, depth first.
fn idents(tokens: TokenStream, into: &mut Vec<String>) {
    for token in tokens {
        match token {
            TokenTree::Ident(ident) => into.push(ident.to_string()),
            TokenTree::Group(group) => idents(group.stream(), into),
            TokenTree::Punct(_) | TokenTree::Literal(_) => {}
        }
    }
}

#[test]
fn every_field_is_visited_in_declaration_order_under_its_name() -> Outcome {
    let (names, backend) = visits(quote! {
        struct Block<B: Backend> {
            norm1: LayerNorm<B>,
            attention: CausalSelfAttention<B>,
            #[module(skip)]
            heads: usize,
            r#type: Tensor<B>,
            layers: Vec<Linear<B>>,
        }
    })?;
    let expected =
        vec![Some("norm1".into()), Some("attention".into()), None, Some("type".into()), Some("layers".into())];
    assert_eq!(names, expected);
    assert_eq!(backend, "B");
    Ok(())
}

#[test]
fn a_tuple_struct_names_its_fields_by_index() -> Outcome {
    let (names, _) = visits(quote!(
        struct Pair<B: Backend>(Linear<B>, #[module(skip)] f64, Tensor<B>);
    ))?;
    assert_eq!(names, vec![Some("0".into()), None, Some("2".into())]);
    Ok(())
}

#[test]
fn the_backend_is_the_parameter_bounded_by_a_backend_trait_else_the_only_one() -> Outcome {
    let cases = [
        (
            quote!(
                struct M<'a, const N: usize, X, B: dispatch_core::Backend> {
                    w: Tensor<B>,
                    #[module(skip)]
                    x: &'a [X; N],
                }
            ),
            "B",
        ),
        (
            quote!(
                struct M<T, Be>
                where
                    Be: AutodiffBackend,
                {
                    w: Tensor<Be>,
                    #[module(skip)]
                    t: T,
                }
            ),
            "Be",
        ),
        (
            quote!(
                struct M<C: BaseBackend + Clone, T> {
                    w: Tensor<C>,
                    #[module(skip)]
                    t: T,
                }
            ),
            "C",
        ),
        (
            quote!(
                struct M<Q> {
                    w: Tensor<Q>,
                }
            ),
            "Q",
        ),
    ];
    for (input, expected) in cases {
        let (_, backend) = visits(input)?;
        assert_eq!(backend, expected);
    }
    Ok(())
}

#[test]
fn a_field_naming_another_type_parameter_is_bounded_in_the_where_clause() -> Outcome {
    let expansion = derive(quote! {
        struct Stack<B: Backend, M, C> {
            layers: Vec<M>,
            head: Linear<B>,
            #[module(skip)]
            config: C,
        }
    })
    .to_string();
    assert!(expansion.contains("Vec < M > : :: dispatch_nn :: __private01 :: Module < B >"), "{expansion}");
    assert!(!expansion.contains("Linear < B > : "), "{expansion}");
    assert!(!expansion.contains("C : :: dispatch_nn"), "{expansion}");
    Ok(())
}

#[test]
fn the_expansion_reaches_the_runtime_only_through_the_private_path_and_never_panics() -> Outcome {
    let expansion = derive(quote! {
        struct Mlp<B: Backend> { up: Linear<B>, down: Linear<B>, #[module(skip)] width: usize }
    });
    let text = expansion.to_string();
    assert!(!text.contains("compile_error"), "{text}");
    assert!(
        text.contains("# [automatically_derived] impl < B : Backend > :: dispatch_nn :: __private01 :: Module < B >")
    );
    assert!(text.contains("up : < Linear < B > as :: dispatch_nn :: __private01 :: FieldModule < B >> :: map_field"));
    assert!(text.contains(r#":: dispatch_nn :: __private01 :: join_name (__dispatch_name , "down")"#), "{text}");
    assert!(text.contains("width : self . width"), "{text}");
    let mut names = Vec::new();
    idents(expansion, &mut names);
    for forbidden in ["panic", "unreachable", "unimplemented", "todo", "unwrap", "expect", "Module", "Result", "Ok"] {
        // `Module`, `Result` and `Ok` appear, but only right after `__private01 ::`.
        let bare = names.windows(2).filter(|pair| pair[1] == forbidden && pair[0] != "__private01").count();
        assert_eq!(bare, 0, "`{forbidden}` outside the private path in {text}");
    }
    Ok(())
}

#[test]
fn a_renamed_crate_is_reached_through_its_new_name() -> Outcome {
    let text = derive(quote! {
        #[module(crate = nn)]
        struct Mlp<B: Backend> { up: Linear<B> }
    })
    .to_string();
    assert!(text.contains("nn :: __private01 :: Module < B >"), "{text}");
    assert!(!text.contains("dispatch_nn"), "{text}");
    Ok(())
}

#[test]
fn a_struct_with_nothing_to_visit_still_uses_its_arguments() -> Outcome {
    let text = derive(quote!(
        struct Nothing<B: Backend> {
            #[module(skip)]
            marker: PhantomData<B>,
        }
    ))
    .to_string();
    assert!(text.contains("let _ = (__dispatch_name , __dispatch_mapper) ;"), "{text}");
    let (names, _) = visits(quote!(
        struct Unit<B: Backend>;
    ))?;
    assert!(names.is_empty());
    Ok(())
}

#[test]
fn every_error_is_reported_at_once_with_a_stub_impl() -> Outcome {
    let input = quote! {
        #[module(skip)]
        struct Model<B: Backend> {
            #[module(skp)]
            a: Tensor<B>,
            #[module(skip, skip)]
            b: usize,
        }
    };
    let errors = errors_of(input.clone())?;
    assert_eq!(errors.len(), 3, "{errors:#?}");
    assert!(errors[0].starts_with("Unknown field: `skp`. Did you mean `skip`?"), "{}", errors[0]);
    assert!(errors[1].starts_with("Duplicate field `skip`"), "{}", errors[1]);
    assert!(errors[2].starts_with("`skip` goes on a field, not on the struct"), "{}", errors[2]);
    let text = derive(input).to_string();
    assert_eq!(text.matches("compile_error").count(), 3, "{text}");
    assert!(text.contains(":: dispatch_nn :: __private01 :: Ok (self)"), "{text}");
    Ok(())
}

#[test]
fn what_is_not_a_struct_generic_over_one_backend_is_rejected() -> Outcome {
    let cases = [
        (
            quote!(
                enum Model<B: Backend> {
                    A(Tensor<B>),
                }
            ),
            "`#[derive(Module)]` works on structs only, not on an enum",
        ),
        (
            quote!(union Model<B: Backend> { a: u32, b: PhantomData<B> }),
            "`#[derive(Module)]` works on structs only, not on a union",
        ),
        (
            quote!(
                struct Model {
                    w: Tensor<NdArray>,
                }
            ),
            "`#[derive(Module)]` needs `Model` to be generic over its backend",
        ),
        (
            quote!(
                struct Model<A, C> {
                    w: Tensor<A>,
                }
            ),
            "`#[derive(Module)]` cannot tell which of `A`, `C` is the backend: bound that one by `Backend`, e.g. `A: Backend`",
        ),
        (
            quote!(
                struct Model<A: Backend, C>
                where
                    C: Backend,
                {
                    w: Tensor<A>,
                }
            ),
            "`A` and `C` are both bounded by a backend trait",
        ),
    ];
    for (input, expected) in cases {
        let errors = errors_of(input.clone())?;
        assert_eq!(errors.len(), 1, "{errors:#?}");
        assert!(errors[0].starts_with(expected), "{} does not start with {expected}", errors[0]);
        // Without a backend there is no impl to stub: the errors alone.
        let text = derive(input).to_string();
        assert!(!text.contains("impl"), "{text}");
    }
    Ok(())
}
