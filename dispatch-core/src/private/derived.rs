//! The ops a derived enum's backend implements itself rather than sending them to one arm (`=> derived` in the op
//! list), and its `AutodiffBackend` impl.

use std::marker::PhantomData;

use super::fields::to_device_would_cut_the_graph;
use super::route::{Arm, GradientsOf, Routes, Visit, VisitDevice, VisitFloat};
use crate::backend::Backend;
use crate::error::{Error, Result};
use crate::gradients::{Gradients, TensorId};

/// Within one arm, the arm's own `to_device` (`Autodiff`'s records the move, so gradients flow back); to another
/// arm, through host memory, keeping the dtype. A tensor that records an autodiff graph may not leave its arm: it would arrive
/// untracked, and its gradient would be lost without a word.
#[inline]
pub fn to_device<B: Routes>(tensor: &B::FloatTensor, device: &B::Device) -> Result<B::FloatTensor> {
    B::route_device(device, ToDevice::<B> { tensor, device })
}

struct ToDevice<'a, B: Backend> {
    tensor: &'a B::FloatTensor,
    device: &'a B::Device,
}

impl<B: Routes> Visit<B> for ToDevice<'_, B> {
    type Output = Result<B::FloatTensor>;
}

impl<B: Routes> VisitDevice<B> for ToDevice<'_, B> {
    fn visit<A: Arm<B>>(self, target: &<A::Backend as Backend>::Device) -> Self::Output {
        if let Some(same_arm) = A::float(self.tensor) {
            return Ok(A::wrap_float(<A::Backend as Backend>::to_device(same_arm, target)?));
        }
        if B::route_float(self.tensor, RecordsGraph(PhantomData)) {
            return Err(to_device_would_cut_the_graph(B::device(self.tensor), self.device));
        }
        // In `f64`, exact for every dtype, and back in the tensor's own.
        let (data, shape, dtype) = (B::to_f64_vec(self.tensor)?, B::shape(self.tensor), B::dtype(self.tensor));
        Ok(A::wrap_float(<A::Backend as Backend>::from_f64_vec(data, shape, dtype, target)?))
    }
}

/// Declares the cross-arm move of a kind of tensor that records no graph: within one arm, the arm's own move; to
/// another arm, through host memory.
macro_rules! to_device_without_graph {
    ($(#[$doc:meta])* fn $name:ident, $visitor:ident, $tensor:ident, $take:ident, $wrap:ident, $to_vec:ident, $shape:ident, $from_vec:ident, $move:ident) => {
        $(#[$doc])*
        #[inline]
        pub fn $name<B: Routes>(tensor: &B::$tensor, device: &B::Device) -> Result<B::$tensor> {
            B::route_device(device, $visitor::<B> { tensor })
        }

        struct $visitor<'a, B: Backend> {
            tensor: &'a B::$tensor,
        }

        impl<B: Routes> Visit<B> for $visitor<'_, B> {
            type Output = Result<B::$tensor>;
        }

        impl<B: Routes> VisitDevice<B> for $visitor<'_, B> {
            fn visit<A: Arm<B>>(self, target: &<A::Backend as Backend>::Device) -> Self::Output {
                if let Some(same_arm) = A::$take(self.tensor) {
                    return Ok(A::$wrap(<A::Backend as Backend>::$move(same_arm, target)?));
                }
                let (data, shape) = (B::$to_vec(self.tensor)?, B::$shape(self.tensor));
                Ok(A::$wrap(<A::Backend as Backend>::$from_vec(data, shape, target)?))
            }
        }
    };
}

to_device_without_graph! {
    /// `int_to_device`: within one arm, the arm's own; to another arm, through host memory.
    fn int_to_device, IntToDevice, IntTensor, int, wrap_int, int_to_vec, int_shape, int_from_vec, int_to_device
}

to_device_without_graph! {
    /// `bool_to_device`: within one arm, the arm's own; to another arm, through host memory.
    fn bool_to_device, BoolToDevice, BoolTensor, bool, wrap_bool, bool_to_vec, bool_shape, bool_from_vec, bool_to_device
}

/// Whether a tensor records an autodiff graph.
struct RecordsGraph<B>(PhantomData<fn() -> B>);

impl<B: Backend> Visit<B> for RecordsGraph<B> {
    type Output = bool;
}

impl<B: Backend> VisitFloat<B> for RecordsGraph<B> {
    #[inline]
    fn visit<A: Arm<B>>(self, tensor: &<A::Backend as Backend>::FloatTensor) -> bool {
        A::Gradients::tensor_id(tensor).is_some()
    }
}

/// `impl AutodiffBackend` for a derived enum's backend with an `#[autodiff]` variant: its arms answer through
/// `Autodiff<P>`; the other arms record no graph, so asking them for gradients is an `Err`.
#[doc(hidden)]
#[macro_export]
macro_rules! __derived_autodiff_backend {
    ($backend:ident { float: $float:ty, result: $result:ty $(,)? }) => {
        #[automatically_derived]
        impl $crate::__private01::AutodiffBackend for $backend {
            #[inline]
            fn require_grad(tensor: &$float) -> $result {
                $crate::__private01::derived::require_grad::<Self>(tensor)
            }

            #[inline]
            fn detach(tensor: &$float) -> $result {
                $crate::__private01::derived::detach::<Self>(tensor)
            }

            #[inline]
            fn tensor_id(tensor: &$float) -> $crate::__private01::Option<$crate::__private01::TensorId> {
                $crate::__private01::derived::tensor_id::<Self>(tensor)
            }

            fn backward(loss: &$float) -> $crate::__private01::Result<$crate::__private01::Gradients<$backend>> {
                $crate::__private01::derived::backward::<Self>(loss)
            }

            fn backward_once(loss: $float) -> $crate::__private01::Result<$crate::__private01::Gradients<$backend>> {
                $crate::__private01::derived::backward_once::<Self>(loss)
            }
        }
    };
}

