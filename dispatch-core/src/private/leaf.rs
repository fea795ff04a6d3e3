//! The traits through which generated code reaches each variant's backend: every op of `Backend`, spanned on the
//! user's backend path, so a path that is not a backend is one error there.

use std::fmt::Debug;

use super::*;

/// Declares a trait with every op of `Backend` (no supertraits) and its blanket impl forwarding to a backend.
///
/// The expansion calls a leaf's ops through such a trait, spanned on the user's backend path: a path that is not a
/// backend then fails one bound, reported once with the trait's message, where calling `Backend` directly would
/// also report each of its supertraits at each call.
macro_rules! leaf_trait {
    (
        $(#[$attr:meta])*
        trait $name:ident for $b:ident: $bound:path => $backend:ty;
        { $($extra_declarations:tt)* }
        { $($extra_definitions:tt)* }
        $(fn $op:ident($($arg:ident: $ty:ty),*) -> $ret:ty;)*
    ) => {
        $(#[$attr])*
        pub trait $name {
            type Tensor: Clone + Debug + Send + Sync + 'static;
            type Device;
            $(fn $op($($arg: $ty),*) -> $ret;)*
            $($extra_declarations)*

            /// The tensor enums' `Clone` and `Debug` go through these: `Clone::clone` of the tensor type itself
            /// would need its impl, which for a path that is no backend may be one more error.
            #[inline]
            fn clone_tensor(tensor: &Self::Tensor) -> Self::Tensor {
                tensor.clone()
            }

            fn debug_tensor(tensor: &Self::Tensor) -> &dyn Debug {
                tensor
            }
        }

        #[diagnostic::do_not_recommend]
        impl<$b: $bound> $name for $b {
            type Tensor = <$backend as Backend>::FloatTensor;
            type Device = <$backend as Backend>::Device;
            $(
                #[inline]
                fn $op($($arg: $ty),*) -> $ret {
                    <$backend as Backend>::$op($($arg),*)
                }
            )*
            $($extra_definitions)*
        }
    };
}

/// Passes the list of `Backend`'s ops to `leaf_trait!`, after the given head.
macro_rules! with_backend_ops {
    ($($head:tt)*) => {
        leaf_trait! {
            $($head)*
            fn from_vec(data: Vec<f32>, shape: Shape, device: &Self::Device) -> Result<Self::Tensor>;
            fn full(shape: Shape, value: f32, device: &Self::Device) -> Result<Self::Tensor>;
            fn random_uniform(shape: Shape, low: f32, high: f32, seed: u64, device: &Self::Device)
                -> Result<Self::Tensor>;
            fn random_normal(shape: Shape, mean: f32, std: f32, seed: u64, device: &Self::Device)
                -> Result<Self::Tensor>;
            fn to_vec(tensor: &Self::Tensor) -> Result<Vec<f32>>;
            fn shape(tensor: &Self::Tensor) -> Shape;
            fn device(tensor: &Self::Tensor) -> Self::Device;
            fn to_device(tensor: &Self::Tensor, device: &Self::Device) -> Result<Self::Tensor>;
            fn add(lhs: &Self::Tensor, rhs: &Self::Tensor) -> Result<Self::Tensor>;
            fn sub(lhs: &Self::Tensor, rhs: &Self::Tensor) -> Result<Self::Tensor>;
            fn mul(lhs: &Self::Tensor, rhs: &Self::Tensor) -> Result<Self::Tensor>;
            fn div(lhs: &Self::Tensor, rhs: &Self::Tensor) -> Result<Self::Tensor>;
            fn matmul(lhs: &Self::Tensor, rhs: &Self::Tensor) -> Result<Self::Tensor>;
            fn add_scalar(tensor: &Self::Tensor, scalar: f32) -> Result<Self::Tensor>;
            fn mul_scalar(tensor: &Self::Tensor, scalar: f32) -> Result<Self::Tensor>;
            fn powf_scalar(tensor: &Self::Tensor, exponent: f32) -> Result<Self::Tensor>;
            fn greater_scalar(tensor: &Self::Tensor, threshold: f32) -> Result<Self::Tensor>;
            fn neg(tensor: &Self::Tensor) -> Result<Self::Tensor>;
            fn exp(tensor: &Self::Tensor) -> Result<Self::Tensor>;
            fn log(tensor: &Self::Tensor) -> Result<Self::Tensor>;
            fn relu(tensor: &Self::Tensor) -> Result<Self::Tensor>;
            fn sigmoid(tensor: &Self::Tensor) -> Result<Self::Tensor>;
            fn tanh(tensor: &Self::Tensor) -> Result<Self::Tensor>;
            fn swap_dims(tensor: &Self::Tensor, dim0: usize, dim1: usize) -> Result<Self::Tensor>;
            fn reshape(tensor: &Self::Tensor, shape: Shape) -> Result<Self::Tensor>;
            fn narrow(tensor: &Self::Tensor, axis: usize, start: usize, len: usize) -> Result<Self::Tensor>;
            fn cat(tensors: &[Self::Tensor], axis: usize) -> Result<Self::Tensor>;
            fn sum(tensor: &Self::Tensor) -> Result<Self::Tensor>;
            fn mean(tensor: &Self::Tensor) -> Result<Self::Tensor>;
            fn sum_dim(tensor: &Self::Tensor, axis: usize) -> Result<Self::Tensor>;
            fn mean_dim(tensor: &Self::Tensor, axis: usize) -> Result<Self::Tensor>;
            fn log_softmax(tensor: &Self::Tensor, axis: usize) -> Result<Self::Tensor>;
            fn argmax(tensor: &Self::Tensor, axis: usize) -> Result<Self::Tensor>;
            fn host_op(tensor: &Self::Tensor, op: HostOpRef) -> Result<Self::Tensor>;
        }
    };
}

with_backend_ops! {
    /// A `#[backend(P)]` leaf: `P` itself.
    #[diagnostic::on_unimplemented(
        message = "`{Self}` is not a dispatch backend",
        label = "not a `dispatch_core::Backend`",
        note = "a backend implements `dispatch_core::Backend`, like `dispatch_core::backends::Candle` or `NdArray`"
    )]
    trait Leaf for B: Backend => B;
    {}
    {}
}

