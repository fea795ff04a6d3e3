//! `impl Backend` for the generated backend: every op is one `match` with one arm per leaf, naming the leaf's
//! concrete backend. Binary ops check that both operands live on the same leaf with one `let ... else` per arm, so
//! the expansion stays linear in the number of variants.

use proc_macro2::TokenStream;
use quote::quote;

use crate::expand::leaves::{Leaf, match_device, match_tensor};
use crate::model::Model;

/// An op taking one tensor and plain arguments, returning a tensor.
struct Unary {
    name: &'static str,
    params: TokenStream,
    args: TokenStream,
}

fn unary(name: &'static str, params: TokenStream, args: TokenStream) -> Unary {
    Unary { name, params, args }
}

fn unary_ops(private: &TokenStream) -> Vec<Unary> {
    let none = || (quote!(), quote!());
    let mut ops = Vec::new();
    for name in ["neg", "exp", "log", "relu", "sigmoid", "tanh", "sum", "mean"] {
        let (params, args) = none();
        ops.push(unary(name, params, args));
    }
    for (name, param) in [("add_scalar", "scalar"), ("mul_scalar", "scalar"), ("powf_scalar", "exponent")] {
        let param = quote::format_ident!("{}", param);
        ops.push(unary(name, quote!(, #param: f32), quote!(, #param)));
    }
    ops.push(unary("greater_scalar", quote!(, threshold: f32), quote!(, threshold)));
    for name in ["sum_dim", "mean_dim", "log_softmax", "argmax"] {
        ops.push(unary(name, quote!(, axis: usize), quote!(, axis)));
    }
    ops.push(unary("swap_dims", quote!(, dim0: usize, dim1: usize), quote!(, dim0, dim1)));
    ops.push(unary("reshape", quote!(, shape: #private::Shape), quote!(, shape)));
    ops.push(unary("narrow", quote!(, axis: usize, start: usize, len: usize), quote!(, axis, start, len)));
    // The op is behind an alias so that no `dyn` appears in the expansion: nothing here dispatches dynamically.
    ops.push(unary("host_op", quote!(, op: #private::HostOpRef), quote!(, op)));
    ops
}

pub fn backend_impl(model: &Model, leaves: &[Leaf]) -> TokenStream {
    let private = &model.private;
    let (backend, tensor, local) = (&model.items.backend, &model.items.tensor, &model.ident);
    // The user's enum, even where the backend's devices are its local enum.
    let name = syn::ext::IdentExt::unraw(&model.user_ident).to_string().to_lowercase();
    let unary = unary_ops(private).into_iter().map(|op| unary_fn(model, leaves, op));
    let binary = ["add", "sub", "mul", "div", "matmul"].into_iter().map(|op| binary_fn(model, leaves, op));
    let creation = creation_fns(model, leaves);
    let inspection = inspection_fns(model, leaves);
    let cat = cat_fn(model, leaves);
    let to_device = to_device_fn(model, leaves);
    let leave_leaf = leave_leaf_fn(model, leaves);
    quote! {
        #[automatically_derived]
        #[allow(irrefutable_let_patterns, unused_variables)]
        impl #private::Backend for #backend {
            type Device = #local;
            type FloatTensor = #tensor;

            fn name() -> #private::String {
                #private::String::from(#name)
            }

            #creation
            #inspection
            #to_device
            #(#unary)*
            #(#binary)*
            #cat
        }

        #[automatically_derived]
        impl #backend {
            /// The error of a binary op whose operands live on different variants, naming both devices.
            #[cold]
            fn __dispatch_mismatch(op: &'static str, lhs: &#tensor, rhs: &#tensor) -> #private::Error {
                #private::Error::device_mismatch(
                    op,
                    <#backend as #private::Backend>::device(lhs),
                    <#backend as #private::Backend>::device(rhs),
                )
            }

            #leave_leaf
        }
    }
}

fn unary_fn(model: &Model, leaves: &[Leaf], op: Unary) -> TokenStream {
    let private = &model.private;
    let tensor = &model.items.tensor;
    let Unary { name, params, args } = op;
    let fn_name = quote::format_ident!("{}", name);
    let body = match_tensor(model, leaves, quote!(tensor), quote!(tensor), |leaf| {
        leaf.call_and_wrap(model, name, quote!(tensor #args))
    });
    quote! {
        #[inline]
        fn #fn_name(tensor: &#tensor #params) -> #private::Result<#tensor> { #body }
    }
}

fn binary_fn(model: &Model, leaves: &[Leaf], op: &str) -> TokenStream {
    let private = &model.private;
    let (backend, tensor) = (&model.items.backend, &model.items.tensor);
    let name = quote::format_ident!("{}", op);
    let body = match_tensor(model, leaves, quote!(lhs), quote!(lhs_tensor), |leaf| {
        let call = leaf.call_and_wrap(model, op, quote!(lhs_tensor, rhs_tensor));
        let rhs_pattern = leaf.tensor(model, quote!(ref rhs_tensor));
        leaf.located(quote!({
            let #rhs_pattern = *rhs else {
                return #private::Err(#backend::__dispatch_mismatch(#op, lhs, rhs));
            };
            #call
        }))
    });
    quote! {
        #[inline]
        fn #name(lhs: &#tensor, rhs: &#tensor) -> #private::Result<#tensor> { #body }
    }
}

/// `cat` checks every operand against the first one's leaf.
fn cat_fn(model: &Model, leaves: &[Leaf]) -> TokenStream {
    let private = &model.private;
    let (backend, tensor) = (&model.items.backend, &model.items.tensor);
    let body = match_tensor(model, leaves, quote!(first), quote!(_first_tensor), |leaf| {
        let call_cat = leaf.call_and_wrap(model, "cat", quote!(&parts, axis));
        let pattern = leaf.tensor(model, quote!(ref part));
        let clone_part = leaf.call("clone_tensor", quote!(part));
        leaf.located(quote!({
            let mut parts = #private::Vec::with_capacity(tensors.len());
            for tensor in tensors {
                let #pattern = *tensor else {
                    return #private::Err(#backend::__dispatch_mismatch("cat", first, tensor));
                };
                parts.push(#clone_part);
            }
            #call_cat
        }))
    });
    quote! {
        fn cat(tensors: &[#tensor], axis: usize) -> #private::Result<#tensor> {
            let #private::Some(first) = tensors.first() else {
                return #private::Err(#private::Error::invalid("cat", "cannot concatenate an empty list of tensors"));
            };
            #body
        }
    }
}

/// The ops that take a device: each dispatches on the device's variant.
fn creation_fns(model: &Model, leaves: &[Leaf]) -> TokenStream {
    let private = &model.private;
    let (tensor, local) = (&model.items.tensor, &model.ident);
    let ops = [
        ("from_vec", quote!(data: #private::Vec<f32>, shape: #private::Shape), quote!(data, shape)),
        ("full", quote!(shape: #private::Shape, value: f32), quote!(shape, value)),
        (
            "random_uniform",
            quote!(shape: #private::Shape, low: f32, high: f32, seed: u64),
            quote!(shape, low, high, seed),
        ),
        (
            "random_normal",
            quote!(shape: #private::Shape, mean: f32, std: f32, seed: u64),
            quote!(shape, mean, std, seed),
        ),
    ];
    let fns = ops.into_iter().map(|(name, params, args)| {
        let body =
            match_device(model, leaves, quote!(device), |leaf| leaf.call_and_wrap(model, name, quote!(#args, device)));
        let name = quote::format_ident!("{}", name);
        quote! {
            #[inline]
            fn #name(#params, device: &#local) -> #private::Result<#tensor> { #body }
        }
    });
    quote!(#(#fns)*)
}

/// `to_vec`, `shape` and `device`: read the tensor on its own leaf.
fn inspection_fns(model: &Model, leaves: &[Leaf]) -> TokenStream {
    let private = &model.private;
    let (tensor, local) = (&model.items.tensor, &model.ident);
    let each =
        |op: &str| match_tensor(model, leaves, quote!(tensor), quote!(tensor), |leaf| leaf.call(op, quote!(tensor)));
    let (to_vec, shape) = (each("to_vec"), each("shape"));
    let device = match_tensor(model, leaves, quote!(tensor), quote!(tensor), |leaf| {
        leaf.wrap_device(model, leaf.call("device", quote!(tensor)))
    });
    quote! {
        #[inline]
        fn to_vec(tensor: &#tensor) -> #private::Result<#private::Vec<f32>> { #to_vec }
        #[inline]
        fn shape(tensor: &#tensor) -> #private::Shape { #shape }
        #[inline]
        fn device(tensor: &#tensor) -> #local { #device }
    }
}

/// Within one leaf, the backend's own `to_device` (`Autodiff`'s records the move, so gradients flow back); across
/// leaves, through host memory (see `leave_leaf_fn`).
fn to_device_fn(model: &Model, leaves: &[Leaf]) -> TokenStream {
    let private = &model.private;
    let (backend, tensor, local) = (&model.items.backend, &model.items.tensor, &model.ident);
    let body = match_device(model, leaves, quote!(target), |leaf| {
        let call_to_device = leaf.call_and_wrap(model, "to_device", quote!(same_leaf, device));
        let call_from_vec = leaf.call_and_wrap(model, "from_vec", quote!(data, shape, device));
        let same_leaf = leaf.tensor(model, quote!(ref same_leaf));
        leaf.located(quote!({
            if let #same_leaf = *tensor {
                return #call_to_device;
            }
            let (data, shape) = #backend::__dispatch_leave_leaf(tensor, target)?;
            #call_from_vec
        }))
    });
    quote! {
        fn to_device(tensor: &#tensor, target: &#local) -> #private::Result<#tensor> { #body }
    }
}

/// The values of a tensor leaving its leaf for `target`'s. A tensor that records an autodiff graph may not: it would
/// arrive untracked, and its gradient would be lost without a word. One arm per leaf, as every op.
fn leave_leaf_fn(model: &Model, leaves: &[Leaf]) -> TokenStream {
    let private = &model.private;
    let (backend, tensor, local) = (&model.items.backend, &model.items.tensor, &model.ident);
    let refuse_a_graph = model.autodiff().map(|_| {
        let records_graph = match_tensor(model, leaves, quote!(tensor), quote!(inner), |leaf| match leaf.base {
            Some(_) => {
                let tensor_id = leaf.call("tensor_id", quote!(inner));
                leaf.located(quote!(#private::Option::is_some(&#tensor_id)))
            }
            None => quote!(false),
        });
        quote! {
            let records_graph = #records_graph;
            if records_graph {
                let from = <#backend as #private::Backend>::device(tensor);
                return #private::Err(#private::to_device_would_cut_the_graph(from, target));
            }
        }
    });
    quote! {
        #[allow(unused_variables)]
        fn __dispatch_leave_leaf(
            tensor: &#tensor,
            target: &#local,
        ) -> #private::Result<(#private::Vec<f32>, #private::Shape)> {
            #refuse_a_graph
            let data = <#backend as #private::Backend>::to_vec(tensor)?;
            #private::Ok((data, <#backend as #private::Backend>::shape(tensor)))
        }
    }
}