/// The error of a gradient op on a tensor of an arm that records no gradients.
fn not_differentiable<B: Backend>(op: &'static str, tensor: &B::FloatTensor) -> Error {
    not_differentiable_on::<B>(op, &B::device(tensor))
}

fn not_differentiable_on<B: Backend>(op: &'static str, device: &B::Device) -> Error {
    Error::NotDifferentiable { op, device: device.to_string() }
}

/// `AutodiffBackend::require_grad`: an `Err` on an arm that records no gradients.
pub fn require_grad<B: Routes>(tensor: &B::FloatTensor) -> Result<B::FloatTensor> {
    B::route_float(tensor, Gradient::<B> { op: GradientOp::RequireGrad, tensor })
}

/// `AutodiffBackend::detach`: the tensor itself on an arm that records no gradients.
pub fn detach<B: Routes>(tensor: &B::FloatTensor) -> Result<B::FloatTensor> {
    B::route_float(tensor, Gradient::<B> { op: GradientOp::Detach, tensor })
}

/// `AutodiffBackend::tensor_id`: `None` on an arm that records no gradients.
pub fn tensor_id<B: Routes>(tensor: &B::FloatTensor) -> Option<TensorId> {
    B::route_float(tensor, TensorIdOf::<B>(PhantomData))
}

/// `AutodiffBackend::backward`: an `Err` on an arm that records no gradients.
pub fn backward<B: Routes>(loss: &B::FloatTensor) -> Result<Gradients<B>> {
    B::route_float(loss, Backward::<B> { loss })
}

/// `AutodiffBackend::backward_once`: an `Err` on an arm that records no gradients.
///
/// A route lends the arm's tensor, and a pass over a borrowed loss could release nothing (the loss would hold the
/// graph's root). So the route only hands back the pass, over a handle cloned from the arm's tensor, and `loss` is
/// dropped before it runs: the pass then holds the root alone, unless a clone of the loss lives elsewhere.
pub fn backward_once<B: Routes>(loss: B::FloatTensor) -> Result<Gradients<B>> {
    let device = B::device(&loss);
    let pass = B::route_float(&loss, BackwardOnce::<B>(PhantomData));
    drop(loss);
    pass().unwrap_or_else(|| Err(not_differentiable_on::<B>("backward", &device)))
}

#[derive(Clone, Copy)]
enum GradientOp {
    RequireGrad,
    Detach,
}

struct Gradient<'a, B: Backend> {
    op: GradientOp,
    tensor: &'a B::FloatTensor,
}

impl<B: Backend> Visit<B> for Gradient<'_, B> {
    type Output = Result<B::FloatTensor>;
}

impl<B: Backend> VisitFloat<B> for Gradient<'_, B> {
    fn visit<A: Arm<B>>(self, inner: &<A::Backend as Backend>::FloatTensor) -> Self::Output {
        match self.op {
            GradientOp::RequireGrad => match A::Gradients::require_grad(inner) {
                Some(tracked) => Ok(A::wrap_float(tracked?)),
                None => Err(not_differentiable::<B>("require_grad", self.tensor)),
            },
            GradientOp::Detach => match A::Gradients::detach(inner) {
                Some(detached) => Ok(A::wrap_float(detached?)),
                None => Ok(self.tensor.clone()),
            },
        }
    }
}

struct TensorIdOf<B>(PhantomData<fn() -> B>);

impl<B: Backend> Visit<B> for TensorIdOf<B> {
    type Output = Option<TensorId>;
}

impl<B: Backend> VisitFloat<B> for TensorIdOf<B> {
    #[inline]
    fn visit<A: Arm<B>>(self, inner: &<A::Backend as Backend>::FloatTensor) -> Self::Output {
        A::Gradients::tensor_id(inner)
    }
}

struct Backward<'a, B: Backend> {
    loss: &'a B::FloatTensor,
}

impl<B: Backend> Visit<B> for Backward<'_, B> {
    type Output = Result<Gradients<B>>;
}

impl<B: Backend> VisitFloat<B> for Backward<'_, B> {
    fn visit<A: Arm<B>>(self, inner: &<A::Backend as Backend>::FloatTensor) -> Self::Output {
        match A::Gradients::backward_into::<B>(inner, A::wrap_float) {
            Some(gradients) => gradients,
            None => Err(not_differentiable::<B>("backward", self.loss)),
        }
    }
}

/// The pass of `backward_once` on the loss's arm, to run once the loss is dropped: `None` on an arm that records no
/// gradients.
type PendingPass<B> = Box<dyn FnOnce() -> Option<Result<Gradients<B>>>>;

struct BackwardOnce<B>(PhantomData<fn() -> B>);

impl<B: Backend> Visit<B> for BackwardOnce<B> {
    type Output = PendingPass<B>;
}

impl<B: Backend> VisitFloat<B> for BackwardOnce<B> {
    fn visit<A: Arm<B>>(self, inner: &<A::Backend as Backend>::FloatTensor) -> Self::Output {
        let loss = inner.clone();
        Box::new(move || A::Gradients::backward_once_into::<B>(loss, A::wrap_float))
    }
}
