//! `impl AutodiffBackend` for the generated backend of an enum with an `#[autodiff]` variant: its leaves forward
//! to `Autodiff<P>`; the other leaves record no graph, so asking them for gradients is an `Err`.

use proc_macro2::TokenStream;
use quote::quote;

use crate::expand::leaves::{Leaf, match_tensor};
use crate::model::Model;

pub fn autodiff_backend_impl(model: &Model, leaves: &[Leaf]) -> TokenStream {
    let Some(autodiff) = model.autodiff() else { return quote!() };
    let private = &model.private;
    let (backend, tensor) = (&model.items.backend, &model.items.tensor);
    let cfg = autodiff.cfg();
    let not_differentiable = |op: &str| {
        quote!(#private::Err(#private::Error::NotDifferentiable {
            op: #op,
            device: #private::ToString::to_string(&<#backend as #private::Backend>::device(tensor)),
        }))
    };
    let forward = |op: &str, otherwise: TokenStream| {
        match_tensor(model, leaves, quote!(tensor), quote!(inner), |leaf| match leaf.base {
            Some(_) => leaf.call_and_wrap(model, op, quote!(inner)),
            None => otherwise.clone(),
        })
    };
    let require_grad = forward("require_grad", not_differentiable("require_grad"));
    let detach = forward("detach", quote!(#private::Ok(::core::clone::Clone::clone(tensor))));
    let tensor_id = match_tensor(model, leaves, quote!(tensor), quote!(inner), |leaf| match leaf.base {
        Some(_) => leaf.call("tensor_id", quote!(inner)),
        None => quote!(#private::None),
    });
    let not_differentiable_loss = not_differentiable("backward");
    let backward = match_tensor(model, leaves, quote!(tensor), quote!(inner), |leaf| match leaf.base {
        Some(_) => {
            let (backward_into, wrap) = (leaf.item("backward_into"), leaf.wrap_tensor(model));
            leaf.located(quote!(#backward_into::<#backend>(inner, #wrap)))
        }
        None => not_differentiable_loss.clone(),
    });
    quote! {
        #cfg
        #[automatically_derived]
        #[allow(unused_variables)]
        impl #private::AutodiffBackend for #backend {
            fn require_grad(tensor: &#tensor) -> #private::Result<#tensor> { #require_grad }
            fn detach(tensor: &#tensor) -> #private::Result<#tensor> { #detach }
            fn tensor_id(tensor: &#tensor) -> #private::Option<#private::TensorId> { #tensor_id }
            fn backward(tensor: &#tensor) -> #private::Result<#private::Gradients<#backend>> { #backward }
        }
    }
}
