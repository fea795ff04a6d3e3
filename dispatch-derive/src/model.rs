//! The validated model the expansion works from: every variant has exactly one role and one field, names are
//! valid and unique, so the expansion needs no checks of its own. Only `valid.rs` builds a user's model.

use proc_macro2::{Group, Span, TokenStream, TokenTree};
use quote::{format_ident, quote, quote_spanned};
use syn::{Attribute, Ident, Path, Type, Visibility};

pub struct Model {
    /// The enum the impls are for: the user's, or the generated local enum.
    pub ident: Ident,
    /// The user's enum, which names the generated backend (`Backend::name`) whichever enum `ident` is.
    pub user_ident: Ident,
    pub vis: Visibility,
    /// `<crate>::__private01`, the one path generated code reaches dispatch-core through.
    pub private: TokenStream,
    pub items: ItemNames,
    pub devices: Vec<Device>,
    /// The extensions the backend implements, as the user named them.
    pub extensions: Vec<Path>,
}

/// The names of the generated items, shared by the user's enum and its local enum.
#[derive(Clone)]
pub struct ItemNames {
    pub backend: Ident,
    pub tensor: Ident,
    pub local: Ident,
    pub base: Ident,
    pub autodiff_tensor: Ident,
    /// `{Enum}IntTensor` and its autodiff enum, `{Enum}AutodiffIntTensor`.
    pub int_tensor: Ident,
    pub autodiff_int_tensor: Ident,
    /// `{Enum}BoolTensor` and its autodiff enum, `{Enum}AutodiffBoolTensor`.
    pub bool_tensor: Ident,
    pub autodiff_bool_tensor: Ident,
}

/// The kinds of tensor a backend has: each gets a tensor enum (and an autodiff one) and an accessor in every arm.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum TensorKind {
    Float,
    Int,
    Bool,
}

impl TensorKind {
    pub const ALL: [TensorKind; 3] = [TensorKind::Float, TensorKind::Int, TensorKind::Bool];

    /// The tensor enum of this kind and its autodiff enum.
    pub fn enums(self, items: &ItemNames) -> (&Ident, &Ident) {
        match self {
            TensorKind::Float => (&items.tensor, &items.autodiff_tensor),
            TensorKind::Int => (&items.int_tensor, &items.autodiff_int_tensor),
            TensorKind::Bool => (&items.bool_tensor, &items.autodiff_bool_tensor),
        }
    }

    /// The word for this kind in the names of dispatch-core's items: `float` as in `Arm::float`, `route_float`.
    pub fn word(self) -> &'static str {
        match self {
            TensorKind::Float => "float",
            TensorKind::Int => "int",
            TensorKind::Bool => "bool",
        }
    }

    /// The associated type of a path trait (`BackendPath::Tensor`) naming this kind's tensor, and its `Clone` and
    /// `Debug` helpers there.
    pub fn path_items(self) -> (&'static str, &'static str, &'static str) {
        match self {
            TensorKind::Float => ("Tensor", "clone_tensor", "debug_tensor"),
            TensorKind::Int => ("Int", "clone_int", "debug_int"),
            TensorKind::Bool => ("Bool", "clone_bool", "debug_bool"),
        }
    }

    /// `VisitFloat` and so on: the visitor trait of ops routed by a tensor of this kind.
    pub fn visit_trait(self) -> &'static str {
        match self {
            TensorKind::Float => "VisitFloat",
            TensorKind::Int => "VisitInt",
            TensorKind::Bool => "VisitBool",
        }
    }
}

#[derive(Clone)]
pub struct Device {
    pub ident: Ident,
    /// Carried onto every arm, variant and item generated for this device.
    pub cfgs: Vec<Attribute>,
    /// The variant's name: `Display` writes it alone for the field type's default device and as `name:<device>`
    /// for any other, and `FromStr` reads both.
    pub name: String,
    /// Where the name comes from: the `#[dispatch(name = "...")]` literal, or the variant's name.
    pub name_span: Span,
    /// The field's type, with `Self` spelled as the user's enum so it means the same outside the enum.
    pub field: Type,
    pub role: Role,
    /// Whether to generate `From<field>` for the enum: off with `#[dispatch(no_from)]` and for a field written as a
    /// projection (see `valid::from_impl`).
    pub from_impl: bool,
}

#[derive(Clone)]
pub enum Role {
    /// Dispatches to this backend type.
    Backend(Box<Type>),
    /// Dispatches to `Autodiff<P>` for every backend `P` of the enum.
    Autodiff,
    /// A group of ranks; routed before any single-backend op.
    Distributed,
}

