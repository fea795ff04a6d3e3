//! Which `From` impls an expansion has: every field written by name, none for a projection, and an error where two
//! variants would share one.

use proc_macro2::TokenStream;
use quote::quote;

use super::{Outcome, errors_of, expansion};

/// The `From` impls of an expansion, as `field -> variant` in the order generated.
fn from_impls(tokens: TokenStream) -> Result<Vec<String>, String> {
    let file: syn::File = syn::parse2(tokens).map_err(|error| error.to_string())?;
    let mut found = Vec::new();
    let mut items: Vec<&syn::Item> = file.items.iter().collect();
    while let Some(item) = items.pop() {
        match item {
            syn::Item::Const(constant) => {
                if let syn::Expr::Block(block) = &*constant.expr {
                    items.extend(block.block.stmts.iter().filter_map(|stmt| match stmt {
                        syn::Stmt::Item(item) => Some(item),
                        _ => None,
                    }));
                }
            }
            syn::Item::Impl(item) => {
                let Some((path, _)) = &item.trait_ else { continue };
                let last = path.segments.last().ok_or("an empty trait path")?;
                if last.ident != "From" {
                    continue;
                }
                let syn::PathArguments::AngleBracketed(arguments) = &last.arguments else { continue };
                let field = &arguments.args;
                let self_ty = &item.self_ty;
                found.push(format!("{} -> {}", quote!(#field), quote!(#self_ty)).replace(' ', ""));
            }
            _ => {}
        }
    }
    found.sort();
    Ok(found)
}

#[test]
fn from_is_generated_for_every_field_written_by_name_and_for_none_written_as_a_projection() -> Outcome {
    let tokens = expansion(quote! {
        pub enum Device {
            #[backend(Candle)]
            Plain(CandleDevice),
            #[backend(backends::NdArray)]
            Path(backends::NdArrayDevice),
            #[backend(Host)]
            Alias(HostAlias),
            #[backend(Other)]
            Projected(<Other as dispatch_core::Backend>::Device),
            #[backend(Ignored)]
            #[dispatch(no_from)]
            OptedOut(IgnoredDevice),
            #[autodiff]
            Autodiff(AutodiffDevice<Self>),
        }
    })?;
    assert_eq!(
        from_impls(tokens)?,
        [
            "::dispatch_core::__private01::AutodiffDevice<Device>->Device",
            "CandleDevice->Device",
            "HostAlias->Device",
            "backends::NdArrayDevice->Device",
        ]
    );
    Ok(())
}

#[test]
fn fields_sharing_a_last_path_segment_both_get_from() -> Outcome {
    let tokens = expansion(quote! {
        pub enum Device {
            #[backend(a::Backend)]
            A(a::Dev),
            #[backend(b::Backend)]
            B(b::Dev),
            #[distributed]
            Cluster(DistributedDevice<Self>),
        }
    })?;
    let found = from_impls(tokens)?;
    for conversion in ["a::Dev->Device", "b::Dev->Device", "a::Dev->DeviceLocal", "b::Dev->DeviceLocal"] {
        assert!(found.iter().any(|from| from == conversion), "{conversion} missing from {found:#?}");
    }
    assert!(found.iter().any(|from| from == "DeviceLocal->Device"), "{found:#?}");
    Ok(())
}

#[test]
fn an_autodiff_or_distributed_variant_converts_from_the_type_its_role_requires() -> Outcome {
    // A field of the wrong type is its role's error at the field (from rustc, in the impl's body), never also a
    // second `From<CandleDevice>` conflicting with the backend variant's.
    let tokens = expansion(quote! {
        pub enum Device {
            #[backend(Candle)]
            Cpu(CandleDevice),
            #[autodiff]
            Autodiff(CandleDevice),
            #[distributed]
            Cluster(Ranks),
        }
    })?;
    let private = "::dispatch_core::__private01::";
    assert_eq!(
        from_impls(tokens)?,
        [
            format!("{private}AutodiffDevice<Device>->Device"),
            format!("{private}AutodiffDevice<DeviceLocal>->DeviceLocal"),
            format!("{private}DistributedDevice<Device>->Device"),
            "CandleDevice->Device".to_owned(),
            "CandleDevice->DeviceLocal".to_owned(),
            "DeviceLocal->Device".to_owned(),
        ]
    );
    let errors = errors_of(quote! {
        pub enum Device {
            #[backend(Candle)]
            Cpu(CandleDevice),
            #[distributed]
            Cluster(DistributedDevice<Self>),
            #[distributed]
            Mpi(Ranks),
        }
    })?;
    assert_eq!(errors.len(), 1, "{errors:#?}");
    assert!(
        errors[0].starts_with(
            "variant `Mpi` is `#[distributed]`, as variant `Cluster` is, so `From<DistributedDevice<Self>>`"
        ),
        "{}",
        errors[0]
    );
    Ok(())
}

#[test]
fn two_variants_that_would_share_a_from_are_an_error_at_the_second_naming_the_fix() -> Outcome {
    let errors = errors_of(quote! {
        pub enum Device {
            #[backend(Candle)]
            Cpu(CandleDevice),
            #[backend(Other)]
            Gpu(CandleDevice),
            #[backend(NdArray)]
            Nd(NdArrayDevice),
            #[backend(NdArray)]
            Nd2(backends::NdArrayDevice),
            #[backend(NdArray)]
            #[dispatch(no_from)]
            Nd3(NdArrayDevice),
            #[backend(NdArray)]
            Projected(<NdArray as Backend>::Device),
        }
    })?;
    assert_eq!(errors.len(), 2, "{errors:#?}");
    assert_eq!(
        errors[0],
        "variant `Gpu` holds `CandleDevice`, as variant `Cpu` does, so `From<CandleDevice>` could build either: keep \
         `From` on one of them and mark the other `#[dispatch(no_from)]`"
    );
    assert_eq!(
        errors[1],
        "variant `Nd2` runs on backend `NdArray`, as variant `Nd` does, so `From<backends::NdArrayDevice>` could build \
         either: keep `From` on one of them and mark the other `#[dispatch(no_from)]`"
    );
    Ok(())
}
