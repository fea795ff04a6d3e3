//! What an error says about an argument: the ranks an op takes, the value it refused.

use std::fmt;

/// The ranks (numbers of dimensions) an op takes, as an [`Error::UnexpectedRank`](super::Error::UnexpectedRank)
/// reports them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RankRule {
    /// This rank and no other (`conv2d`'s input: 4).
    Exactly(usize),
    /// This rank or more (`matmul`'s operands: 2).
    AtLeast(usize),
}

impl fmt::Display for RankRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Exactly(rank) => write!(f, "rank {rank}"),
            Self::AtLeast(rank) => write!(f, "rank {rank} or more"),
        }
    }
}

/// The value of an argument that an [`Error::InvalidValue`](super::Error::InvalidValue) refuses, in the type the op
/// took it in.
#[derive(Clone, Debug, PartialEq)]
pub enum ArgumentValue {
    /// A float: a divisor, a probability, a bound.
    Float(f64),
    /// A value of an int tensor's element type: an int divisor.
    Int(i64),
    /// A size or count: a number of groups, of ranks, of tensors in a list.
    Size(usize),
    /// Sizes or axes: a stride `[height, width]`, the axes of a permutation.
    Sizes(Vec<usize>),
}

impl fmt::Display for ArgumentValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Float(value) => write!(f, "{value}"),
            Self::Int(value) => write!(f, "{value}"),
            Self::Size(value) => write!(f, "{value}"),
            Self::Sizes(values) => write!(f, "{values:?}"),
        }
    }
}

impl From<f64> for ArgumentValue {
    fn from(value: f64) -> Self {
        Self::Float(value)
    }
}

impl From<i64> for ArgumentValue {
    fn from(value: i64) -> Self {
        Self::Int(value)
    }
}

impl From<usize> for ArgumentValue {
    fn from(value: usize) -> Self {
        Self::Size(value)
    }
}

impl From<Vec<usize>> for ArgumentValue {
    fn from(values: Vec<usize>) -> Self {
        Self::Sizes(values)
    }
}

impl From<&[usize]> for ArgumentValue {
    fn from(values: &[usize]) -> Self {
        Self::Sizes(values.to_vec())
    }
}

impl<const N: usize> From<[usize; N]> for ArgumentValue {
    fn from(values: [usize; N]) -> Self {
        Self::Sizes(values.to_vec())
    }
}
