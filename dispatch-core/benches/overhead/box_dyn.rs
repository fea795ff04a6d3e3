//! Design (c): tensors as `Box<dyn DynTensor>`, the trait-object alternative to an enum.
//!
//! Written the way such a design has to be: the trait must be object safe, so a binary op takes the other operand
//! as `&dyn DynTensor` and downcasts it to its own concrete type (a mismatch is a typed error, as in the enum
//! designs), and every result is boxed, because its size is not known to the caller.

use std::any::Any;

use dispatch_core::{Backend, Error, Result, Tensor};

/// The object-safe view of a tensor of some backend.
pub trait DynTensor: Send + Sync {
    fn add(&self, rhs: &dyn DynTensor) -> Result<Box<dyn DynTensor>>;
    fn matmul(&self, rhs: &dyn DynTensor) -> Result<Box<dyn DynTensor>>;
    fn exp(&self) -> Result<Box<dyn DynTensor>>;
    fn to_vec(&self) -> Result<Vec<f32>>;
    fn backend_name(&self) -> String;
    /// What a binary op downcasts the other operand through.
    fn as_any(&self) -> &dyn Any;
}

/// A boxed tensor of backend `B`.
pub fn boxed<B: Backend>(tensor: Tensor<B>) -> Box<dyn DynTensor> {
    Box::new(tensor)
}

/// The other operand as a tensor of `B`, or the error an enum design reports for operands on two backends.
fn same_backend<'a, B: Backend>(op: &'static str, rhs: &'a dyn DynTensor) -> Result<&'a Tensor<B>> {
    rhs.as_any().downcast_ref::<Tensor<B>>().ok_or_else(|| Error::device_mismatch(op, B::name(), rhs.backend_name()))
}

impl<B: Backend> DynTensor for Tensor<B> {
    fn add(&self, rhs: &dyn DynTensor) -> Result<Box<dyn DynTensor>> {
        Tensor::add(self, same_backend::<B>("add", rhs)?).map(boxed)
    }

    fn matmul(&self, rhs: &dyn DynTensor) -> Result<Box<dyn DynTensor>> {
        Tensor::matmul(self, same_backend::<B>("matmul", rhs)?).map(boxed)
    }

    fn exp(&self) -> Result<Box<dyn DynTensor>> {
        Tensor::exp(self).map(boxed)
    }

    fn to_vec(&self) -> Result<Vec<f32>> {
        Tensor::to_vec(self)
    }

    fn backend_name(&self) -> String {
        B::name()
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}