with_backend_ops! {
    /// An `#[autodiff]` leaf over the base backend `P`: `Autodiff<P>`.
    #[diagnostic::on_unimplemented(
        message = "`{Self}` cannot be wrapped in `Autodiff`: it is not a base backend",
        label = "the `#[autodiff]` variant wraps every `#[backend]` variant in `Autodiff`",
        note = "an autodiff backend inside an autodiff backend is not allowed; name the base backend, e.g. `Candle`",
        note = "a third-party backend opts in with `impl dispatch_core::BaseBackend for MyBackend {{}}`"
    )]
    trait AutodiffLeaf for B: BaseBackend => Autodiff<B>;
    {
        fn require_grad(tensor: &Self::Tensor) -> Result<Self::Tensor>;
        fn detach(tensor: &Self::Tensor) -> Result<Self::Tensor>;
        fn tensor_id(tensor: &Self::Tensor) -> Option<TensorId>;
        /// The gradients of `loss`, each put into the dispatch backend's tensor by `wrap`.
        fn backward_into<C: Backend>(
            loss: &Self::Tensor,
            wrap: impl FnMut(Self::Tensor) -> C::FloatTensor,
        ) -> Result<Gradients<C>>;
    }
    {
        #[inline]
        fn require_grad(tensor: &Self::Tensor) -> Result<Self::Tensor> {
            <Autodiff<B> as AutodiffBackend>::require_grad(tensor)
        }

        #[inline]
        fn detach(tensor: &Self::Tensor) -> Result<Self::Tensor> {
            <Autodiff<B> as AutodiffBackend>::detach(tensor)
        }

        #[inline]
        fn tensor_id(tensor: &Self::Tensor) -> Option<TensorId> {
            <Autodiff<B> as AutodiffBackend>::tensor_id(tensor)
        }

        fn backward_into<C: Backend>(
            loss: &Self::Tensor,
            wrap: impl FnMut(Self::Tensor) -> C::FloatTensor,
        ) -> Result<Gradients<C>> {
            <Autodiff<B> as AutodiffBackend>::backward(loss).map(|gradients| gradients.map_backend::<C>(wrap))
        }
    }
}
