//! The derive's attributes, turned into typed values: `#[dispatch(...)]` through darling receivers (which gather
//! every error and suggest the key the user probably meant), the role attributes `#[backend(Path)]`,
//! `#[autodiff]` and `#[distributed]` by hand, since a backend path may carry generics that meta syntax rejects.

use darling::util::{Flag, SpannedValue};
use darling::{Error, FromAttributes, FromMeta};
use syn::punctuated::Punctuated;
use syn::{Attribute, Expr, Ident, Meta, Path, Token, Type};

/// The enum-level `#[dispatch(...)]`: names of the generated items and the path to dispatch-core.
#[derive(Default, FromAttributes)]
#[darling(attributes(dispatch))]
pub struct EnumOptions {
    /// The generated backend, `{Enum}Backend` by default.
    pub backend: Option<Ident>,
    /// The generated tensor enum, `{Enum}Tensor` by default.
    pub tensor: Option<Ident>,
    /// The generated enum of local variants, `{Enum}Local` by default (only with `#[distributed]` variants).
    pub local: Option<Ident>,
    /// The generated enum of base devices, `{Enum}Base` by default (only with an `#[autodiff]` variant).
    pub base: Option<Ident>,
    /// The generated tensor enum of the autodiff variant, `{Enum}AutodiffTensor` by default.
    pub autodiff_tensor: Option<Ident>,
    /// Where dispatch-core is, for users who renamed the dependency; `::dispatch_core` by default.
    #[darling(rename = "crate")]
    pub krate: Option<Path>,
    /// Traits declared with `#[dispatch_core::extension]` that the generated backend implements.
    #[darling(default)]
    pub extensions: darling::util::PathList,
    /// A variant's option written on the enum: read only to say where it goes.
    pub no_from: Flag,
}

/// The value of `name = "..."`: a string, which a name written without quotes is told to be.
pub struct DeviceName(String);

impl DeviceName {
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl FromMeta for DeviceName {
    fn from_string(value: &str) -> darling::Result<Self> {
        Ok(DeviceName(value.to_owned()))
    }

    fn from_word() -> darling::Result<Self> {
        Err(Error::custom("`name` needs the device's name as a string, e.g. `name = \"cpu\"`"))
    }

    fn from_expr(expr: &Expr) -> darling::Result<Self> {
        match expr {
            Expr::Lit(literal) => Self::from_value(&literal.lit),
            // The invisible group around an expression passed through a `macro_rules!`.
            Expr::Group(group) => Self::from_expr(&group.expr),
            Expr::Path(path) => {
                let written = spelled(path);
                Err(Error::custom(format!("a device name is a string: write `name = \"{written}\"`")).with_span(expr))
            }
            _ => Err(Error::custom("a device name is a string, e.g. `name = \"cpu\"`").with_span(expr)),
        }
    }
}

/// The variant-level `#[dispatch(...)]`.
#[derive(Default, FromAttributes)]
#[darling(attributes(dispatch))]
pub struct VariantOptions {
    /// The variant's name for `Display` and `FromStr` (the same for every device it holds); the variant's name in
    /// lowercase by default.
    pub name: Option<SpannedValue<DeviceName>>,
    /// No `From<field>` for the enum: for the variants but one that hold one type (which the derive reports when it
    /// sees it, and cannot see through an alias or a re-export), and for a field whose alias hides a projection.
    pub no_from: Flag,
}

/// Which role attribute a variant carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RoleKind {
    Backend,
    Autodiff,
    Distributed,
}

impl RoleKind {
    pub fn attribute(self) -> &'static str {
        match self {
            RoleKind::Backend => "#[backend]",
            RoleKind::Autodiff => "#[autodiff]",
            RoleKind::Distributed => "#[distributed]",
        }
    }

    fn of(attr: &Attribute) -> Option<Self> {
        let path = attr.path();
        if path.is_ident("backend") {
            Some(RoleKind::Backend)
        } else if path.is_ident("autodiff") {
            Some(RoleKind::Autodiff)
        } else if path.is_ident("distributed") {
            Some(RoleKind::Distributed)
        } else {
            None
        }
    }
}

