//! Every rule the input must follow, in one place. Each broken rule is reported at the user's own tokens, and
//! checking goes on after it so that the user sees every error at once.

use std::collections::{HashMap, HashSet};

use darling::Error;
use darling::error::Accumulator;
use proc_macro2::Span;
use syn::ext::IdentExt;
use syn::{Fields, Ident, Path, Type};

use crate::ast::{Input, Variant};
use crate::attr::{self, RoleAttr, RoleKind};
use crate::model::{self, Device, ItemNames, Model, Role};
use dispatch_device_name::{QUALIFIER, RANK_SEPARATOR};

/// The model of a valid input. Whatever it finds wrong goes to `errors`; the model is only meant to be expanded
/// when `errors` stays empty.
pub fn check(input: &Input, errors: &mut Accumulator) -> Model {
    let original = input.original;
    check_not_generic(input, errors);
    if input.variants.is_empty() {
        errors.push(
            Error::custom(format!(
                "`{}` has no variants: a device enum needs at least one `#[backend(Path)]` variant",
                original.ident
            ))
            .with_span(&original.ident),
        );
    }
    let devices: Vec<Device> =
        input.variants.iter().filter_map(|variant| device(variant, &original.ident, errors)).collect();
    check_autodiff(&devices, input, errors);
    check_has_backend(&devices, input, errors);
    check_unique_names(&devices, errors);
    check_unambiguous_from(&devices, errors);
    check_extensions_listed_once(&input.options.extensions, errors);
    if input.options.no_from.is_present() {
        errors.push(
            syn::Error::new(
                input.options.no_from.span(),
                "`no_from` goes on a variant, not on the enum: `#[dispatch(no_from)]` on a variant leaves out \
                 `From` of that variant's field",
            )
            .into(),
        );
    }
    Model {
        ident: original.ident.clone(),
        user_ident: original.ident.clone(),
        vis: original.vis.clone(),
        private: model::private_path(input.options.krate.as_ref()),
        items: ItemNames::with_defaults(&original.ident, &input.options),
        devices,
        extensions: input.options.extensions.iter().cloned().collect(),
    }
}

fn check_not_generic(input: &Input, errors: &mut Accumulator) {
    let generics = &input.original.generics;
    if !generics.params.is_empty() || generics.where_clause.is_some() {
        errors.push(
            Error::custom(format!(
                "`#[derive(Dispatch)]` does not support generic enums: `{}` must name its backends and devices \
                 concretely, since each variant's backend is fixed at compile time",
                input.original.ident
            ))
            .with_span(generics),
        );
    }
}

/// The device of one variant, if its role, field and name are all valid.
fn device(variant: &Variant, enum_ident: &syn::Ident, errors: &mut Accumulator) -> Option<Device> {
    let original = variant.original;
    let role = role(variant, errors);
    let field = field(original, errors).and_then(|field| field_outside_the_enum(&field, enum_ident, errors));
    let name = name(variant, errors);
    let (role, field, (name, name_span)) = (role?, field?, name?);
    // An autodiff or distributed variant's `From` names the type its role requires, never the field as written.
    let projected_backend_field = matches!(role, Role::Backend(_)) && is_projection(&field);
    let from_impl = !variant.options.no_from.is_present() && !projected_backend_field;
    Some(Device { ident: original.ident.clone(), cfgs: variant.cfgs.clone(), name, name_span, field, role, from_impl })
}

/// A field written as a projection, `<T as Trait>::Assoc`, gets no `From<field>`: rustc's coherence does not
/// normalise a projection through another crate's impl (rust-lang/rust#85898), so it cannot rule out that the field
/// is the enum itself, and `impl From<<Candle as Backend>::Device> for Device` conflicts with core's `impl<T> From<T>
/// for T` (E0119). Routing `From` through a helper trait (`impl<T: IntoVariant<Device>> From<T> for Device`) fails
/// the same way, since the helper's impl for the projection might be for the enum too, and a proc macro cannot name
/// the type the projection normalises to. So the rule, documented on the derive: the same device type written by
/// name (`CandleDevice`, an alias of it, a path through modules) gets `From`; a projection gets every other item.
fn is_projection(field: &Type) -> bool {
    match field {
        Type::Path(path) => path.qself.is_some(),
        Type::Group(group) => is_projection(&group.elem),
        Type::Paren(paren) => is_projection(&paren.elem),
        _ => false,
    }
}

