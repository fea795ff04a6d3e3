//! The concrete backends of a local enum, one *arm* each: a `#[backend(P)]` variant's arm is `P`, the `#[autodiff]`
//! variant's are `Autodiff<P>` for every base `P`. Each arm gets a type implementing dispatch-core's `Arm` (how its
//! tensors and devices sit in the enum's), and the backend gets `Routes`: one exhaustive `match` per kind of operand,
//! one arm each. The ops themselves come from dispatch-core's op list; nothing here names one.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::Type;

use crate::model::{Device, Model, Role, TensorKind};
use crate::{attr, hidden};

pub struct Arm<'a> {
    /// The local variant.
    pub device: &'a Device,
    /// For an autodiff arm, the base variant whose backend `Autodiff` wraps.
    pub base: Option<&'a Device>,
    /// The base backend's path as the user wrote it.
    pub backend_path: &'a Type,
    /// `BackendPath` or `AutodiffPath`: the private trait through which this arm names its backend's types.
    path_trait: TokenStream,
    /// The cfgs of the variant and, for an autodiff arm, of its base.
    pub cfg: TokenStream,
}

/// Every arm of a local model, in variant order.
pub fn arms(model: &Model) -> Vec<Arm<'_>> {
    let private = &model.private;
    let mut arms = Vec::new();
    for device in &model.devices {
        match &device.role {
            Role::Backend(path) => arms.push(Arm {
                device,
                base: None,
                backend_path: path,
                path_trait: quote!(#private::BackendPath),
                cfg: device.cfg(),
            }),
            Role::Autodiff => {
                for (base, path) in model.backends() {
                    let (device_cfg, base_cfg) = (device.cfg(), base.cfg());
                    arms.push(Arm {
                        device,
                        base: Some(base),
                        backend_path: path,
                        path_trait: quote!(#private::AutodiffPath),
                        cfg: quote!(#device_cfg #base_cfg),
                    });
                }
            }
            Role::Distributed => {}
        }
    }
    arms
}

impl Arm<'_> {
    /// Where generated code that handles this arm's tensors and devices is reported: at the user's backend path,
    /// but resolved as the rest of the expansion, so that its locals and the call site's are the same.
    ///
    /// A path that is not a (base) backend fails one bound, `P: BackendPath`, in every such piece of code; spanned
    /// the same everywhere, rustc reports it once. Code spanned at the call site would report it once more there.
    pub fn span(&self) -> proc_macro2::Span {
        proc_macro2::Span::call_site().located_at(syn::spanned::Spanned::span(self.backend_path))
    }

    /// `tokens`, every one of them (groups included) spanned at `span()`.
    pub fn located(&self, tokens: TokenStream) -> TokenStream {
        located_at(tokens, self.span())
    }

    /// `<P as BackendPath>::item`: how generated code names this arm's types.
    pub fn item(&self, item: &str) -> TokenStream {
        let (path, path_trait) = (self.backend_path, &self.path_trait);
        let item = format_ident!("{}", item);
        self.located(quote!(<#path as #path_trait>::#item))
    }

    /// `<P as BackendPath>::function(args)`.
    pub fn call(&self, function: &str, args: TokenStream) -> TokenStream {
        let function = self.item(function);
        self.located(quote!(#function(#args)))
    }

    /// The type standing for this arm: `__DispatchArmCandle`, `__DispatchArmAutodiffCandle`.
    fn ident(&self) -> syn::Ident {
        match self.base {
            None => format_ident!("__DispatchArm{}", self.device.ident),
            Some(base) => format_ident!("__DispatchArm{}{}", self.device.ident, base.ident),
        }
    }

    /// `Tensor::V(binding)` or `Tensor::A(AutodiffTensor::V(binding))` in the enums of `kind`, as a pattern or an
    /// expression.
    pub fn tensor_of(&self, model: &Model, kind: TensorKind, inner: TokenStream) -> TokenStream {
        let (tensor, autodiff_tensor) = kind.enums(&model.items);
        let variant = &self.device.ident;
        let tokens = match self.base {
            None => quote!(#tensor::#variant(#inner)),
            Some(base) => {
                let base = &base.ident;
                quote!(#tensor::#variant(#autodiff_tensor::#base(#inner)))
            }
        };
        self.located(tokens)
    }

    /// `<Field as BackendField<P, <P as BackendPath>::Device>>`, spanned on the variant's field, where a field that
    /// is not the backend's device is reported; naming `P`'s device is this arm's code, spanned as such.
    fn field_check(&self, model: &Model) -> TokenStream {
        let private = &model.private;
        let path = self.backend_path;
        let backend_device = self.located(quote!(<#path as #private::BackendPath>::Device));
        let field_device = self.base.unwrap_or(self.device);
        let field = &field_device.field;
        quote_spanned!(field_device.field_span()=> <#field as #private::BackendField<#path, #backend_device>>)
    }

    /// The local device holding `device`, the backend's own device.
    fn wrap_device(&self, model: &Model, device: TokenStream) -> TokenStream {
        let check = self.field_check(model);
        let local = &model.ident;
        let variant = &self.device.ident;
        let field_device = quote!(#check::from_backend_device(#device));
        match self.base {
            None => quote!(#local::#variant(#field_device)),
            Some(base) => {
                let (base_enum, base_variant) = (&model.items.base, &base.ident);
                let from_base = self.autodiff_field(model, "from_base");
                quote!(#local::#variant(#from_base(#base_enum::#base_variant(#field_device))))
            }
        }
    }

    /// `<AutodiffDevice<Self> as AutodiffField<Local>>::function`, spanned on the `#[autodiff]` variant's field.
    fn autodiff_field(&self, model: &Model, function: &str) -> TokenStream {
        let (private, local, field) = (&model.private, &model.ident, &self.device.field);
        let function = format_ident!("{}", function);
        quote_spanned!(self.device.field_span()=> <#field as #private::AutodiffField<#local>>::#function)
    }

    /// `impl Arm<Backend> for <this arm's type>`.
    fn arm_impl(&self, model: &Model) -> TokenStream {
        let private = &model.private;
        let (backend, local) = (&model.items.backend, &model.ident);
        let ident = self.ident();
        let (arm_backend, gradients) = (self.item("Backend"), self.item("Gradients"));
        let arm_device = self.item("Device");
        let check = self.field_check(model);
        let find_device = match self.base {
            None => {
                let variant = &self.device.ident;
                quote! {
                    if let #local::#variant(ref device) = *device {
                        return #private::Some(#check::backend_device(device));
                    }
                }
            }
            Some(base) => {
                let (variant, base_enum, base_variant) = (&self.device.ident, &model.items.base, &base.ident);
                let base_of = self.autodiff_field(model, "base");
                quote! {
                    if let #local::#variant(ref device) = *device {
                        if let #base_enum::#base_variant(ref device) = *#base_of(device) {
                            return #private::Some(#check::backend_device(device));
                        }
                    }
                }
            }
        };
        let wrapped_device = self.wrap_device(model, quote!(device));
        // Located at the backend path, but for the bodies that check the field, which are reported at the field.
        let header = self.located(quote!(#[automatically_derived] impl #private::Arm<#backend> for #ident));
        let accessors = TensorKind::ALL.map(|kind| {
            let (take, wrap) = (format_ident!("{}", kind.word()), format_ident!("wrap_{}", kind.word()));
            let (enum_tensor, _) = kind.enums(&model.items);
            let arm_tensor = self.item(kind.path_items().0);
            let (pattern, wrapped) =
                (self.tensor_of(model, kind, quote!(ref inner)), self.tensor_of(model, kind, quote!(tensor)));
            quote! {
                #[inline(always)]
                fn #take(tensor: &#enum_tensor) -> #private::Option<&#arm_tensor> {
                    if let #pattern = *tensor { #private::Some(inner) } else { #private::None }
                }

                #[inline(always)]
                fn #wrap(tensor: #arm_tensor) -> #enum_tensor {
                    #wrapped
                }
            }
        });
        let tensors = self.located(quote! {
            type Backend = #arm_backend;
            type Gradients = #gradients;

            #(#accessors)*
        });
        let device_signature = self.located(quote! {
            #[inline(always)]
            #[allow(irrefutable_let_patterns)]
            fn device(device: &#local) -> #private::Option<&#arm_device>
        });
        let wrap_device_signature =
            self.located(quote!(#[inline(always)] fn wrap_device(device: #arm_device) -> #local));
        let none = self.located(quote!(#private::None));
        let body = [
            tensors,
            device_signature,
            self.braced(quote!(#find_device #none)),
            wrap_device_signature,
            self.braced(wrapped_device),
        ];
        let body = self.braced(body.into_iter().collect());
        // The cfg goes on both items: on the `enum` alone, it would leave the impl naming a missing type.
        let cfg = &self.cfg;
        let arm_enum = self.located(quote!(enum #ident {}));
        quote! {
            #cfg #arm_enum
            #cfg #header #body
        }
    }

    /// `{ tokens }`, the braces spanned at `span()` and the tokens as they are.
    fn braced(&self, tokens: TokenStream) -> TokenStream {
        self.grouped(proc_macro2::Delimiter::Brace, tokens)
    }

    /// `tokens` in `delimiter`s spanned at `span()`, the tokens as they are.
    fn grouped(&self, delimiter: proc_macro2::Delimiter, tokens: TokenStream) -> TokenStream {
        let mut group = proc_macro2::Group::new(delimiter, tokens);
        group.set_span(self.span());
        proc_macro2::TokenTree::Group(group).into()
    }
}

/// The arms' types and their `Arm` impls, and `Routes` for the backend: each `route_*` one `match` with one arm
/// per arm, down into the autodiff variant's base devices.
pub fn routes(model: &Model, arms: &[Arm]) -> TokenStream {
    let private = &model.private;
    let arm_impls = arms.iter().map(|arm| arm.arm_impl(model));
    let callee = |arm: &Arm, visit_trait: &syn::Ident| {
        let ident = arm.ident();
        arm.located(quote!(#private::#visit_trait::visit::<#ident>))
    };
    let visit_trait = |core_visit_trait: &syn::Ident| quote!(#private::#core_visit_trait);
    let routes =
        routes_impl(model, arms, &quote!(#private::Routes), visit_trait, callee, |_| quote!(), DeviceAccess::Checked);
    quote! {
        #(#arm_impls)*
        #routes
    }
}

/// For each extension the enum lists (`#[dispatch(extensions(...))]`): per arm, the arm's backend's ops (from the
/// hidden module the extension's attribute put beside it), and the module's routes trait, which hands them to the
/// op's visitor. The ops are bounded by the extension, and taken once per arm, spanned at the variant (for a
/// `#[backend]` variant at its backend path, for the `#[autodiff]` variant at the variant): a missing impl is one
/// error, where the variant is written.
///
/// A listed trait without the attribute has no hidden module, and naming one would be rustc's unresolved import of
/// a name the user never wrote. So the module is found by name resolution with a stand-in behind it: an outer block
/// holds a stand-in module of the same name (the same items, no ops, a marker trait that no type holds), and an
/// inner block, where the code is, glob-imports the module the trait lives in (`self` for a bare name). A glob in
/// the inner block outranks an item of the outer one, so the stand-in is found only where the real module does not
/// exist; then a trait's provided `const` asks its `Self`, spanned at the trait's name in the user's path, for the
/// marker, and rustc shows the stand-in marker's error there, once: the rest type-checks against the stand-in. No
/// `panic!`, not even one evaluated at compile time. The module is named only in type and value paths: in a `use`
/// or a macro path rustc would call the two candidates ambiguous.
pub fn extension_routes(model: &Model, arms: &[Arm]) -> TokenStream {
    let (private, backend) = (&model.private, &model.items.backend);
    let (routes_trait, ops_struct, ops_fn) = (hidden::routes_trait(), hidden::ops_struct(), hidden::ops_fn());
    let (marked_trait, marked_token) = (hidden::marked_trait(), hidden::marked_token());
    let impls = model.extensions.iter().enumerate().filter_map(|(index, extension)| {
        // A parsed path has at least one segment.
        let trait_segment = extension.segments.last()?;
        let prefix: Vec<&syn::Ident> = extension.segments.iter().map(|segment| &segment.ident).collect();
        let prefix = &prefix[..prefix.len() - 1];
        let path_span = proc_macro2::Span::call_site().located_at(syn::spanned::Spanned::span(extension));
        let module = hidden::module(&syn::Ident::new(&trait_segment.ident.to_string(), path_span));
        let module_of_trait = match prefix.is_empty() {
            true => quote!(self),
            false => {
                let leading = &extension.leading_colon;
                quote!(#leading #(#prefix)::*)
            }
        };
        let ops_of = |arm: &Arm| format_ident!("__DISPATCH_EXTENSION_{}_OPS_OF_{}", index, arm.ident());
        let at_variant = |arm: &Arm, tokens: TokenStream| match arm.base {
            None => arm.located(tokens),
            Some(_) => located_at(tokens, proc_macro2::Span::call_site().located_at(arm.device.ident.span())),
        };
        let consts = arms.iter().map(|arm| {
            let (cfg, name, ident) = (&arm.cfg, ops_of(arm), arm.ident());
            let arm_backend = quote!(<#ident as #private::Arm<#backend>>::Backend);
            let of = at_variant(arm, quote!(#ops_fn::<#arm_backend>()));
            quote!(#cfg #[allow(non_upper_case_globals)] const #name: #module::#ops_struct<#arm_backend> = #module::#of;)
        });
        let callee = |arm: &Arm, core_visit_trait: &syn::Ident| {
            let (ident, visit_trait) = (arm.ident(), hidden::visit_trait(&core_visit_trait.to_string()));
            let call = arm.located(quote!(#visit_trait::visit::<#ident>));
            quote!(#module::#call)
        };
        let extra = |arm: &Arm| {
            let name = ops_of(arm);
            quote!(, &#name)
        };
        let visit_trait = |core_visit_trait: &syn::Ident| {
            let visit_trait = hidden::visit_trait(&core_visit_trait.to_string());
            quote!(#module::#visit_trait)
        };
        let routes_trait = quote!(#module::#routes_trait);
        let routes = routes_impl(model, arms, &routes_trait, visit_trait, callee, extra, DeviceAccess::Inferred);
        let unmarked = unmarked_extension(extension);
        let stand_in = hidden::module_items(
            private,
            std::iter::empty(),
            std::iter::empty(),
            &quote!(#private::Backend),
            Some(&unmarked),
        );
        // `Self` carries the span of the trait's name itself, not the call site's: rustc then quotes the user's line
        // alone, without pointing into the derive.
        let checked = quote_spanned!(trait_segment.ident.span()=> Self);
        let check = quote! {
            #[allow(dead_code)]
            trait __DispatchListedTrait {
                const CHECKED: () = <#checked as #module::#marked_trait<#module::#marked_token>>::CHECKED;
            }
        };
        Some(quote! {
            const _: () = {
                #[allow(non_camel_case_types, non_snake_case, dead_code, unused_imports)]
                mod #module {
                    use super::*;
                    #stand_in
                }

                const _: () = {
                    #[allow(unused_imports)]
                    use #module_of_trait::*;
                    #check
                    #(#consts)*
                    #routes
                };
            };
        })
    });
    quote!(#(#impls)*)
}

/// What a build says for a listed trait that has no hidden module here: it lacks the attribute, or (for a bare
/// name) it was imported on its own, without the module beside it.
fn unmarked_extension(extension: &syn::Path) -> hidden::Unmarked {
    let spelled = attr::spelled(extension);
    let name = extension.segments.last().map(|segment| segment.ident.to_string()).unwrap_or_default();
    let mut notes = vec!["the attribute gives a derived enum the trait's ops".to_owned()];
    if extension.leading_colon.is_none() && extension.segments.len() == 1 {
        notes.push(format!(
            "if `{name}` has the attribute and lives in another module, list it by its path \
             (`extensions(module::{name})`): a `use` of the trait alone does not bring its ops"
        ));
    }
    hidden::Unmarked {
        message: format!("`{spelled}` is listed in `extensions(...)` but is not an extension trait"),
        label: "declare it with `#[dispatch_core::extension]`".to_owned(),
        notes,
    }
}

/// How a routes impl takes an arm's own device out of the enum's.
#[derive(Clone, Copy)]
enum DeviceAccess {
    /// Through the field's type and the backend's path, spanned at the field, where a field that is not the
    /// backend's device is reported: the enum's own `Routes`.
    Checked,
    /// With every type inferred, so that the code names none of the user's types: an extension's routes, which sit
    /// under a glob import (see `extension_routes`), and after the `Routes` that checked the fields.
    Inferred,
}

/// `impl <routes_trait> for <backend>`, one exhaustive `match` per kind of operand, down into the autodiff
/// variant's base devices; `visit_trait` names the visitor trait standing for dispatch-core's `VisitFloat`, ...,
/// `VisitDevice`, `callee` the path of an arm's `visit`, and `extra` what an arm passes after its operand.
fn routes_impl<'a>(
    model: &Model,
    arms: &[Arm<'a>],
    routes_trait: &TokenStream,
    visit_trait: impl Fn(&syn::Ident) -> TokenStream,
    callee: impl Fn(&Arm<'a>, &syn::Ident) -> TokenStream,
    extra: impl Fn(&Arm<'a>) -> TokenStream,
    devices: DeviceAccess,
) -> TokenStream {
    let private = &model.private;
    let (backend, local) = (&model.items.backend, &model.ident);
    let route_tensors = TensorKind::ALL.map(|kind| {
        let (enum_tensor, _) = kind.enums(&model.items);
        let core_visit_trait = format_ident!("{}", kind.visit_trait());
        let route = format_ident!("route_{}", kind.word());
        let tensor_arms = arms.iter().map(|arm| {
            let (cfg, extra) = (&arm.cfg, extra(arm));
            let pattern = arm.tensor_of(model, kind, quote!(ref inner));
            let visit = callee(arm, &core_visit_trait);
            let args = arm.grouped(proc_macro2::Delimiter::Parenthesis, arm.located(quote!(visit, inner #extra)));
            quote!(#cfg #pattern => #visit #args,)
        });
        let bound = visit_trait(&core_visit_trait);
        quote! {
            #[inline(always)]
            fn #route<V: #private::Visit<Self> + #bound<Self>>(tensor: &#enum_tensor, visit: V) -> V::Output {
                match *tensor { #(#tensor_arms)* }
            }
        }
    });
    let visit_device = format_ident!("VisitDevice");
    let device_arm = |arm: &Arm<'a>, pattern: TokenStream| {
        let (cfg, extra) = (&arm.cfg, extra(arm));
        let own_device = match devices {
            // The field check keeps its own span: a field that is not the backend's device is reported there.
            DeviceAccess::Checked => {
                let check = arm.field_check(model);
                quote!(#check::backend_device(device))
            }
            DeviceAccess::Inferred => {
                let (ident, backend) = (arm.ident(), &model.items.backend);
                let arm_device = quote!(<<#ident as #private::Arm<#backend>>::Backend as #private::Backend>::Device);
                quote!(<_ as #private::Same<#arm_device>>::same(device))
            }
        };
        let visit = callee(arm, &visit_device);
        let args = arm.grouped(proc_macro2::Delimiter::Parenthesis, quote!(visit, #own_device #extra));
        quote!(#cfg #pattern => #visit #args,)
    };
    let device_arms = model.devices.iter().map(|device| {
        let (cfg, variant) = (device.cfg(), &device.ident);
        match &device.role {
            Role::Backend(_) => {
                let own = arms.iter().filter(|arm| arm.base.is_none() && arm.device.ident == *variant);
                let own = own.map(|arm| device_arm(arm, quote!(#local::#variant(ref device))));
                quote!(#(#own)*)
            }
            Role::Autodiff => {
                let base_enum = &model.items.base;
                let field = &device.field;
                let base_of = match devices {
                    DeviceAccess::Checked => {
                        quote_spanned!(device.field_span()=> <#field as #private::AutodiffField<#local>>::base)
                    }
                    DeviceAccess::Inferred => quote!(<_ as #private::AutodiffField<#local>>::base),
                };
                let bases = arms.iter().filter_map(|arm| {
                    let base_variant = &arm.base?.ident;
                    Some(device_arm(arm, quote!(#base_enum::#base_variant(ref device))))
                });
                quote!(#cfg #local::#variant(ref device) => match *#base_of(device) { #(#bases)* })
            }
            Role::Distributed => quote!(),
        }
    });
    let device_bound = visit_trait(&visit_device);
    quote! {
        #[automatically_derived]
        impl #routes_trait for #backend {
            #(#route_tensors)*

            #[inline(always)]
            fn route_device<V: #private::Visit<Self> + #device_bound<Self>>(device: &#local, visit: V) -> V::Output {
                match *device { #(#device_arms)* }
            }
        }
    }
}

/// `match *scrutinee { <one arm per arm> }` over a tensor enum of `kind`, each binding the arm's own tensor as
/// `binding`; `body` spans its code with `Arm::located` or builds it with `Arm`'s methods, which do.
pub fn match_tensor_of(
    model: &Model,
    arms: &[Arm],
    kind: TensorKind,
    scrutinee: TokenStream,
    binding: TokenStream,
    body: impl Fn(&Arm) -> TokenStream,
) -> TokenStream {
    let arms = arms.iter().map(|arm| {
        let cfg = &arm.cfg;
        let pattern = arm.tensor_of(model, kind, quote!(ref #binding));
        let body = body(arm);
        quote!(#cfg #pattern => #body,)
    });
    quote!(match *#scrutinee { #(#arms)* })
}

/// `tokens`, every one of them (groups included) spanned at `span`.
fn located_at(tokens: TokenStream, span: proc_macro2::Span) -> TokenStream {
    tokens
        .into_iter()
        .map(|mut token| {
            if let proc_macro2::TokenTree::Group(group) = &token {
                let mut located = proc_macro2::Group::new(group.delimiter(), located_at(group.stream(), span));
                located.set_span(span);
                token = proc_macro2::TokenTree::Group(located);
            }
            token.set_span(span);
            token
        })
        .collect()
}
