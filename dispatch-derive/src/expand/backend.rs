//! `impl Backend` (and `AutodiffBackend`, with an `#[autodiff]` variant) for the generated backend: dispatch-core's
//! macros expand its op list into methods that send each op to its arm through `Routes`, so the derive names no op.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};

use crate::model::Model;

pub fn backend_impl(model: &Model) -> TokenStream {
    let private = &model.private;
    let (backend, tensor, local) = (&model.items.backend, &model.items.tensor, &model.ident);
    // The user's enum, even where the backend's devices are its local enum.
    let name = syn::ext::IdentExt::unraw(&model.user_ident).to_string().to_lowercase();
    // Spanned where the tensor enum's name is, like the enum itself: what a broken arm breaks in the expanded ops
    // is reported there, at the user's enum, and not at the derive.
    let span = tensor.span();
    let (int, bool) = (&model.items.int_tensor, &model.items.bool_tensor);
    let floats = quote_spanned!(span=> &[#tensor]);
    let results = [tensor, int, bool].map(|tensor| quote_spanned!(tensor.span()=> #private::Result<#tensor>));
    let result = &results[0];
    let autodiff = model.autodiff().map(|autodiff| {
        let cfg = autodiff.cfg();
        quote_spanned!(span=> #cfg #private::__derived_autodiff_backend! { #backend { float: #tensor, result: #result } })
    });
    let backend_impl = quote_spanned! {span=>
        #private::__derived_backend! {
            #backend {
                device: #local,
                float: #tensor,
                floats: #floats,
                int: #int,
                bool: #bool,
                results: [#(#results),*],
                name: #name,
            }
        }
    };
    quote!(#backend_impl #autodiff)
}
