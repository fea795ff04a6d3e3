//! Design (d): a hand-written enum with one `match` per op, which is what `enum_dispatch` generates for a trait.
//!
//! A binary op matches the pair of operands; the operands on two different backends fall to one last arm.

use dispatch_core::backends::{Candle, NdArray};
use dispatch_core::{Backend, Error, Result, Tensor};

#[derive(Clone, Debug)]
pub enum HandTensor {
    Candle(Tensor<Candle>),
    NdArray(Tensor<NdArray>),
}

impl HandTensor {
    #[inline]
    pub fn add(&self, rhs: &Self) -> Result<Self> {
        match (self, rhs) {
            (Self::Candle(lhs), Self::Candle(rhs)) => lhs.add(rhs).map(Self::Candle),
            (Self::NdArray(lhs), Self::NdArray(rhs)) => lhs.add(rhs).map(Self::NdArray),
            (lhs, rhs) => Err(mismatch("add", lhs, rhs)),
        }
    }

    #[inline]
    pub fn matmul(&self, rhs: &Self) -> Result<Self> {
        match (self, rhs) {
            (Self::Candle(lhs), Self::Candle(rhs)) => lhs.matmul(rhs).map(Self::Candle),
            (Self::NdArray(lhs), Self::NdArray(rhs)) => lhs.matmul(rhs).map(Self::NdArray),
            (lhs, rhs) => Err(mismatch("matmul", lhs, rhs)),
        }
    }

    #[inline]
    pub fn exp(&self) -> Result<Self> {
        match self {
            Self::Candle(tensor) => tensor.exp().map(Self::Candle),
            Self::NdArray(tensor) => tensor.exp().map(Self::NdArray),
        }
    }

    pub fn to_vec(&self) -> Result<Vec<f32>> {
        match self {
            Self::Candle(tensor) => tensor.to_vec(),
            Self::NdArray(tensor) => tensor.to_vec(),
        }
    }

    fn backend_name(&self) -> String {
        match self {
            Self::Candle(_) => Candle::name(),
            Self::NdArray(_) => NdArray::name(),
        }
    }
}

#[cold]
fn mismatch(op: &'static str, lhs: &HandTensor, rhs: &HandTensor) -> Error {
    Error::device_mismatch(op, lhs.backend_name(), rhs.backend_name())
}