impl ItemNames {
    /// `{Enum}Backend` and so on, each overridable.
    pub fn with_defaults(enum_ident: &Ident, options: &crate::attr::EnumOptions) -> Self {
        let pick = |chosen: &Option<Ident>, suffix: &str| match chosen {
            Some(ident) => ident.clone(),
            None => format_ident!("{}{}", enum_ident, suffix),
        };
        ItemNames {
            backend: pick(&options.backend, "Backend"),
            tensor: pick(&options.tensor, "Tensor"),
            local: pick(&options.local, "Local"),
            base: pick(&options.base, "Base"),
            autodiff_tensor: pick(&options.autodiff_tensor, "AutodiffTensor"),
            int_tensor: format_ident!("{}IntTensor", enum_ident),
            autodiff_int_tensor: format_ident!("{}AutodiffIntTensor", enum_ident),
            bool_tensor: format_ident!("{}BoolTensor", enum_ident),
            autodiff_bool_tensor: format_ident!("{}AutodiffBoolTensor", enum_ident),
        }
    }
}

/// `<crate>::__private01`, `::dispatch_core` unless `#[dispatch(crate = ...)]` says otherwise.
pub fn private_path(krate: Option<&Path>) -> TokenStream {
    match krate {
        Some(krate) => quote!(#krate::__private01),
        None => quote!(::dispatch_core::__private01),
    }
}

impl Model {
    pub fn backends(&self) -> impl Iterator<Item = (&Device, &Type)> {
        self.devices.iter().filter_map(|device| match &device.role {
            Role::Backend(backend) => Some((device, &**backend)),
            Role::Autodiff | Role::Distributed => None,
        })
    }

    pub fn autodiff(&self) -> Option<&Device> {
        self.devices.iter().find(|device| matches!(device.role, Role::Autodiff))
    }

    pub fn has_distributed(&self) -> bool {
        self.devices.iter().any(|device| matches!(device.role, Role::Distributed))
    }

    /// The local enum of an enum with `#[distributed]` variants: every other variant, under the local name. Its
    /// autodiff variant holds `AutodiffDevice<Self>` of the local enum, so it is a device enum in its own right.
    pub fn local_model(&self) -> Model {
        let ident = self.items.local.clone();
        let private = &self.private;
        let devices = self
            .devices
            .iter()
            .filter(|device| !matches!(device.role, Role::Distributed))
            .map(|device| {
                let mut local = device.clone();
                if let Role::Autodiff = device.role {
                    let span = device.field_span();
                    local.field = syn::parse_quote_spanned!(span=> #private::AutodiffDevice<#ident>);
                }
                local
            })
            .collect();
        Model {
            ident,
            user_ident: self.user_ident.clone(),
            vis: self.vis.clone(),
            private: self.private.clone(),
            items: self.items.clone(),
            devices,
            extensions: self.extensions.clone(),
        }
    }
}

impl Device {
    /// Where generated code that handles the field is reported: at the field, but resolved as the rest of the
    /// expansion, so that the locals it uses are the call site's even when the field's tokens come from a macro's
    /// caller (macro hygiene would otherwise keep them apart).
    pub fn field_span(&self) -> Span {
        Span::call_site().located_at(syn::spanned::Spanned::span(&self.field))
    }

    /// The cfg attributes, ready to put in front of an arm or item.
    pub fn cfg(&self) -> TokenStream {
        let cfgs = &self.cfgs;
        quote!(#(#cfgs)*)
    }

    /// The name's literal, spanned on the variant.
    pub fn name_literal(&self) -> TokenStream {
        let name = &self.name;
        quote_spanned!(self.ident.span()=> #name)
    }
}

/// `tokens` with every `Self` replaced by `ident`, keeping each token's span.
pub fn replace_self(tokens: TokenStream, ident: &Ident) -> TokenStream {
    tokens
        .into_iter()
        .map(|token| match token {
            TokenTree::Ident(found) if found == "Self" => {
                let mut replaced = ident.clone();
                replaced.set_span(found.span());
                TokenTree::Ident(replaced)
            }
            TokenTree::Group(group) => {
                let mut replaced = Group::new(group.delimiter(), replace_self(group.stream(), ident));
                replaced.set_span(group.span());
                TokenTree::Group(replaced)
            }
            other => other,
        })
        .collect()
}
