//! Unit tests of the pipeline on token streams: parsing, validation and expansion, each on its own.

mod conversions;

use proc_macro2::{TokenStream, TokenTree};
use quote::quote;
use syn::DeriveInput;

use crate::ast::Input;
use crate::attr::RoleKind;
use crate::{derive, expand, valid};

type Outcome = Result<(), String>;

fn parse(tokens: TokenStream) -> Result<DeriveInput, String> {
    syn::parse2(tokens).map_err(|error| error.to_string())
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

fn expansion(tokens: TokenStream) -> Result<TokenStream, String> {
    let input = parse(tokens)?;
    let mut errors = darling::Error::accumulator();
    let parsed = Input::from_syn(&input, &mut errors).ok_or("not an enum")?;
    let model = valid::check(&parsed, &mut errors);
    errors.finish().map_err(|error| error.to_string())?;
    Ok(expand::expand(&model))
}

fn sample() -> TokenStream {
    quote! {
        pub enum Device {
            #[backend(Candle)]
            Cpu(<Candle as Backend>::Device),
            #[cfg(any(feature = "ndarray", test))]
            #[backend(backends::NdArray)]
            #[dispatch(name = "nd")]
            NdArray(NdArrayDevice),
            #[autodiff]
            Autodiff(AutodiffDevice<Self>),
            #[distributed]
            Cluster(DistributedDevice<Self>),
        }
    }
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
fn parsing_reads_roles_paths_names_and_cfgs() -> Outcome {
    let input = parse(sample())?;
    let mut errors = darling::Error::accumulator();
    let parsed = Input::from_syn(&input, &mut errors).ok_or("not an enum")?;
    errors.finish().map_err(|error| error.to_string())?;
    let kinds: Vec<Vec<RoleKind>> =
        parsed.variants.iter().map(|variant| variant.roles.iter().map(|role| role.kind).collect()).collect();
    assert_eq!(
        kinds,
        [vec![RoleKind::Backend], vec![RoleKind::Backend], vec![RoleKind::Autodiff], vec![RoleKind::Distributed]]
    );
    let backend = parsed.variants[1].roles[0].backend.as_ref().ok_or("no backend path")?;
    assert_eq!(quote!(#backend).to_string(), "backends :: NdArray");
    assert_eq!(parsed.variants[1].cfgs.len(), 1);
    assert_eq!(parsed.variants[1].options.name.as_ref().map(|name| name.as_str()), Some("nd"));
    Ok(())
}

#[test]
fn validation_names_devices_and_spells_self_as_the_enum() -> Outcome {
    let input = parse(sample())?;
    let mut errors = darling::Error::accumulator();
    let parsed = Input::from_syn(&input, &mut errors).ok_or("not an enum")?;
    let model = valid::check(&parsed, &mut errors);
    errors.finish().map_err(|error| error.to_string())?;
    let names: Vec<&str> = model.devices.iter().map(|device| device.name.as_str()).collect();
    assert_eq!(names, ["cpu", "nd", "autodiff", "cluster"]);
    let field = &model.devices[3].field;
    assert_eq!(quote!(#field).to_string(), "DistributedDevice < Device >");
    assert_eq!(model.items.backend.to_string(), "DeviceBackend");
    assert_eq!(model.items.autodiff_tensor.to_string(), "DeviceAutodiffTensor");
    Ok(())
}

#[test]
fn validation_reports_every_error_at_once() -> Outcome {
    let errors = errors_of(quote! {
        #[dispatch(locl = Local)]
        enum Device {
            #[backend(Candle)] #[dispatch(name = "a:b")] Cpu(CandleDevice),
            NdArray(NdArrayDevice),
            #[backend(NdArray)] Unit,
            #[autodiff] #[distributed] Both(AutodiffDevice<Self>),
        }
    })?;
    assert_eq!(errors.len(), 5, "{errors:#?}");
    assert!(errors[0].starts_with("Unknown field: `locl`. Did you mean `local`?"), "{}", errors[0]);
    assert!(errors[1].starts_with("device name `a:b` cannot contain `:`"), "{}", errors[1]);
    assert!(errors[2].starts_with("variant `NdArray` has no role"), "{}", errors[2]);
    assert!(errors[3].starts_with("variant `Unit` holds no device"), "{}", errors[3]);
    assert!(errors[4].starts_with("variant `Both` has two roles, `#[autodiff]` and `#[distributed]`"), "{}", errors[4]);
    Ok(())
}

#[test]
fn validation_rejects_what_cannot_be_dispatched() -> Outcome {
    let cases = [
        (
            quote!(
                struct Device;
            ),
            "`#[derive(Dispatch)]` works on enums only, not on a struct",
        ),
        (
            quote!(
                enum Device {}
            ),
            "`Device` has no variants",
        ),
        (
            quote!(
                enum Device<T> {
                    #[backend(Candle)]
                    Cpu(T),
                }
            ),
            "`#[derive(Dispatch)]` does not support generic enums",
        ),
        (
            quote!(
                enum Device {
                    #[backend(A, B)]
                    Cpu(D),
                }
            ),
            "`#[backend]` takes one backend path, got 2",
        ),
        (
            quote!(
                enum Device {
                    #[backend]
                    Cpu(D),
                }
            ),
            "`#[backend]` needs the backend's type path",
        ),
        (
            quote!(
                enum Device {
                    #[autodiff]
                    Ad(AutodiffDevice<Self>),
                }
            ),
            "`#[autodiff]` needs a `#[backend]` variant",
        ),
        (
            quote!(
                enum Device {
                    #[backend(A)]
                    #[dispatch(name = "")]
                    Cpu(D),
                }
            ),
            "a device name cannot be empty",
        ),
        (
            quote!(
                enum Device {
                    #[backend(Autodiff<A>)]
                    Cpu(D),
                    #[autodiff]
                    Ad(AutodiffDevice<Self>),
                }
            ),
            "`Autodiff<A>` is an autodiff backend already",
        ),
    ];
    for (input, expected) in cases {
        let errors = errors_of(input)?;
        assert_eq!(errors.len(), 1, "{errors:#?}");
        assert!(errors[0].starts_with(expected), "{} does not start with {expected}", errors[0]);
    }
    let duplicates = errors_of(quote!(
        enum Device {
            #[backend(A)]
            Cpu(D),
            #[backend(B)]
            #[dispatch(name = "cpu")]
            Gpu(E),
        }
    ))?;
    assert_eq!(duplicates.len(), 2, "one error at each of the two names: {duplicates:#?}");
    assert!(duplicates.iter().all(|error| error.starts_with("variants `")), "{duplicates:#?}");
    Ok(())
}

#[test]
fn a_field_that_cannot_be_spelled_outside_the_enum_is_reported_not_dropped() {
    // No enum rustc accepts makes the rewrite fail (one identifier becomes another), so the test crafts one: with
    // `Self` spelled `_`, `Self::Device` becomes `_::Device`, which is no type. A variant dropped without an error
    // would leave its arms out of every generated `match`; it must be an error at the field instead.
    let field: syn::Type = syn::parse_quote!(Self::Device);
    let unnameable = proc_macro2::Ident::new("_", proc_macro2::Span::call_site());
    let mut errors = darling::Error::accumulator();
    let rewritten = valid::field_outside_the_enum(&field, &unnameable, &mut errors);
    assert!(rewritten.is_none());
    let errors: Vec<String> = errors.into_inner().into_iter().flatten().map(|error| error.to_string()).collect();
    assert_eq!(errors.len(), 1, "{errors:#?}");
    assert!(errors[0].starts_with("this field type is no type once `Self` is spelled `_`"), "{}", errors[0]);

    let mut errors = darling::Error::accumulator();
    let rewritten = valid::field_outside_the_enum(&field, &quote::format_ident!("Device"), &mut errors);
    assert!(errors.finish().is_ok());
    assert_eq!(rewritten.map(|field| quote!(#field).to_string()), Some("Device :: Device".to_owned()));
}

#[test]
fn expansion_routes_every_kind_of_operand_with_one_match_arm_per_backend() -> Outcome {
    let tokens = expansion(sample())?;
    syn::parse2::<syn::File>(tokens.clone()).map_err(|error| error.to_string())?;
    let text = tokens.to_string();
    assert!(text.contains("impl :: dispatch_core :: __private01 :: Routes for DeviceBackend"));
    // The ops come from dispatch-core's op list, expanded there.
    assert!(text.contains(":: dispatch_core :: __private01 :: __derived_backend ! { DeviceBackend"), "{text}");
    assert!(text.contains(":: dispatch_core :: __private01 :: __derived_autodiff_backend ! { DeviceBackend {"));
    assert!(text.contains("pub enum DeviceLocal"));
    assert!(text.contains("pub enum DeviceBase"));
    // Arms: Cpu, NdArray, Autodiff over Cpu, Autodiff over NdArray.
    let route_float =
        text.split("fn route_float").nth(1).and_then(|rest| rest.split("fn ").next()).ok_or("no fn route_float")?;
    assert_eq!(route_float.matches("=>").count(), 4, "{route_float}");
    assert!(route_float.contains("visit :: < __DispatchArmAutodiffCpu >"), "{route_float}");
    assert!(text.contains("type Backend = < Candle as :: dispatch_core :: __private01 :: AutodiffPath > :: Backend"));
    // The cfg of `NdArray` guards its own arm and its autodiff arm.
    assert_eq!(route_float.matches("cfg (any (feature = \"ndarray\" , test))").count(), 2, "{route_float}");
    Ok(())
}

#[test]
fn expansion_names_autodiff_and_distributed_devices() -> Outcome {
    let text = expansion(sample())?.to_string();
    for name in ["\"cpu\"", "\"nd\"", "\"autodiff:cpu\"", "\"autodiff:nd\"", "\"cluster\""] {
        assert!(text.contains(name), "{name} missing");
    }
    // What follows a name is read and written through the runtime's one definition of the grammar.
    assert!(text.contains("device_name :: qualified (input , \"cluster\")"), "{text}");
    assert!(text.contains("device_name :: write_qualified (f , \"cluster\""), "{text}");
    Ok(())
}

#[test]
fn expansion_grows_linearly_with_the_variants() -> Outcome {
    let size = |count: usize| -> Result<usize, String> {
        let variants = (0..count).map(|index| {
            let ident = quote::format_ident!("V{}", index);
            let backend = quote::format_ident!("B{}", index);
            quote!(#[backend(#backend)] #ident(<#backend as Backend>::Device),)
        });
        let tokens = expansion(quote!(enum Device { #(#variants)* #[autodiff] Ad(AutodiffDevice<Self>), }))?;
        let mut all = Vec::new();
        idents(tokens, &mut all);
        Ok(all.len())
    };
    let (s4, s8, s16) = (size(4)?, size(8)?, size(16)?);
    let (step, next_step) = (s8 - s4, s16 - s8);
    // Linear: doubling the added variants doubles the added code (exactly, up to the shared prologue).
    assert_eq!(next_step, 2 * step, "{s4} {s8} {s16}");
    Ok(())
}

#[test]
fn errors_come_with_stubs_so_the_enum_still_type_checks() {
    let text = derive::derive(quote! {
        pub enum Device { #[backend(Candle)] #[dispatch(name = "")] Cpu(CandleDevice) }
    })
    .to_string();
    assert!(text.contains("compile_error"), "{text}");
    assert!(text.contains("a device name cannot be empty"), "{text}");
    assert!(text.contains("pub type DeviceBackend = :: dispatch_core :: __private01 :: FallbackBackend < Device >"));
    assert!(text.contains("impl :: dispatch_core :: __private01 :: Dispatch for Device"), "{text}");
}

#[test]
fn a_struct_gets_its_error_and_nothing_else() {
    let text = derive::derive(quote!(
        struct Device {
            cpu: u8,
        }
    ))
    .to_string();
    assert!(text.starts_with(":: core :: compile_error !"), "{text}");
    assert_eq!(text.matches("compile_error").count(), 1, "{text}");
}

#[test]
fn tokens_that_are_not_an_item_are_a_syntax_error() {
    let text = derive::derive(quote!(enum)).to_string();
    assert!(text.contains("compile_error"), "{text}");
}

#[test]
fn the_backend_of_an_enum_with_distributed_variants_is_named_after_the_users_enum() -> Outcome {
    let text = expansion(sample())?.to_string();
    assert!(text.contains("name : \"device\""), "{text}");
    assert!(!text.contains("\"devicelocal\""), "{text}");
    let text = expansion(quote!(
        enum r#Gpus {
            #[backend(Candle)]
            Cpu(CandleDevice),
        }
    ))?
    .to_string();
    assert!(text.contains("name : \"gpus\""), "{text}");
    Ok(())
}
