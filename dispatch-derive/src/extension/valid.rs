//! What an extension must be for a derived enum to dispatch it, each problem reported at its own tokens, all at
//! once.

use darling::Error;
use darling::error::Accumulator;
use syn::spanned::Spanned;
use syn::{FnArg, ReturnType, Type};

use super::ir::{Extension, Kind, Op};

const OPERAND_KINDS: &str = "`&Self::FloatTensor`, `&[Self::FloatTensor]`, `&Self::IntTensor`, `&Self::BoolTensor` \
                             or `&Self::Device`";

pub fn check(extension: &Extension, errors: &mut Accumulator) {
    let original = extension.original;
    if !original.generics.params.is_empty() {
        errors.push(
            Error::custom(
                "an extension takes no generic parameters: a derived enum implements it once, for its own backend",
            )
            .with_span(&original.generics),
        );
    }
    if let Some(where_clause) = &original.generics.where_clause {
        errors.push(
            Error::custom(
                "an extension takes no `where` clause: a derived enum implements it for its own backend, with no \
                 bound beyond `Backend`",
            )
            .with_span(where_clause),
        );
    }
    if let Some(unsafety) = &original.unsafety {
        errors.push(Error::custom("an extension cannot be an `unsafe trait`").with_span(unsafety));
    }
    if let Some(auto) = &original.modifiers.auto_token {
        errors.push(Error::custom("an extension cannot be an `auto trait`").with_span(auto));
    }
    for other in &extension.others {
        errors.push(
            Error::custom(
                "an extension holds ops (associated functions) only: a derived enum could not implement this item \
                 for its backend",
            )
            .with_span(other),
        );
    }
    for op in &extension.ops {
        check_op(op, errors);
    }
}

fn check_op(op: &Op, errors: &mut Accumulator) {
    let sig = &op.original.sig;
    let qualifiers = [
        sig.constness.as_ref().map(|token| (token.span(), "`const`")),
        sig.asyncness.as_ref().map(|token| (token.span(), "`async`")),
        sig.abi.as_ref().map(|abi| (abi.span(), "an ABI")),
        sig.variadic.as_ref().map(|variadic| (variadic.span(), "variadic parameters")),
    ];
    for (span, what) in qualifiers.into_iter().flatten() {
        errors.push(Error::custom(format!("an extension op cannot be {what}")).with_span(&span));
    }
    if let syn::Safety::Unsafe(token) = &sig.safety {
        errors.push(Error::custom("an extension op cannot be `unsafe`").with_span(token));
    }
    if !sig.generics.params.is_empty() {
        errors.push(
            Error::custom(
                "an extension op takes no generic parameters: each variant's backend implements it as written",
            )
            .with_span(&sig.generics),
        );
    }
    if let Some(where_clause) = &sig.generics.where_clause {
        errors.push(
            Error::custom(
                "an extension op takes no `where` clause: each variant's backend implements it as written, with no \
                 bound beyond the extension",
            )
            .with_span(where_clause),
        );
    }
    for (input, param) in sig.inputs.iter().zip(&op.params) {
        match (input, param) {
            (FnArg::Receiver(receiver), _) => errors.push(
                Error::custom(
                    "an extension op takes no `self`: like the ops of `Backend`, it is an associated function of the \
                     backend, called as `B::op(&tensor, ...)`",
                )
                .with_span(receiver),
            ),
            (FnArg::Typed(typed), None) => errors.push(
                Error::custom("an extension op's parameters are plain `name: Type` bindings").with_span(&typed.pat),
            ),
            (_, Some(param)) => match param.kind {
                None => errors.push(
                    Error::custom(format!(
                        "an extension op takes the backend's own types as {OPERAND_KINDS}; other parameters must not \
                         name `Self`"
                    ))
                    .with_span(param.ty),
                ),
                Some(Kind::Plain(Type::Reference(_) | Type::ImplTrait(_))) => errors.push(
                    Error::custom(format!(
                        "an extension op takes its other parameters by value (e.g. `Vec<usize>`, not `&[usize]`): \
                         only {OPERAND_KINDS} are borrowed"
                    ))
                    .with_span(param.ty),
                ),
                Some(_) => {}
            },
        }
    }
    match (&sig.output, op.output) {
        (_, Some(_)) => {}
        (ReturnType::Default, None) => errors.push(
            Error::custom(
                "an extension op returns `dispatch_core::Result<..>`: an operand on another variant is an `Err`",
            )
            .with_span(&sig.ident),
        ),
        (ReturnType::Type(_, ty), None) => errors.push(
            Error::custom(
                "an extension op returns `dispatch_core::Result<T>`, `T` a tensor of the backend (`Self::FloatTensor`, \
                 `Self::IntTensor`, `Self::BoolTensor`) or a type that does not name `Self`: an operand on another \
                 variant is an `Err`",
            )
            .with_span(ty),
        ),
    }
    let tensor_at = op
        .params
        .iter()
        .flatten()
        .position(|param| matches!(param.kind, Some(Kind::Float | Kind::Floats | Kind::Int | Kind::Bool)));
    let device_before_tensor =
        op.params.iter().flatten().take(tensor_at.unwrap_or(0)).find(|param| matches!(param.kind, Some(Kind::Device)));
    if let Some(device) = device_before_tensor {
        errors.push(
            Error::custom(
                "an extension op's device comes after its tensors: the op runs where its first tensor lives, and a \
                 device is checked against it",
            )
            .with_span(device.ty),
        );
    }
    let later_slices = op.params.iter().flatten().skip(tensor_at.map_or(usize::MAX, |at| at + 1));
    for slice in later_slices.filter(|param| matches!(param.kind, Some(Kind::Floats))) {
        errors.push(
            Error::custom(
                "an extension op takes a `&[Self::FloatTensor]` only as its first tensor operand, whose variant the \
                 op runs on",
            )
            .with_span(slice.ty),
        );
    }
    let all_read = op.params.iter().all(|param| param.as_ref().is_some_and(|param| param.kind.is_some()));
    if all_read && op.routed_by().is_none() {
        errors.push(
            Error::custom(format!(
                "an extension op needs an operand to pick the variant it runs on: a tensor or a device ({OPERAND_KINDS})"
            ))
            .with_span(&sig.ident),
        );
    }
}
