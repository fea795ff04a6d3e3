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
/// A tensor is a module of one parameter; `Option` and `Vec` of modules are modules (`name.0`, `name.1`, ... for a
/// `Vec`). A struct of modules gets its impl from `#[derive(Module)]`, which visits every field in declaration
/// order, each named after it (a tuple struct's by its index); a field that is not a parameter (a size, an option,
/// a probability) is marked `#[module(skip)]` and kept as it is:
///
/// ```
/// use dispatch_core::backends::{NdArray, NdArrayDevice};
/// use dispatch_core::{Backend, DType, Tensor};
/// use dispatch_nn::layers::{LayerNorm, Linear};
/// use dispatch_nn::{Module, ModuleExt};
///
/// #[derive(Clone, Debug, Module)]
/// struct Regressor<B: Backend> {
///     input: Linear<B>,
///     norms: Vec<LayerNorm<B>>,
///     scale: Option<Tensor<B>>,
///     #[module(skip)]
///     width: usize,
/// }
///
/// # fn main() -> dispatch_core::Result<()> {
/// let (dtype, device) = (DType::F32, &NdArrayDevice);
/// let model = Regressor::<NdArray> {
///     input: Linear::new(3, 4, true, 0, dtype, device)?,
///     norms: vec![LayerNorm::new(4, dtype, device)?; 2],
///     scale: None,
///     width: 4,
/// };
/// let names: Vec<String> = model.params()?.into_iter().map(|(name, _)| name).collect();
/// assert_eq!(
///     names,
///     ["input.weight", "input.bias", "norms.0.gamma", "norms.0.beta", "norms.1.gamma", "norms.1.beta"]
/// );
/// # Ok(())
/// # }
/// ```
///
/// A field of a type that is not a module, unmarked, is a compile error at that field: nothing is left out of
/// training or saving without a word. The struct is generic over its backend: the type parameter bounded by
/// `Backend` (or `AutodiffBackend`, `BaseBackend`), else its only type parameter; other generics pass through,
/// and a field whose type names one (`Vec<M>`) puts `Vec<M>: Module<B>` in the impl's where clause.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a module of `{B}`'s parameters",
    note = "a struct of modules gets its impl from `#[derive(Module)]`"
)]
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
