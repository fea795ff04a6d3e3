//! Creation defaults: `f32` data through `from_f64_vec`, and the seeded random constructors, on the host.

use super::host_values::map;
use crate::backend::Backend;
use crate::dtype::DType;
use crate::error::Result;
use crate::random;
use crate::shape::Shape;

/// `data` as `f64`, then `from_f64_vec` with dtype `F32`.
pub fn from_vec<B: Backend>(data: Vec<f32>, shape: Shape, device: &B::Device) -> Result<B::FloatTensor> {
    B::from_f64_vec(map("from_vec", &data, f64::from)?, shape, DType::F32, device)
}

/// `to_f64_vec` of an `F32` tensor, each value exactly an `f32`; another dtype is an error rather than a silent
/// rounding.
pub fn to_vec<B: Backend>(tensor: &B::FloatTensor) -> Result<Vec<f32>> {
    DType::check_expected("to_vec", DType::F32, B::dtype(tensor))?;
    map("to_vec", &B::to_f64_vec(tensor)?, |value| value as f32)
}

/// Seeded on the host, so the same seed gives the same values on every backend.
pub fn random_uniform<B: Backend>(
    shape: Shape,
    low: f64,
    high: f64,
    seed: u64,
    dtype: DType,
    device: &B::Device,
) -> Result<B::FloatTensor> {
    let op = "random_uniform";
    if dtype == DType::F32 {
        return B::from_vec(random::uniform(&shape, (low, high), seed, dtype, op)?, shape, device);
    }
    B::from_f64_vec(random::uniform(&shape, (low, high), seed, dtype, op)?, shape, dtype, device)
}

/// Seeded on the host, like [`random_uniform`].
pub fn random_normal<B: Backend>(
    shape: Shape,
    mean: f64,
    std: f64,
    seed: u64,
    dtype: DType,
    device: &B::Device,
) -> Result<B::FloatTensor> {
    let op = "random_normal";
    if dtype == DType::F32 {
        return B::from_vec(random::normal(&shape, (mean, std), seed, dtype, op)?, shape, device);
    }
    B::from_f64_vec(random::normal(&shape, (mean, std), seed, dtype, op)?, shape, dtype, device)
}
