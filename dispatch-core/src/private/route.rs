//! How a derived enum's backend sends each op to the backend of one variant.
//!
//! The derive knows no op. For each concrete backend behind the enum (an *arm*: a `#[backend(P)]` variant's `P`, or
//! `Autodiff<P>` for each base `P` of an `#[autodiff]` variant) it implements [`Arm`], which says how that backend's
//! tensors and devices sit in the enum's; and it implements [`Routes`], one exhaustive `match` per kind of operand
//! that picks the arm. Every op is then the same generic code, expanded here from the op list: a [`Visit`] per op
//! that takes its operands out of the enum's types through the arm, calls the arm's backend and puts the result
//! back. The arms are types, so each call is monomorphised to the concrete backend and inlined.

use crate::backend::Backend;
use crate::error::Result;
use crate::gradients::{AutodiffBackend, Gradients, TensorId};
use std::marker::PhantomData;

/// One concrete backend behind a derived enum's backend `B`, and how its tensors and devices sit in `B`'s.
pub trait Arm<B: Backend> {
    /// The concrete backend.
    type Backend: Backend;
    /// [`RecordsGradients`] for the arms of an `#[autodiff]` variant, else [`NoGradients`].
    type Gradients: GradientsOf<Self::Backend>;

    /// The arm's own tensor, if `tensor` lives on this arm.
    fn float(tensor: &B::FloatTensor) -> Option<&<Self::Backend as Backend>::FloatTensor>;
    /// The arm's tensor as one of `B`.
    fn wrap_float(tensor: <Self::Backend as Backend>::FloatTensor) -> B::FloatTensor;
    /// The arm's own int tensor, if `tensor` lives on this arm.
    fn int(tensor: &B::IntTensor) -> Option<&<Self::Backend as Backend>::IntTensor>;
    /// The arm's int tensor as one of `B`.
    fn wrap_int(tensor: <Self::Backend as Backend>::IntTensor) -> B::IntTensor;
    /// The arm's own bool tensor, if `tensor` lives on this arm.
    fn bool(tensor: &B::BoolTensor) -> Option<&<Self::Backend as Backend>::BoolTensor>;
    /// The arm's bool tensor as one of `B`.
    fn wrap_bool(tensor: <Self::Backend as Backend>::BoolTensor) -> B::BoolTensor;
    /// The arm's own device, if `device` is one of this arm's.
    fn device(device: &B::Device) -> Option<&<Self::Backend as Backend>::Device>;
    /// The arm's device as one of `B`.
    fn wrap_device(device: <Self::Backend as Backend>::Device) -> B::Device;
}

/// What a derived enum's backend implements: the arm an operand lives on, one `match` arm per arm.
pub trait Routes: Backend {
    /// Calls `visit` with the arm `tensor` lives on, and the arm's own tensor.
    fn route_float<V: VisitFloat<Self>>(tensor: &Self::FloatTensor, visit: V) -> V::Output;
    /// Calls `visit` with the arm the int `tensor` lives on, and the arm's own int tensor.
    fn route_int<V: VisitInt<Self>>(tensor: &Self::IntTensor, visit: V) -> V::Output;
    /// Calls `visit` with the arm the bool `tensor` lives on, and the arm's own bool tensor.
    fn route_bool<V: VisitBool<Self>>(tensor: &Self::BoolTensor, visit: V) -> V::Output;
    /// Calls `visit` with the arm `device` is a device of, and the arm's own device.
    fn route_device<V: VisitDevice<Self>>(device: &Self::Device, visit: V) -> V::Output;
}

/// An op of a derived backend `B`.
pub trait Visit<B: Backend> {
    /// What the op returns.
    type Output;
}

/// An op sent to the arm of its first tensor operand, a float tensor.
pub trait VisitFloat<B: Backend>: Visit<B> {
    /// Runs the op on arm `A`, where the first tensor operand is `routed`.
    fn visit<A: Arm<B>>(self, routed: &<A::Backend as Backend>::FloatTensor) -> Self::Output;
}

/// An op sent to the arm of its first tensor operand, an int tensor.
pub trait VisitInt<B: Backend>: Visit<B> {
    /// Runs the op on arm `A`, where the first tensor operand is `routed`.
    fn visit<A: Arm<B>>(self, routed: &<A::Backend as Backend>::IntTensor) -> Self::Output;
}

