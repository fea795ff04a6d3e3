//! `Autodiff<B>`: reverse-mode automatic differentiation over any base backend `B`.
//!
//! Every op the op list marks `tracked` or `forwarded` runs `B`'s op on the inner tensors (its native kernel where
//! `B` has one: candle's convolution, ndarray's pooling loops), so its values are `B`'s. An op marked `composed`
//! runs its default over the ops here, so where `B` computes it with a kernel of its own, the two agree to rounding,
//! not bit for bit. When an input depends on a tensor marked with `require_grad`, an op also records a graph node
//! holding its backward rule, written in `B`'s ops, and what that rule needs. `backward` walks the nodes the loss
//! depends on in reverse topological order.
//!
//! An op given its first operand (`add_into`) hands `B` the inner tensor, which `B` may write over unless the rule
//! keeps it (then it is shared, and `B` writes new memory). The backward rules hand `B` each gradient at its last use
//! the same way, and the pass adds a node's gradients into the memory of the first.

mod broadcast;
mod decorator;
mod graph;
pub mod rules;
mod tensor;

pub use decorator::{Autodiff, BaseBackend};
pub use tensor::AutodiffTensor;

use std::sync::Arc;

use crate::backend::Backend;
use crate::error::{Error, Result};
use crate::gradients::{AutodiffBackend, Gradients, TensorId};

impl<B: BaseBackend> Backend for Autodiff<B> {
    type Device = B::Device;
    type FloatTensor = AutodiffTensor<B>;
    // Int and bool tensors record no graph: they are `B`'s own.
    type IntTensor = B::IntTensor;
    type BoolTensor = B::BoolTensor;

    fn name() -> String {
        format!("autodiff<{}>", B::name())
    }

    // Every op as the op list marks it: `tracked` ops call their rule, `forwarded` ones `B`'s op (new float tensors
    // are untracked leaves), `composed` ones keep their default over the ops here.
    crate::for_each_op! { __autodiff_methods { B, [crate::backends::autodiff::rules] } }
}

/// The callback that writes `Autodiff`'s impl from the op list: `{ base backend, [path of the rules module] }`.
#[doc(hidden)]
#[macro_export]
macro_rules! __autodiff_methods {
    (
        { $base:ident, $rules:tt }
        $($(#[$doc:meta])* fn $op:ident($($param:ident: $kind:tt),*) -> $output:tt $(= $default:ident)? $(=> $derived:ident)?, $autodiff:ident;)*
    ) => {
        $($crate::__autodiff_method! { $base, $rules, $autodiff fn $op($($param: $kind),*) -> $output })*
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __autodiff_method {
    ($base:ident, [$($rules:tt)*], tracked fn $op:ident($($param:ident: $kind:tt),*) -> $output:tt) => {
        fn $op($($param: $crate::__op_param_type!(Self: $kind)),*) -> $crate::__op_output_type!(Self: $output) {
            $($rules)*::$op($($param),*)
        }
    };
    ($base:ident, $rules:tt, forwarded fn $op:ident($($param:ident: $kind:tt),*) -> $output:tt) => {
        fn $op($($param: $crate::__op_param_type!(Self: $kind)),*) -> $crate::__op_output_type!(Self: $output) {
            $crate::__autodiff_forwarded_output!(
                $output,
                <$base as $crate::Backend>::$op($($crate::__autodiff_forwarded_arg!($kind, $param)),*)
            )
        }
    };
    ($base:ident, $rules:tt, composed fn $op:ident($($param:ident: $kind:tt),*) -> $output:tt) => {};
}

/// A forwarded op's argument for the base backend: a float tensor's inner tensor, anything else as it is.
#[doc(hidden)]
#[macro_export]
macro_rules! __autodiff_forwarded_arg {
    (Float, $param:ident) => {
        $param.primitive()
    };
    (Owned, $param:ident) => {
        $param.into_primitive()
    };
    ($kind:tt, $param:ident) => {
        $param
    };
}

/// A forwarded op's output: a new float tensor is an untracked leaf, anything else is the base backend's.
#[doc(hidden)]
#[macro_export]
macro_rules! __autodiff_forwarded_output {
    (Float, $call:expr) => {
        $call.map($crate::backends::AutodiffTensor::detached)
    };
    ($output:tt, $call:expr) => {
        $call
    };
}

impl<B: BaseBackend> AutodiffBackend for Autodiff<B> {
    fn require_grad(tensor: &Self::FloatTensor) -> Result<Self::FloatTensor> {
        Ok(tensor.to_leaf())
    }

    fn detach(tensor: &Self::FloatTensor) -> Result<Self::FloatTensor> {
        Ok(AutodiffTensor::detached(tensor.primitive().clone()))
    }

    fn tensor_id(tensor: &Self::FloatTensor) -> Option<TensorId> {
        tensor.id()
    }

    /// A loss that records no graph depends on no tracked leaf: its gradients are empty.
    fn backward(loss: &Self::FloatTensor) -> Result<Gradients<Self>> {
        // The pass shares the root with `loss`, which keeps the whole graph reachable for another pass.
        gradients_of(loss.primitive(), loss.node().cloned())
    }

    /// The pass owns the root, so each node only it reaches is dropped, with what its rule saved, once the rule
    /// has run.
    fn backward_once(loss: Self::FloatTensor) -> Result<Gradients<Self>> {
        let (primitive, root) = loss.into_parts();
        gradients_of(&primitive, root)
    }
}

/// The gradients of the one-element `loss` whose graph node is `root`.
fn gradients_of<B: BaseBackend>(
    loss: &B::FloatTensor,
    root: Option<Arc<graph::Node<B>>>,
) -> Result<Gradients<Autodiff<B>>> {
    let shape = B::shape(loss);
    if shape.num_elements() != 1 {
        return Err(Error::unexpected_shape("backward", "a one-element loss", &shape));
    }
    let mut gradients = Gradients::new();
    if let Some(root) = root {
        let seed = B::full(shape, 1.0, B::dtype(loss), &B::device(loss))?;
        for (id, gradient) in graph::backward(root, seed)? {
            gradients.insert(id, AutodiffTensor::detached(gradient));
        }
    }
    Ok(gradients)
}
