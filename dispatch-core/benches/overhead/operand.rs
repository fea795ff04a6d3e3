//! The ops under test, as each design spells them. Every impl only forwards, so the designs differ only in how
//! they reach the backend.

use dispatch_core::{Backend, Result, Tensor};

use super::box_dyn::DynTensor;
use super::hand_match::HandTensor;

pub trait Operand: Sized {
    fn add(&self, rhs: &Self) -> Result<Self>;
    fn matmul(&self, rhs: &Self) -> Result<Self>;
    fn exp(&self) -> Result<Self>;
    fn values(&self) -> Result<Vec<f32>>;
}

/// An op under test, as a type: code generic over it calls the op directly, so no design pays for choosing the op
/// inside a timed loop.
pub trait Op {
    const NAME: &'static str;
    /// The op on a pair of operands; a unary op ignores the right one.
    fn call<T: Operand>(lhs: &T, rhs: &T) -> Result<T>;
}

pub struct Add;
pub struct Matmul;
pub struct Exp;

impl Op for Add {
    const NAME: &'static str = "add";

    #[inline]
    fn call<T: Operand>(lhs: &T, rhs: &T) -> Result<T> {
        lhs.add(rhs)
    }
}

impl Op for Matmul {
    const NAME: &'static str = "matmul";

    #[inline]
    fn call<T: Operand>(lhs: &T, rhs: &T) -> Result<T> {
        lhs.matmul(rhs)
    }
}

impl Op for Exp {
    const NAME: &'static str = "exp";

    #[inline]
    fn call<T: Operand>(lhs: &T, _rhs: &T) -> Result<T> {
        lhs.exp()
    }
}

impl<B: Backend> Operand for Tensor<B> {
    #[inline]
    fn add(&self, rhs: &Self) -> Result<Self> {
        Tensor::add(self, rhs)
    }

    #[inline]
    fn matmul(&self, rhs: &Self) -> Result<Self> {
        Tensor::matmul(self, rhs)
    }

    #[inline]
    fn exp(&self) -> Result<Self> {
        Tensor::exp(self)
    }

    fn values(&self) -> Result<Vec<f32>> {
        self.to_vec()
    }
}

impl Operand for Box<dyn DynTensor> {
    #[inline]
    fn add(&self, rhs: &Self) -> Result<Self> {
        DynTensor::add(&**self, &**rhs)
    }

    #[inline]
    fn matmul(&self, rhs: &Self) -> Result<Self> {
        DynTensor::matmul(&**self, &**rhs)
    }

    #[inline]
    fn exp(&self) -> Result<Self> {
        DynTensor::exp(&**self)
    }

    fn values(&self) -> Result<Vec<f32>> {
        self.to_vec()
    }
}

impl Operand for HandTensor {
    #[inline]
    fn add(&self, rhs: &Self) -> Result<Self> {
        HandTensor::add(self, rhs)
    }

    #[inline]
    fn matmul(&self, rhs: &Self) -> Result<Self> {
        HandTensor::matmul(self, rhs)
    }

    #[inline]
    fn exp(&self) -> Result<Self> {
        HandTensor::exp(self)
    }

    fn values(&self) -> Result<Vec<f32>> {
        self.to_vec()
    }
}
