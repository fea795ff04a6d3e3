//! The derive's input as written: the struct and its fields with their `#[module(...)]` read, each keeping its
//! syn node so that every later error points at the user's own tokens. Nothing here judges the input; `valid.rs`
//! does.

use darling::error::Accumulator;
use darling::{Error, FromAttributes};
use syn::{Data, DeriveInput};

use super::attr::{FieldOptions, StructOptions};

pub struct Input<'a> {
    pub original: &'a DeriveInput,
    pub options: StructOptions,
    /// In declaration order, the order parameters are visited in.
    pub fields: Vec<Field<'a>>,
}

pub struct Field<'a> {
    pub original: &'a syn::Field,
    /// Its position, the name of a tuple struct's field.
    pub index: usize,
    pub options: FieldOptions,
}

impl<'a> Input<'a> {
    /// Reads the struct; `None` (with the error in `errors`) for an enum or a union, which cannot be read further.
    pub fn from_syn(original: &'a DeriveInput, errors: &mut Accumulator) -> Option<Self> {
        let fields = match &original.data {
            Data::Struct(data) => &data.fields,
            Data::Enum(data) => {
                errors.push(not_a_struct("an enum").with_span(&data.enum_token));
                return None;
            }
            Data::Union(data) => {
                errors.push(not_a_struct("a union").with_span(&data.union_token));
                return None;
            }
        };
        let options = errors.handle(StructOptions::from_attributes(&original.attrs)).unwrap_or_default();
        let fields = fields
            .iter()
            .enumerate()
            .map(|(index, field)| Field {
                original: field,
                index,
                options: errors.handle(FieldOptions::from_attributes(&field.attrs)).unwrap_or_default(),
            })
            .collect();
        Some(Input { original, options, fields })
    }
}

fn not_a_struct(what: &str) -> Error {
    Error::custom(format!(
        "`#[derive(Module)]` works on structs only, not on {what}: a module's parameters are named after fields \
         that are always there, e.g. `struct Mlp<B: Backend> {{ fc1: Linear<B>, fc2: Linear<B> }}`"
    ))
}