/// An op sent to the arm of its first tensor operand, a bool tensor.
pub trait VisitBool<B: Backend>: Visit<B> {
    /// Runs the op on arm `A`, where the first tensor operand is `routed`.
    fn visit<A: Arm<B>>(self, routed: &<A::Backend as Backend>::BoolTensor) -> Self::Output;
}

/// An op sent to the arm of its first operand, a float tensor it was given: the visitor holds the tensor.
pub trait VisitGiven<B: Backend>: Visit<B> {
    /// Runs the op on arm `A`, where the tensor it was given lives.
    fn visit<A: Arm<B>>(self) -> Self::Output;
}

/// Picks the arm of the tensor an op of visitor `V` is given, and answers with the op's run on that arm: the tensor
/// is borrowed only while the arm is picked, so the run can then take it.
pub struct ArmOfGiven<V>(pub PhantomData<fn() -> V>);

impl<B: Backend, V: Visit<B>> Visit<B> for ArmOfGiven<V> {
    type Output = fn(V) -> V::Output;
}

impl<B: Backend, V: VisitGiven<B>> VisitFloat<B> for ArmOfGiven<V> {
    #[inline(always)]
    fn visit<A: Arm<B>>(self, _: &<A::Backend as Backend>::FloatTensor) -> Self::Output {
        <V as VisitGiven<B>>::visit::<A>
    }
}

/// An op sent to the arm of its device.
pub trait VisitDevice<B: Backend>: Visit<B> {
    /// Runs the op on arm `A`, whose device is `routed`.
    fn visit<A: Arm<B>>(self, routed: &<A::Backend as Backend>::Device) -> Self::Output;
}

/// What an arm's backend offers for gradients: an autodiff backend's own answers, or none.
pub trait GradientsOf<X: Backend> {
    /// `Some` with the tracked tensor, `None` if the arm records no gradients.
    fn require_grad(tensor: &X::FloatTensor) -> Option<Result<X::FloatTensor>>;
    /// `Some` with the detached tensor, `None` if the arm records no gradients (the tensor records nothing).
    fn detach(tensor: &X::FloatTensor) -> Option<Result<X::FloatTensor>>;
    /// The tensor's identity in a graph; `None` if it records none.
    fn tensor_id(tensor: &X::FloatTensor) -> Option<TensorId>;
    /// `Some` with the gradients of `loss`, each put into `C`'s tensor by `wrap`; `None` if the arm records no
    /// gradients.
    fn backward_into<C: Backend>(
        loss: &X::FloatTensor,
        wrap: impl FnMut(X::FloatTensor) -> C::FloatTensor,
    ) -> Option<Result<Gradients<C>>>;
    /// As `backward_into`, consuming `loss` (`AutodiffBackend::backward_once`).
    fn backward_once_into<C: Backend>(
        loss: X::FloatTensor,
        wrap: impl FnMut(X::FloatTensor) -> C::FloatTensor,
    ) -> Option<Result<Gradients<C>>>;
}

/// The gradients of an arm that records none.
pub enum NoGradients {}

impl<X: Backend> GradientsOf<X> for NoGradients {
    #[inline]
    fn require_grad(_: &X::FloatTensor) -> Option<Result<X::FloatTensor>> {
        None
    }

    #[inline]
    fn detach(_: &X::FloatTensor) -> Option<Result<X::FloatTensor>> {
        None
    }

    #[inline]
    fn tensor_id(_: &X::FloatTensor) -> Option<TensorId> {
        None
    }

    #[inline]
    fn backward_into<C: Backend>(
        _: &X::FloatTensor,
        _: impl FnMut(X::FloatTensor) -> C::FloatTensor,
    ) -> Option<Result<Gradients<C>>> {
        None
    }

    #[inline]
    fn backward_once_into<C: Backend>(
        _: X::FloatTensor,
        _: impl FnMut(X::FloatTensor) -> C::FloatTensor,
    ) -> Option<Result<Gradients<C>>> {
        None
    }
}

/// The gradients of an arm whose backend records them: `Autodiff<P>`.
pub enum RecordsGradients {}

impl<X: AutodiffBackend> GradientsOf<X> for RecordsGradients {
    #[inline]
    fn require_grad(tensor: &X::FloatTensor) -> Option<Result<X::FloatTensor>> {
        Some(X::require_grad(tensor))
    }

    #[inline]
    fn detach(tensor: &X::FloatTensor) -> Option<Result<X::FloatTensor>> {
        Some(X::detach(tensor))
    }

    #[inline]
    fn tensor_id(tensor: &X::FloatTensor) -> Option<TensorId> {
        X::tensor_id(tensor)
    }