fn role(variant: &Variant, errors: &mut Accumulator) -> Option<Role> {
    let ident = &variant.original.ident;
    let mut roles = variant.roles.iter();
    let Some(first) = roles.next() else {
        errors.push(
            Error::custom(format!(
                "variant `{ident}` has no role: mark it `#[backend(Path)]`, `#[autodiff]` or `#[distributed]`"
            ))
            .with_span(ident),
        );
        return None;
    };
    let mut valid = true;
    for extra in roles {
        valid = false;
        let message = if extra.kind == first.kind {
            format!("variant `{ident}` has two `{}` attributes: a variant has exactly one role", extra.kind.attribute())
        } else {
            format!(
                "variant `{ident}` has two roles, `{}` and `{}`: a variant has exactly one role",
                first.kind.attribute(),
                extra.kind.attribute()
            )
        };
        errors.push(Error::custom(message).with_span(extra.original.path()));
    }
    valid.then(|| role_of(first))?
}

fn role_of(attr: &RoleAttr) -> Option<Role> {
    match attr.kind {
        RoleKind::Backend => attr.backend.clone().map(|backend| Role::Backend(Box::new(backend))),
        RoleKind::Autodiff => Some(Role::Autodiff),
        RoleKind::Distributed => Some(Role::Distributed),
    }
}

/// The one unnamed field every variant holds its device in.
fn field(variant: &syn::Variant, errors: &mut Accumulator) -> Option<Type> {
    let ident = &variant.ident;
    let problem = match &variant.fields {
        Fields::Unnamed(fields) if fields.unnamed.len() == 1 => {
            return fields.unnamed.first().map(|field| field.ty.clone());
        }
        Fields::Unnamed(fields) => format!(
            "variant `{ident}` has {} fields: a variant holds exactly one device, e.g. `{ident}(<Candle as \
             Backend>::Device)`",
            fields.unnamed.len()
        ),
        Fields::Named(_) => format!(
            "variant `{ident}` has named fields: write it as a tuple variant holding its device, e.g. \
             `{ident}(<Candle as Backend>::Device)`"
        ),
        Fields::Unit => {
            format!("variant `{ident}` holds no device: give it one field, e.g. `{ident}(<Candle as Backend>::Device)`")
        }
    };
    errors.push(Error::custom(problem).with_span(ident));
    None
}

