//! The element types collectives move and add, one per kind of [`HostValues`](crate::HostValues): every engine
//! runs a collective in the values' own type, so `f64` values are summed in `f64` and `f32` ones stay `f32`.

use std::fmt::Debug;
use std::ops::{AddAssign, DivAssign};

use crate::dtype::DType;

/// `f32` or `f64`: what a collective needs of its elements (`Default` is zero, what receive buffers start as).
pub(crate) trait Element:
    Copy + Default + Debug + PartialEq + AddAssign + DivAssign + Send + Sync + 'static
{
    /// The element type as [`HostValues::dtype`](crate::HostValues::dtype) names it.
    const DTYPE: DType;

    /// The divisor of `ReduceOp::Mean`; exact for any group (up to 2^24 ranks for `f32`).
    fn from_world_size(world_size: usize) -> Self;
}

impl Element for f32 {
    const DTYPE: DType = DType::F32;

    fn from_world_size(world_size: usize) -> Self {
        world_size as f32
    }
}

impl Element for f64 {
    const DTYPE: DType = DType::F64;

    fn from_world_size(world_size: usize) -> Self {
        world_size as f64
    }
}
