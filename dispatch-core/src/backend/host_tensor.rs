//! `HostTensor`: a tensor's values in host memory, what a [`HostOp`](crate::HostOp) (a collective among them)
//! computes on, in an element type that holds every value of the tensor's dtype exactly.

use crate::dtype::DType;
use crate::error::Result;
use crate::memory;
use crate::shape::Shape;

/// The values of a [`HostTensor`], row-major, in the element type that holds every value of the tensor's dtype:
/// `F64` for an `F64` tensor, `F32` for an `F32`, `F16` or `BF16` tensor (`f32` holds every value of the half
/// types). So a value reaches a host op unrounded, and the op's result is rounded once, to the tensor's dtype.
#[derive(Clone, Debug, PartialEq)]
pub enum HostValues {
    /// The values of an `F32`, `F16` or `BF16` tensor.
    F32(Vec<f32>),
    /// The values of an `F64` tensor.
    F64(Vec<f64>),
}

impl HostValues {
    /// The element type of values that hold a `dtype` tensor exactly: `F64` for `F64`, `F32` for the others.
    pub fn element_dtype_of(dtype: DType) -> DType {
        match dtype {
            DType::F64 => DType::F64,
            DType::F32 | DType::F16 | DType::BF16 => DType::F32,
        }
    }

    /// The element type: [`DType::F32`] or [`DType::F64`].
    pub fn dtype(&self) -> DType {
        match self {
            Self::F32(_) => DType::F32,
            Self::F64(_) => DType::F64,
        }
    }

    /// The number of values.
    pub fn len(&self) -> usize {
        match self {
            Self::F32(values) => values.len(),
            Self::F64(values) => values.len(),
        }
    }

    /// Whether there are no values.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The value at row-major position `index`, exactly; `None` past the end.
    pub fn get(&self, index: usize) -> Option<f64> {
        match self {
            Self::F32(values) => values.get(index).copied().map(f64::from),
            Self::F64(values) => values.get(index).copied(),
        }
    }

    /// `f` of every value, in place: computed in `f64` and rounded to the element type (exact for `F64`).
    pub fn map(mut self, f: impl Fn(f64) -> f64) -> Self {
        match &mut self {
            Self::F32(values) => values.iter_mut().for_each(|value| *value = f(f64::from(*value)) as f32),
            Self::F64(values) => values.iter_mut().for_each(|value| *value = f(*value)),
        }
        self
    }

    /// The values as `f64`, exactly, in a new buffer ([`Error::OutOfMemory`](crate::error::Error::OutOfMemory) if it
    /// cannot be allocated).
    pub fn to_f64_vec(&self) -> Result<Vec<f64>> {
        let op = "HostValues::to_f64_vec";
        match self {
            Self::F32(values) => {
                let mut widened = memory::try_vec(op, values.len())?;
                widened.extend(values.iter().copied().map(f64::from));
                Ok(widened)
            }
            Self::F64(values) => memory::try_copy(op, values),
        }
    }
}

impl From<Vec<f32>> for HostValues {
    fn from(values: Vec<f32>) -> Self {
        Self::F32(values)
    }
}

impl From<Vec<f64>> for HostValues {
    fn from(values: Vec<f64>) -> Self {
        Self::F64(values)
    }
}

/// A tensor's values in host memory: what host ops, and so the collectives, compute on.
///
/// The values keep every value of the tensor's dtype exactly ([`HostValues`]); a host op may return either
/// element type, and its output is rounded once, to the dtype of the tensor it came from. The values must fill
/// the shape; the collectives and the conversion back to a tensor check that they do.
#[derive(Clone, Debug, PartialEq)]
pub struct HostTensor {
    /// The elements in row-major order.
    pub values: HostValues,
    /// The shape the elements fill.
    pub shape: Shape,
}

impl HostTensor {
    /// `values` (`Vec<f32>`, `Vec<f64>` or [`HostValues`]) filling `shape` in row-major order.
    pub fn new(values: impl Into<HostValues>, shape: impl Into<Shape>) -> Self {
        Self { values: values.into(), shape: shape.into() }
    }

    /// The element type of the values: [`DType::F32`] or [`DType::F64`].
    pub fn dtype(&self) -> DType {
        self.values.dtype()
    }

    /// The same shape with `f` of every value, in place (see [`HostValues::map`]).
    pub fn map(self, f: impl Fn(f64) -> f64) -> Self {
        Self { values: self.values.map(f), shape: self.shape }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_dtype_travels_in_an_element_type_that_holds_it() {
        assert_eq!(HostValues::element_dtype_of(DType::F64), DType::F64);
        for dtype in [DType::F32, DType::F16, DType::BF16] {
            assert_eq!(HostValues::element_dtype_of(dtype), DType::F32);
        }
    }

    #[test]
    fn f64_values_stay_exact_through_every_accessor() {
        let tiny = 1.0 + 2f64.powi(-40);
        let values = HostValues::from(vec![tiny, 0.1]);
        assert_eq!((values.dtype(), values.len(), values.is_empty()), (DType::F64, 2, false));
        assert_eq!(values.get(0), Some(tiny));
        assert_eq!(values.get(2), None);
        assert_eq!(values.to_f64_vec().unwrap(), vec![tiny, 0.1]);
        assert_eq!(values.map(|value| value * 3.0), HostValues::F64(vec![tiny * 3.0, 0.1 * 3.0]));
    }

    #[test]
    fn f32_values_map_through_f64_and_round_once() {
        let tensor = HostTensor::new(vec![1.0f32, 3.0], [2]).map(|value| value / 3.0);
        assert_eq!(tensor.dtype(), DType::F32);
        assert_eq!(tensor.values, HostValues::F32(vec![(1.0f64 / 3.0) as f32, 1.0]));
        assert_eq!(tensor.values.to_f64_vec().unwrap(), vec![f64::from((1.0f64 / 3.0) as f32), 1.0]);
    }
}