/// The field's type with `Self` spelled as the enum, so that it means the same in the items generated outside the
/// enum. One identifier becoming another leaves a type a type, so this fails for no enum rustc accepts; were it to,
/// the variant is reported here, since a variant dropped silently would be missing from every generated `match`.
pub(crate) fn field_outside_the_enum(field: &Type, enum_ident: &Ident, errors: &mut Accumulator) -> Option<Type> {
    match syn::parse2(model::replace_self(quote::quote!(#field), enum_ident)) {
        Ok(field) => Some(field),
        Err(error) => {
            errors.push(
                Error::custom(format!(
                    "this field type is no type once `Self` is spelled `{enum_ident}` ({error}), and generated items \
                     outside the enum need it spelled so: write the type without `Self`"
                ))
                .with_span(field),
            );
            None
        }
    }
}

/// The device's name: `#[dispatch(name = "...")]`, or the variant's name in lowercase.
fn name(variant: &Variant, errors: &mut Accumulator) -> Option<(String, Span)> {
    let Some(chosen) = &variant.options.name else {
        let ident = &variant.original.ident;
        return Some((ident.unraw().to_string().to_lowercase(), ident.span()));
    };
    let name = chosen.as_str();
    let problem = if name.is_empty() {
        Some("a device name cannot be empty".to_owned())
    } else if name.contains(QUALIFIER) {
        Some(format!(
            "device name `{name}` cannot contain `{QUALIFIER}`, which separates an autodiff device from its base \
             (`autodiff:candle`) and a distributed device from its ranks"
        ))
    } else if name.contains(RANK_SEPARATOR) {
        Some(format!(
            "device name `{name}` cannot contain `{RANK_SEPARATOR}`, which separates the ranks of a distributed \
             device (`cluster:candle,ndarray`)"
        ))
    } else if name.chars().any(char::is_whitespace) {
        Some(format!("device name `{name}` cannot contain whitespace"))
    } else {
        None
    };
    match problem {
        Some(problem) => {
            errors.push(syn::Error::new(chosen.span(), problem).into());
            None
        }
        None => Some((name.to_owned(), chosen.span())),
    }
}

/// At most one `#[autodiff]` variant, and it must not wrap a backend that is autodiff already.
fn check_autodiff(devices: &[Device], input: &Input, errors: &mut Accumulator) {
    // Variants, not attributes: a variant marked twice is reported once, by `role`. A variant's role is its first
    // role attribute, as in `role`, so one that also carries another role is not counted twice either.
    let autodiff_variants = input
        .variants
        .iter()
        .filter_map(|variant| variant.roles.first())
        .filter(|role| role.kind == RoleKind::Autodiff);
    for extra in autodiff_variants.skip(1) {
        errors.push(
            Error::custom(
                "only one `#[autodiff]` variant is allowed: it already wraps every `#[backend]` variant of the enum",
            )
            .with_span(extra.original.path()),
        );
    }
    if !devices.iter().any(|device| matches!(device.role, Role::Autodiff)) {
        return;
    }
    for device in devices {
        let Role::Backend(backend) = &device.role else { continue };
        if names_autodiff_backend(backend) {
            errors.push(
                Error::custom(format!(
                    "`{}` is an autodiff backend already, and the `#[autodiff]` variant would wrap it again: an \
                     autodiff backend inside an autodiff backend is not allowed; name its base backend here instead",
                    attr::spelled(backend)
                ))
                .with_span(backend),
            );
        }
    }
}

/// Each extension is listed once: the backend implements it once. Two spellings of one trait (a path and a
/// re-export) are beyond what a derive can see; rustc reports those as conflicting impls.
fn check_extensions_listed_once(extensions: &[Path], errors: &mut Accumulator) {
    let mut listed = HashSet::new();
    for extension in extensions {
        let spelled = attr::spelled(extension);
        if !listed.insert(spelled.clone()) {
            errors.push(
                Error::custom(format!(
                    "extension `{spelled}` is listed twice in `extensions(...)`: the backend implements it once"
                ))
                .with_span(extension),
            );
        }
    }
}

/// `Autodiff<..>` or `some::path::Autodiff<..>`: caught here for a clear message; the `BaseBackend` bound of the
/// expansion catches aliases.
fn names_autodiff_backend(backend: &Type) -> bool {
    match backend {
        Type::Path(path) => {
            path.qself.is_none() && path.path.segments.last().is_some_and(|last| last.ident == "Autodiff")
        }
        _ => false,
    }
}

/// `#[autodiff]` wraps the `#[backend]` variants and `#[distributed]` ranks run on the local ones: both need one.
fn check_has_backend(devices: &[Device], input: &Input, errors: &mut Accumulator) {
    let has_backend =
        input.variants.iter().flat_map(|variant| &variant.roles).any(|role| role.kind == RoleKind::Backend);
    if has_backend || input.variants.is_empty() {
        return;
    }
    for device in devices {
        let message = match device.role {
            Role::Autodiff => "`#[autodiff]` needs a `#[backend]` variant to wrap, and the enum has none",
            Role::Distributed => "`#[distributed]` needs a `#[backend]` variant for its ranks, and the enum has none",
            Role::Backend(_) => continue,
        };
        errors.push(Error::custom(message).with_span(&device.ident));
    }
}

/// No two variants may share a name: `FromStr` finds the variant by its name, so the second would be unreachable,
/// and `Display` could not tell the two apart. With the device after it (`candle:cuda:1`), the name makes
/// `Display` then `FromStr` give back an equal device.
fn check_unique_names(devices: &[Device], errors: &mut Accumulator) {
    let mut first_by_name: HashMap<&str, &Device> = HashMap::new();
    for device in devices {
        let Some(first) = first_by_name.get(device.name.as_str()) else {
            first_by_name.insert(&device.name, device);
            continue;
        };
        for (at, other) in [(*first, device), (device, *first)] {
            let message = format!(
                "variants `{}` and `{}` are both named `{}`: `Display` and `FromStr` need unique names; rename one \
                 with `#[dispatch(name = \"...\")]`",
                at.ident, other.ident, device.name
            );
            errors.push(syn::Error::new(at.name_span, message).into());
        }
    }
}

/// `From<field>` builds one variant, so two variants that would both get it for one type are an error at the later
/// field, which names the fix: keep `From` on one of them, `#[dispatch(no_from)]` on the other. As far as syntax
/// tells, two fields are one type when they are spelled alike, or when their variants name one backend path (both
/// then hold its device type). Paths that differ (`a::Dev`, `b::Dev`) are taken to be different types and both get
/// `From`; a re-export or alias making them one is beyond what a derive can see, and `no_from` is documented for it.
fn check_unambiguous_from(devices: &[Device], errors: &mut Accumulator) {
    let mut first_by_key: HashMap<String, &Device> = HashMap::new();
    for device in devices.iter().filter(|device| device.from_impl) {
        let field = &device.field;
        // An autodiff or distributed variant's `From` is for the type its role requires (`DistributedDevice<Self>`),
        // whatever its field says, so they conflict by role; only one `#[autodiff]` variant is allowed anyway.
        let keys = match &device.role {
            Role::Backend(backend) => vec![
                (format!("backend field {}", quote::quote!(#field)), Shared::Field),
                (format!("backend {}", quote::quote!(#backend)), Shared::Backend(backend)),
            ],
            Role::Distributed => vec![("distributed".to_owned(), Shared::Role)],
            Role::Autodiff => continue,
        };
        // One error per variant, for the first key it shares.
        let shared = keys.iter().find_map(|(key, shared)| Some((*first_by_key.get(key)?, shared)));
        if let Some((first, shared)) = shared {
            let other = &first.ident;
            let (why, source) = match shared {
                Shared::Field => (format!("holds `{}`, as variant `{other}` does", spelled(field)), spelled(field)),
                Shared::Backend(backend) => {
                    (format!("runs on backend `{}`, as variant `{other}` does", spelled(backend)), spelled(field))
                }
                Shared::Role => {
                    (format!("is `#[distributed]`, as variant `{other}` is"), "DistributedDevice<Self>".to_owned())
                }
            };
            let message = format!(
                "variant `{}` {why}, so `From<{source}>` could build either: keep `From` on one of them and mark the \
                 other `#[dispatch(no_from)]`",
                device.ident
            );
            errors.push(Error::custom(message).with_span(&type_name(field)));
            continue;
        }
        for (key, _) in keys {
            first_by_key.entry(key).or_insert(device);
        }
    }
}

/// Where an error about a type points: its name, the last segment of its path (`CandleDevice` in
/// `dispatch_core::backends::CandleDevice`), since an error reaches only one token on stable; else its first token.
fn type_name(ty: &Type) -> proc_macro2::Span {
    match ty {
        Type::Path(path) => match path.path.segments.last() {
            Some(last) => last.ident.span(),
            None => syn::spanned::Spanned::span(ty),
        },
        Type::Group(group) => type_name(&group.elem),
        _ => syn::spanned::Spanned::span(ty),
    }
}

/// What makes two variants' `From` impls one.
enum Shared<'a> {
    Field,
    Backend(&'a Type),
    Role,
}

/// A type as the user wrote it: tokens print with a space on each side, kept only between two words
/// (`<Candle as Backend>::Device`).
fn spelled(ty: &Type) -> String {
    let printed = quote::quote!(#ty).to_string();
    let words: Vec<&str> = printed.split(' ').collect();
    let is_word = |token: &str| token.chars().next().is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '\'');
    let mut spelled = String::new();
    for (index, token) in words.iter().enumerate() {
        if index > 0 && is_word(words[index - 1]) && is_word(token) {
            spelled.push(' ');
        }
        spelled.push_str(token);
    }
    spelled
}
