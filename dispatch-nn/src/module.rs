//! The module system: every parameter of a model, visited by name.

use dispatch_core::{AutodiffBackend, Backend, DType, DeviceOf, Result, Tensor};

/// What a model's parameters go through, one at a time, by dotted name (`block.0.attention.qkv.weight`): an
/// optimizer's step, a load, a move to another device. Returns the parameter to keep.
pub trait ParamMapper<B: Backend> {
    /// The parameter called `name` becomes what this returns.
    fn map(&mut self, name: &str, param: Tensor<B>) -> Result<Tensor<B>>;
}

impl<B: Backend, F: FnMut(&str, Tensor<B>) -> Result<Tensor<B>>> ParamMapper<B> for F {
    fn map(&mut self, name: &str, param: Tensor<B>) -> Result<Tensor<B>> {
        self(name, param)
    }
}

/// A model, or a part of one: something whose parameters (float tensors) can be visited and replaced by name.
///
/// A struct of modules gets its impl from [`module!`](crate::module!); a tensor is a module of one parameter, `Option` and `Vec`
/// of modules are modules (`name.0`, `name.1`, ... for a `Vec`).
pub trait Module<B: Backend>: Sized {
    /// This module with each parameter replaced by `mapper`'s answer for it; `name` is the module's own name (the
    /// prefix of its parameters' names, empty for the whole model).
    fn map_params(self, name: &str, mapper: &mut dyn ParamMapper<B>) -> Result<Self>;
}

/// `prefix.name`, or `name` alone for an empty prefix.
pub fn join_name(prefix: &str, name: &str) -> String {
    if prefix.is_empty() { name.to_owned() } else { format!("{prefix}.{name}") }
}

impl<B: Backend> Module<B> for Tensor<B> {
    fn map_params(self, name: &str, mapper: &mut dyn ParamMapper<B>) -> Result<Self> {
        mapper.map(name, self)
    }
}

impl<B: Backend, M: Module<B>> Module<B> for Option<M> {
    fn map_params(self, name: &str, mapper: &mut dyn ParamMapper<B>) -> Result<Self> {
        self.map(|module| module.map_params(name, mapper)).transpose()
    }
}

impl<B: Backend, M: Module<B>> Module<B> for Vec<M> {
    fn map_params(self, name: &str, mapper: &mut dyn ParamMapper<B>) -> Result<Self> {
        self.into_iter()
            .enumerate()
            .map(|(index, module)| module.map_params(&join_name(name, &index.to_string()), mapper))
            .collect()
    }
}

/// What every module can do through [`Module::map_params`]. The names differ from `Tensor`'s own methods
/// (`moved_to`, not `to_device`), since a tensor is a module too and a by-value method would shadow them.
pub trait ModuleExt<B: Backend>: Module<B> + Clone {
    /// Every parameter with its name, in the module's order (cheap: tensors share storage).
    fn params(&self) -> Result<Vec<(String, Tensor<B>)>> {
        let mut params = Vec::new();
        self.clone().map_params("", &mut |name: &str, param: Tensor<B>| {
            params.push((name.to_owned(), param.clone()));
            Ok(param)
        })?;
        Ok(params)
    }

    /// How many values the parameters hold.
    fn num_params(&self) -> Result<usize> {
        Ok(self.params()?.iter().map(|(_, param)| param.shape().num_elements()).sum())
    }

    /// The module with every parameter on `device`.
    fn moved_to(self, device: &(impl DeviceOf<B> + ?Sized)) -> Result<Self> {
        self.map_params("", &mut |_: &str, param: Tensor<B>| Tensor::to_device(&param, device))
    }

    /// The module with every parameter in `dtype`.
    fn cast_to(self, dtype: DType) -> Result<Self> {
        self.map_params("", &mut |_: &str, param: Tensor<B>| Tensor::cast(&param, dtype))
    }

    /// The module with every parameter a leaf whose gradient `backward` reports.
    fn tracked(self) -> Result<Self>
    where
        B: AutodiffBackend,
    {
        self.map_params("", &mut |_: &str, param: Tensor<B>| Tensor::require_grad(&param))
    }

    /// The module with every parameter cut from any graph.
    fn detached(self) -> Result<Self>
    where
        B: AutodiffBackend,
    {
        self.map_params("", &mut |_: &str, param: Tensor<B>| Tensor::detach(&param))
    }
}

impl<B: Backend, M: Module<B> + Clone> ModuleExt<B> for M {}

/// `impl Module<B>` for a struct of modules, generic over `B: Backend`: `module!(Mlp { fc1, fc2 })`. Each listed
/// field is a module named after it; the others (sizes, options) are kept as they are.
#[macro_export]
macro_rules! module {
    ($name:ident { $($field:ident),* $(,)? }) => {
        impl<B: ::dispatch_core::Backend> $crate::Module<B> for $name<B> {
            // `..self` keeps the fields that are not modules; with none, it is needless but harmless.
            #[allow(clippy::needless_update)]
            fn map_params(
                self,
                name: &str,
                mapper: &mut dyn $crate::ParamMapper<B>,
            ) -> ::dispatch_core::Result<Self> {
                Ok(Self {
                    $($field: $crate::Module::map_params(self.$field, &$crate::join_name(name, stringify!($field)), mapper)?,)*
                    ..self
                })
            }
        }
    };
}
