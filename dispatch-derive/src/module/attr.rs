//! `#[module(...)]`, read by darling receivers: they gather every error and suggest the key the user probably
//! meant (`skp` → `skip`).

use darling::FromAttributes;
use darling::util::Flag;
use syn::Path;

/// `#[module(...)]` on the struct.
#[derive(Default, FromAttributes)]
#[darling(attributes(module))]
pub struct StructOptions {
    /// Where dispatch-nn is, for users who renamed the dependency; `::dispatch_nn` by default.
    #[darling(rename = "crate")]
    pub krate: Option<Path>,
    /// A field's option written on the struct: read only to say where it goes.
    pub skip: Flag,
}

/// `#[module(...)]` on a field.
#[derive(Default, FromAttributes)]
#[darling(attributes(module))]
pub struct FieldOptions {
    /// The field is not a parameter (a size, an option, a probability): kept as it is, neither visited nor saved.
    pub skip: Flag,
}