    fn backward_into<C: Backend>(
        loss: &X::FloatTensor,
        wrap: impl FnMut(X::FloatTensor) -> C::FloatTensor,
    ) -> Option<Result<Gradients<C>>> {
        Some(X::backward(loss).map(|gradients| gradients.map_backend::<C>(wrap)))
    }

    fn backward_once_into<C: Backend>(
        loss: X::FloatTensor,
        wrap: impl FnMut(X::FloatTensor) -> C::FloatTensor,
    ) -> Option<Result<Gradients<C>>> {
        Some(X::backward_once(loss).map(|gradients| gradients.map_backend::<C>(wrap)))
    }
}

/// The visitors of every op: `visits::add { lhs, rhs, marker }.visit::<A>()` runs `add` on arm `A`.
#[allow(non_camel_case_types)]
pub mod visits {
    // The visitors the callback declares name `Backend`, `PhantomData`, `Routes`, `Visit` and the `Visit*` traits
    // unqualified, as this file imports or defines them.
    use super::*;

    crate::for_each_op! { __op_visitors {} }
}

/// The callback that declares a visitor per op, except those a derived backend implements itself (`=> derived`).
#[doc(hidden)]
#[macro_export]
macro_rules! __op_visitors {
    ({} $($(#[$doc:meta])* fn $op:ident($($param:ident: $kind:tt),*) -> $output:tt $(= $default:ident)? $(=> $derived:ident)?, $autodiff:ident;)*) => {
        $($crate::__op_visitor! { fn $op($($param: $kind),*) -> $output $(=> $derived)? })*
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __op_visitor {
    (fn $op:ident($($param:ident: $kind:tt),*) -> $output:tt => $derived:ident) => {};
    (fn $op:ident($($param:ident: $kind:tt),*) -> $output:tt) => {
        #[doc = concat!("`", stringify!($op), "` on the arm its operands live on.")]
        pub struct $op<'a, B: Backend> {
            $(#[doc = concat!("The op's `", stringify!($param), "`.")] pub $param: $crate::__op_field_type!('a, B, $kind),)*
            /// Ties the operands' lifetime to the struct.
            pub marker: PhantomData<&'a B>,
        }

        impl<'a, B: Routes> Visit<B> for $op<'a, B> {
            type Output = $crate::__op_output_type!(B: $output);
        }

        $crate::__op_routed_by! { __op_visit_impl { $op, ($($param: $kind),*), $output } [$($param: $kind),*] $($param: $kind),* }
    };
}

/// `VisitFloat`, `VisitInt`, `VisitBool` or `VisitDevice` for the visitor of `$op`, by what it is routed by.
#[doc(hidden)]
#[macro_export]
macro_rules! __op_visit_impl {
    ({ $op:ident, ($($param:ident: $kind:tt),*), $output:tt } Device $routed:ident) => {
        $crate::__op_visit_impl!(@impl VisitDevice, Device, $op, ($($param: $kind),*), $output);
    };
    ({ $op:ident, ($($param:ident: $kind:tt),*), $output:tt } Int $routed:ident) => {
        $crate::__op_visit_impl!(@impl VisitInt, IntTensor, $op, ($($param: $kind),*), $output);
    };
    ({ $op:ident, ($($param:ident: $kind:tt),*), $output:tt } Bool $routed:ident) => {
        $crate::__op_visit_impl!(@impl VisitBool, BoolTensor, $op, ($($param: $kind),*), $output);
    };
    // The visitor holds the tensor it was given, and takes the arm's out of it.
    ({ $op:ident, ($($param:ident: $kind:tt),*), $output:tt } Owned $routed:ident) => {
        impl<'a, B: Routes> VisitGiven<B> for $op<'a, B> {
            #[inline(always)]
            fn visit<A: Arm<B>>(self) -> Self::Output {
                let Self { $($param,)* marker: _ } = self;
                $crate::__op_visit_body!(B, A, $routed, $op, ($($param: $kind),*), $output)
            }
        }
    };
    ({ $op:ident, ($($param:ident: $kind:tt),*), $output:tt } $float:tt $routed:ident) => {
        $crate::__op_visit_impl!(@impl VisitFloat, FloatTensor, $op, ($($param: $kind),*), $output);
    };
    (@impl $visit:ident, $routed_type:ident, $op:ident, ($($param:ident: $kind:tt),*), $output:tt) => {
        impl<'a, B: Routes> $visit<B> for $op<'a, B> {
            #[inline(always)]
            fn visit<A: Arm<B>>(self, routed: &<A::Backend as Backend>::$routed_type) -> Self::Output {
                let Self { $($param,)* marker: _ } = self;
                $crate::__op_visit_body!(B, A, routed, $op, ($($param: $kind),*), $output)
            }
        }
    };
}

/// The operands taken out, the arm's op called, its output put back.
#[doc(hidden)]
#[macro_export]
macro_rules! __op_visit_body {
    ($b:ident, $a:ident, $routed:ident, $op:ident, ($($param:ident: $kind:tt),*), $output:tt) => {{
        $crate::__op_operands!($b, $a, $op, $routed; first = []; $($param: $kind),*);
        $crate::__op_output!($b, $a, $output, <$a::Backend as Backend>::$op($($param),*))
    }};
}

/// Rebinds each operand of an op to the arm's own. The first tensor operand (else the device) is the one the arm
/// was picked from, `$routed`; a later tensor or device on another arm is a `DeviceMismatch` naming the first's
/// device and its own.
#[doc(hidden)]
#[macro_export]
macro_rules! __op_operands {
    ($b:ident, $a:ident, $op:ident, $routed:ident; first = [$($first:tt)*];) => {};
    ($b:ident, $a:ident, $op:ident, $routed:ident; first = [$($first:tt)*]; $param:ident: Float $(, $rest:ident: $kind:tt)*) => {
        $crate::__op_operands!(@tensor $b, $a, $op, $routed, float, device; first = [$($first)*]; $param $(, $rest: $kind)*);
    };
    ($b:ident, $a:ident, $op:ident, $routed:ident; first = [$($first:tt)*]; $param:ident: Int $(, $rest:ident: $kind:tt)*) => {
        $crate::__op_operands!(@tensor $b, $a, $op, $routed, int, int_device; first = [$($first)*]; $param $(, $rest: $kind)*);
    };
    ($b:ident, $a:ident, $op:ident, $routed:ident; first = [$($first:tt)*]; $param:ident: Bool $(, $rest:ident: $kind:tt)*) => {
        $crate::__op_operands!(@tensor $b, $a, $op, $routed, bool, bool_device; first = [$($first)*]; $param $(, $rest: $kind)*);
    };
    // The first tensor operand: the arm's own is `$routed`.
    (@tensor $b:ident, $a:ident, $op:ident, $routed:ident, $take:ident, $device_of:ident; first = []; $param:ident $(, $rest:ident: $kind:tt)*) => {
        let _outer = $param;
        let $param = $routed;
        $crate::__op_operands!($b, $a, $op, $routed; first = [<$b as Backend>::$device_of(_outer)]; $($rest: $kind),*);
    };
    (@tensor $b:ident, $a:ident, $op:ident, $routed:ident, $take:ident, $device_of:ident; first = [$($first:tt)+]; $param:ident $(, $rest:ident: $kind:tt)*) => {
        let Some($param) = <$a as Arm<$b>>::$take($param) else {
            let other = <$b as Backend>::$device_of($param);
            return Err($crate::Error::device_mismatch(stringify!($op), $($first)+, other));
        };
        $crate::__op_operands!($b, $a, $op, $routed; first = [$($first)+]; $($rest: $kind),*);
    };
    // Given: the arm's tensor is cloned out of the enum's, and the enum's dropped, so the arm's tensor then has no
    // more holders than the caller's had.
    ($b:ident, $a:ident, $op:ident, $routed:ident; first = []; $param:ident: Owned $(, $rest:ident: $kind:tt)*) => {
        let Some(_arm_tensor) = <$a as Arm<$b>>::float(&$param).map(::core::clone::Clone::clone) else {
            // Unreachable: the arm was picked by this tensor.
            let device = <$b as Backend>::device(&$param);
            return Err($crate::Error::device_mismatch(stringify!($op), &device, &device));
        };
        ::core::mem::drop($param);
        let $param = _arm_tensor;
        $crate::__op_operands!($b, $a, $op, $routed; first = [
            <$a as Arm<$b>>::wrap_device(<<$a as Arm<$b>>::Backend as Backend>::device(&$param))
        ]; $($rest: $kind),*);
    };
    // Routed by its first element; a slice has no tensor operand after it.
    ($b:ident, $a:ident, $op:ident, $routed:ident; first = []; $param:ident: [Float] $(, $rest:ident: $kind:tt)*) => {
        // The first element is `$routed`'s tensor: taken out again with the others.
        let (tensors, _) = ($param, $routed);
        let mut parts = $crate::__private01::Vec::with_capacity(tensors.len());
        for tensor in tensors {
            let Some(part) = <$a as Arm<$b>>::float(tensor) else {
                let first = tensors.first().unwrap_or(tensor);
                let (first, other) = (<$b as Backend>::device(first), <$b as Backend>::device(tensor));
                return Err($crate::Error::device_mismatch(stringify!($op), first, other));
            };
            parts.push(::core::clone::Clone::clone(part));
        }
        let $param = parts.as_slice();
        $crate::__op_operands!($b, $a, $op, $routed; first = []; $($rest: $kind),*);
    };
    ($b:ident, $a:ident, $op:ident, $routed:ident; first = []; $param:ident: Device $(, $rest:ident: $kind:tt)*) => {
        let (_, $param) = ($param, $routed);
        $crate::__op_operands!($b, $a, $op, $routed; first = []; $($rest: $kind),*);
    };
    ($b:ident, $a:ident, $op:ident, $routed:ident; first = [$($first:tt)+]; $param:ident: Device $(, $rest:ident: $kind:tt)*) => {
        let Some($param) = <$a as Arm<$b>>::device($param) else {
            return Err($crate::Error::device_mismatch(stringify!($op), $($first)+, &*$param));
        };
        $crate::__op_operands!($b, $a, $op, $routed; first = [$($first)+]; $($rest: $kind),*);
    };
    ($b:ident, $a:ident, $op:ident, $routed:ident; first = [$($first:tt)*]; $param:ident: $plain:tt $(, $rest:ident: $kind:tt)*) => {
        $crate::__op_operands!($b, $a, $op, $routed; first = [$($first)*]; $($rest: $kind),*);
    };
}

/// The arm's output as the derived backend's: tensors and devices put back into the enum's types.
#[doc(hidden)]
#[macro_export]
macro_rules! __op_output {
    // With `?` rather than `Result::map`: with `map`, LLVM copied the result through a store-forwarding stall that
    // made a 1-element candle add 4-7% slower than the backend called directly (BENCHMARKS.md, group 1).
    ($b:ident, $a:ident, Float, $call:expr) => {
        Ok(<$a as Arm<$b>>::wrap_float($call?))
    };
    ($b:ident, $a:ident, Int, $call:expr) => {
        Ok(<$a as Arm<$b>>::wrap_int($call?))
    };
    ($b:ident, $a:ident, Bool, $call:expr) => {
        Ok(<$a as Arm<$b>>::wrap_bool($call?))
    };
    ($b:ident, $a:ident, [Device], $call:expr) => {
        <$a as Arm<$b>>::wrap_device($call)
    };
    ($b:ident, $a:ident, $output:tt, $call:expr) => {
        $call
    };
}

/// Finds what an op is sent by: its first tensor operand, else its device. Calls
/// `$crate::$callback! { context... Float name }` (or `[Float] name`, `Owned name`, `Device name`).
#[doc(hidden)]
#[macro_export]
macro_rules! __op_routed_by {
    ($callback:ident { $($context:tt)* } [$($all:tt)*] $param:ident: Float $(, $rest:ident: $kind:tt)*) => {
        $crate::$callback! { { $($context)* } Float $param }
    };
    ($callback:ident { $($context:tt)* } [$($all:tt)*] $param:ident: [Float] $(, $rest:ident: $kind:tt)*) => {
        $crate::$callback! { { $($context)* } [Float] $param }
    };
    ($callback:ident { $($context:tt)* } [$($all:tt)*] $param:ident: Owned $(, $rest:ident: $kind:tt)*) => {
        $crate::$callback! { { $($context)* } Owned $param }
    };
    ($callback:ident { $($context:tt)* } [$($all:tt)*] $param:ident: Int $(, $rest:ident: $kind:tt)*) => {
        $crate::$callback! { { $($context)* } Int $param }
    };
    ($callback:ident { $($context:tt)* } [$($all:tt)*] $param:ident: Bool $(, $rest:ident: $kind:tt)*) => {
        $crate::$callback! { { $($context)* } Bool $param }
    };
    ($callback:ident { $($context:tt)* } [$($all:tt)*] $param:ident: $other:tt $(, $rest:ident: $kind:tt)*) => {
        $crate::__op_routed_by! { $callback { $($context)* } [$($all)*] $($rest: $kind),* }
    };
    ($callback:ident { $($context:tt)* } [$($all:tt)*]) => {
        $crate::__op_routed_by! { @device $callback { $($context)* } $($all)* }
    };
    (@device $callback:ident { $($context:tt)* } $param:ident: Device $(, $rest:ident: $kind:tt)*) => {
        $crate::$callback! { { $($context)* } Device $param }
    };
    (@device $callback:ident { $($context:tt)* } $param:ident: $other:tt $(, $rest:ident: $kind:tt)*) => {
        $crate::__op_routed_by! { @device $callback { $($context)* } $($rest: $kind),* }
    };
}

/// The call that sends a derived backend's op, `$visit`, to its arm.
#[doc(hidden)]
#[macro_export]
macro_rules! __op_send {
    ({ $op:ident, $visit:ident } Float $routed:ident) => {
        <Self as $crate::__private01::Routes>::route_float($routed, $visit)
    };
    ({ $op:ident, $visit:ident } [Float] $routed:ident) => {
        match $routed.first() {
            $crate::__private01::Some(first) => <Self as $crate::__private01::Routes>::route_float(first, $visit),
            $crate::__private01::None => $crate::__private01::Err($crate::__private01::Error::invalid_value(
                ::core::stringify!($op),
                ::core::concat!(::core::stringify!($routed), ".len()"),
                0usize,
                "at least 1",
            )),
        }
    };
    // The visitor holds the tensor it is given: a borrow of it picks the arm, then the arm's run takes it.
    ({ $op:ident, $visit:ident } Owned $routed:ident) => {{
        let run = <Self as $crate::__private01::Routes>::route_float(
            &$visit.$routed,
            $crate::__private01::ArmOfGiven(::core::marker::PhantomData),
        );
        run($visit)
    }};
    ({ $op:ident, $visit:ident } Int $routed:ident) => {
        <Self as $crate::__private01::Routes>::route_int($routed, $visit)
    };
    ({ $op:ident, $visit:ident } Bool $routed:ident) => {
        <Self as $crate::__private01::Routes>::route_bool($routed, $visit)
    };
    ({ $op:ident, $visit:ident } Device $routed:ident) => {
        <Self as $crate::__private01::Routes>::route_device($routed, $visit)
    };
}

/// `impl Backend` for a derived enum's backend: every op of the op list sent to its arm.
#[doc(hidden)]
#[macro_export]
macro_rules! __derived_backend {
    (
        $backend:ident {
            device: $device:ty,
            float: $float:ty,
            floats: $floats:ty,
            int: $int:ty,
            bool: $bool:ty,
            results: [$result:ty, $int_result:ty, $bool_result:ty],
            name: $name:expr $(,)?
        }
    ) => {
        $crate::for_each_op! {
            __derived_backend_impl {
                $backend, $name, $float, $int, $bool, $device,
                [$float, $floats, $int, $bool, $device, $result, $int_result, $bool_result]
            }
        }
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __derived_backend_impl {
    (
        { $backend:ident, $name:expr, $float:ty, $int:ty, $bool:ty, $device:ty, $types:tt }
        $($(#[$doc:meta])* fn $op:ident($($param:ident: $kind:tt),*) -> $output:tt $(= $default:ident)? $(=> $derived:ident)?, $autodiff:ident;)*
    ) => {
        #[automatically_derived]
        impl $crate::__private01::Backend for $backend {
            type Device = $device;
            type FloatTensor = $float;
            type IntTensor = $int;
            type BoolTensor = $bool;

            fn name() -> $crate::__private01::String {
                $crate::__private01::String::from($name)
            }

            $(
                $crate::__derived_backend_method! { $types fn $op($($param: $kind),*) -> $output $(=> $derived)? }
            )*
        }
    };
}

#[doc(hidden)]
#[macro_export]
macro_rules! __derived_backend_method {
    ($types:tt fn $op:ident($($param:ident: $kind:tt),*) -> $output:tt => $derived:ident) => {
        #[inline]
        fn $op($($param: $crate::__op_param_type!($types $kind)),*) -> $crate::__op_output_type!($types $output) {
            $crate::__private01::derived::$derived::<Self>($($param),*)
        }
    };
    ($types:tt fn $op:ident($($param:ident: $kind:tt),*) -> $output:tt) => {
        #[inline]
        fn $op($($param: $crate::__op_param_type!($types $kind)),*) -> $crate::__op_output_type!($types $output) {
            let visit = $crate::__private01::visits::$op::<Self> { $($param,)* marker: ::core::marker::PhantomData };
            $crate::__op_routed_by! { __op_send { $op, visit } [$($param: $kind),*] $($param: $kind),* }
        }
    };
}
