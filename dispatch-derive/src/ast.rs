//! The derive's input as written: the enum and its variants with their attributes read, each keeping the original
//! syn node so that every later error points at the user's own tokens. Nothing here judges the input; `valid.rs`
//! does.

use darling::error::Accumulator;
use darling::{Error, FromAttributes};
use syn::{Attribute, Data, DeriveInput};

use crate::attr::{self, EnumOptions, RoleAttr, VariantOptions};

pub struct Input<'a> {
    pub original: &'a DeriveInput,
    pub options: EnumOptions,
    pub variants: Vec<Variant<'a>>,
}

pub struct Variant<'a> {
    pub original: &'a syn::Variant,
    pub roles: Vec<RoleAttr<'a>>,
    pub options: VariantOptions,
    pub cfgs: Vec<Attribute>,
}

impl<'a> Input<'a> {
    /// Reads the enum; `None` (with the error in `errors`) for a struct or a union, which cannot be read further.
    pub fn from_syn(original: &'a DeriveInput, errors: &mut Accumulator) -> Option<Self> {
        let enum_data = match &original.data {
            Data::Enum(data) => data,
            Data::Struct(data) => {
                errors.push(not_an_enum("a struct").with_span(&data.struct_token));
                return None;
            }
            Data::Union(data) => {
                errors.push(not_an_enum("a union").with_span(&data.union_token));
                return None;
            }
        };
        attr::misplaced_roles(&original.attrs, errors);
        let options = errors.handle(EnumOptions::from_attributes(&original.attrs)).unwrap_or_default();
        let variants = enum_data.variants.iter().map(|variant| Variant::from_syn(variant, errors)).collect();
        Some(Input { original, options, variants })
    }
}

impl<'a> Variant<'a> {
    fn from_syn(original: &'a syn::Variant, errors: &mut Accumulator) -> Self {
        Variant {
            original,
            roles: attr::roles(&original.attrs, errors),
            options: errors.handle(VariantOptions::from_attributes(&original.attrs)).unwrap_or_default(),
            cfgs: attr::cfgs(&original.attrs),
        }
    }
}

fn not_an_enum(what: &str) -> Error {
    Error::custom(format!(
        "`#[derive(Dispatch)]` works on enums only, not on {what}: each variant of a device enum names a backend, \
         e.g. `enum Device {{ #[backend(Candle)] Cpu(<Candle as Backend>::Device) }}`"
    ))
}