/// One role attribute as written; `backend` holds the path of a well-formed `#[backend(Path)]`, and is `None` for
/// a malformed one (already reported), which still counts as the variant's role so as not to add "no role".
pub struct RoleAttr<'a> {
    pub kind: RoleKind,
    pub original: &'a Attribute,
    pub backend: Option<Type>,
}

/// Every role attribute among `attrs`; malformed ones are reported to `errors`.
pub fn roles<'a>(attrs: &'a [Attribute], errors: &mut darling::error::Accumulator) -> Vec<RoleAttr<'a>> {
    let mut roles = Vec::new();
    for attr in attrs {
        let Some(kind) = RoleKind::of(attr) else { continue };
        let parsed = match kind {
            RoleKind::Backend => backend_path(attr).map(Some),
            RoleKind::Autodiff | RoleKind::Distributed => no_arguments(attr, kind).map(|()| None),
        };
        let backend = errors.handle(parsed).flatten();
        roles.push(RoleAttr { kind, original: attr, backend });
    }
    roles
}

/// The one type path of `#[backend(Path)]`.
fn backend_path(attr: &Attribute) -> darling::Result<Type> {
    let Meta::List(list) = &attr.meta else {
        return Err(Error::custom("`#[backend]` needs the backend's type path, e.g. `#[backend(Candle)]`")
            .with_span(attr.path()));
    };
    let paths = list
        .parse_args_with(Punctuated::<Type, Token![,]>::parse_terminated)
        .map_err(|error| syn::Error::new(error.span(), "expected a backend type path, e.g. `#[backend(Candle)]`"))?;
    let mut paths = paths.into_iter();
    let Some(first) = paths.next() else {
        return Err(Error::custom("`#[backend]` needs the backend's type path, e.g. `#[backend(Candle)]`")
            .with_span(attr.path()));
    };
    if let Some(second) = paths.next() {
        return Err(Error::custom(format!(
            "`#[backend]` takes one backend path, got {}: a variant dispatches to exactly one backend",
            2 + paths.count()
        ))
        .with_span(&second));
    }
    Ok(first)
}

fn no_arguments(attr: &Attribute, kind: RoleKind) -> darling::Result<()> {
    let why = match kind {
        RoleKind::Autodiff => "the backends it wraps are the enum's `#[backend]` variants",
        RoleKind::Backend | RoleKind::Distributed => "its ranks are the enum's local variants",
    };
    match &attr.meta {
        Meta::Path(_) => Ok(()),
        Meta::List(_) | Meta::NameValue(_) => {
            Err(Error::custom(format!("`{}` takes no arguments: {why}", kind.attribute())).with_span(&attr.meta))
        }
    }
}

/// Role attributes written on the enum itself, where they mean nothing.
pub fn misplaced_roles(attrs: &[Attribute], errors: &mut darling::error::Accumulator) {
    for attr in attrs {
        if let Some(kind) = RoleKind::of(attr) {
            errors.push(
                Error::custom(format!("`{}` goes on a variant of the enum, not on the enum itself", kind.attribute()))
                    .with_span(attr.path()),
            );
        }
    }
}

/// The `#[cfg(...)]` attributes of a variant, carried onto everything generated for it.
pub fn cfgs(attrs: &[Attribute]) -> Vec<Attribute> {
    attrs.iter().filter(|attr| attr.path().is_ident("cfg")).cloned().collect()
}

/// A path of an attribute's argument (`ops::Plain`, `my::Backend`) as the user wrote it, without the spaces tokens
/// print with: how a message quotes it. Only for paths: `<A as B>::C` would lose the spaces it needs.
pub fn spelled(tokens: &impl quote::ToTokens) -> String {
    tokens.to_token_stream().to_string().replace(' ', "")
}
