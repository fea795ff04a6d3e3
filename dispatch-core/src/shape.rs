//! The shape of a tensor; the checks every backend runs before touching data are in `shape/rules.rs`.

mod rules;

use std::fmt;

/// The dimensions of a tensor, outermost first. A shape always has at least one dimension: a scalar is `[1]`.
#[derive(Clone, PartialEq, Eq, Hash)]
pub struct Shape {
    dims: Vec<usize>,
}

impl Shape {
    /// A shape of `dims`, outermost first; unchecked, see [`Shape::check_tensor_shape`].
    pub fn new(dims: impl Into<Vec<usize>>) -> Self {
        Self { dims: dims.into() }
    }

    /// The length of each dimension, outermost first.
    pub fn dims(&self) -> &[usize] {
        &self.dims
    }

    /// The number of dimensions (unrelated to the rank of a distributed group).
    pub fn rank(&self) -> usize {
        self.dims.len()
    }

    /// The element count, saturating at `usize::MAX` so that an absurd shape fails a check instead of overflowing.
    pub fn num_elements(&self) -> usize {
        self.dims.iter().fold(1, |count: usize, &dim| count.saturating_mul(dim))
    }

    /// The batch dimensions of a matmul operand (all but the last two), and its rows and columns.
    pub fn matrix_parts(&self) -> (&[usize], usize, usize) {
        let rank = self.rank();
        (&self.dims[..rank.saturating_sub(2)], self.dim_from_end(1), self.dim_from_end(0))
    }

    /// The size of dimension `index`, counted from the last (0); 1 beyond the first, as broadcasting reads it.
    pub(crate) fn dim_from_end(&self, index: usize) -> usize {
        if index < self.rank() { self.dims[self.rank() - 1 - index] } else { 1 }
    }
}

impl fmt::Display for Shape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.dims)
    }
}

impl fmt::Debug for Shape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Shape{:?}", self.dims)
    }
}

impl From<Vec<usize>> for Shape {
    fn from(dims: Vec<usize>) -> Self {
        Self::new(dims)
    }
}

impl From<&[usize]> for Shape {
    fn from(dims: &[usize]) -> Self {
        Self::new(dims)
    }
}

impl<const N: usize> From<[usize; N]> for Shape {
    fn from(dims: [usize; N]) -> Self {
        Self::new(dims)
    }
}

impl From<&Shape> for Shape {
    fn from(shape: &Shape) -> Self {
        shape.clone()
    }
}
