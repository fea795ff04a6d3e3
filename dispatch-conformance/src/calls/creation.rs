//! Creation, inspection and transfers, host ops included.

use std::sync::Arc;

use dispatch_core::{Backend, DType, Error, HostOp, HostTensor, HostValues, Result, Shape};

use super::outputs::Floats;
use crate::operands::Operands;

pub fn from_vec<B: Backend>(o: &Operands<B>) -> Floats<B> {
    vec![
        B::from_vec(vec![0.5, -1.25, 3.0, 0.1, -7.5, 2.0], Shape::new([3, 2]), &o.device),
        // Six values do not fill [4, 2].
        B::from_vec(vec![0.5; 6], Shape::new([4, 2]), &o.device),
    ]
}

pub fn from_f64_vec<B: Backend>(o: &Operands<B>) -> Floats<B> {
    vec![
        // Values each dtype rounds its own way.
        B::from_f64_vec(vec![0.1, -2.5, 1e3, 3.25, -1e-3, 7.0 / 3.0], Shape::new([3, 2]), o.dtype, &o.device),
        B::from_f64_vec(vec![1.0; 5], Shape::new([2, 3]), o.dtype, &o.device),
    ]
}

pub fn full<B: Backend>(o: &Operands<B>) -> Floats<B> {
    vec![
        B::full(Shape::new([2, 3]), -1.375, o.dtype, &o.device),
        B::full(Shape::new([3, 1, 2]), 0.1, o.dtype, &o.device),
        // More elements than memory can address.
        B::full(Shape::new([usize::MAX / 2, 4]), 1.0, o.dtype, &o.device),
    ]
}

pub fn random_uniform<B: Backend>(o: &Operands<B>) -> Floats<B> {
    vec![
        B::random_uniform(Shape::new([3, 4]), -2.0, 3.0, 7, o.dtype, &o.device),
        B::random_uniform(Shape::new([2, 5]), 0.5, 0.75, 8, o.dtype, &o.device),
    ]
}

pub fn random_normal<B: Backend>(o: &Operands<B>) -> Floats<B> {
    vec![
        B::random_normal(Shape::new([3, 4]), 0.5, 2.0, 7, o.dtype, &o.device),
        B::random_normal(Shape::new([2, 5]), -3.0, 0.25, 8, o.dtype, &o.device),
    ]
}

/// Computes in F32 only; in the other dtypes both calls must fail.
pub fn to_vec<B: Backend>(o: &Operands<B>) -> Vec<Result<Vec<f32>>> {
    vec![B::to_vec(&o.cube), B::to_vec(&o.fine)]
}

pub fn to_f64_vec<B: Backend>(o: &Operands<B>) -> Vec<Result<Vec<f64>>> {
    vec![B::to_f64_vec(&o.fine), B::to_f64_vec(&o.image)]
}

pub fn dtype<B: Backend>(o: &Operands<B>) -> Vec<DType> {
    [B::dtype(&o.cube)].into_iter().chain(o.mixing(B::dtype)).collect()
}

/// `fine` to each dtype the backend holds: rounding to a narrower one changes the values, casting to its own
/// hands it back (the one call of this op that may).
pub fn cast<B: Backend>(o: &Operands<B>) -> Floats<B> {
    o.dtypes.iter().map(|&dtype| B::cast(&o.fine, dtype)).collect()
}

pub fn shape<B: Backend>(o: &Operands<B>) -> Vec<Shape> {
    vec![B::shape(&o.cube), B::shape(&o.image)]
}

pub fn device<B: Backend>(o: &Operands<B>) -> Vec<B::Device> {
    vec![B::device(&o.cube), B::device(&o.image)]
}

/// The one device there is: the same values, which the test allows this op alone.
pub fn to_device<B: Backend>(o: &Operands<B>) -> Floats<B> {
    vec![B::to_device(&o.cube, &o.device)]
}

pub fn host_op<B: Backend>(o: &Operands<B>) -> Floats<B> {
    vec![
        B::host_op(&o.cube, Arc::new(ReverseAndDouble)),
        // Values an F64 tensor rounds to f32 on the way in.
        B::host_op(&o.fine, Arc::new(ReverseAndDouble)),
        B::host_op(&o.cube, Arc::new(Refuses)),
    ]
}

/// A host op that moves every value: `2 x`, in reverse row-major order.
struct ReverseAndDouble;

impl HostOp for ReverseAndDouble {
    fn name(&self) -> &'static str {
        "reverse_and_double"
    }

    fn forward(&self, input: HostTensor) -> Result<HostTensor> {
        // Each element type in its own arithmetic, as a host op of a user's would be written.
        let values = match input.values {
            HostValues::F32(values) => HostValues::F32(values.iter().rev().map(|value| 2.0 * value).collect()),
            HostValues::F64(values) => HostValues::F64(values.iter().rev().map(|value| 2.0 * value).collect()),
        };
        Ok(HostTensor { values, shape: input.shape })
    }

    fn backward(&self, grad_output: HostTensor) -> Result<HostTensor> {
        self.forward(grad_output)
    }
}

/// A host op that fails: its error reaches the caller as it is.
struct Refuses;

impl HostOp for Refuses {
    fn name(&self) -> &'static str {
        "refuses"
    }

    fn forward(&self, _: HostTensor) -> Result<HostTensor> {
        Err(Error::invalid("refuses", "never computes"))
    }

    fn backward(&self, _: HostTensor) -> Result<HostTensor> {
        Err(Error::invalid("refuses", "never computes"))
    }
}
