//! What a rank asks of the group in one collective call, and the rules every engine applies to it.

use std::fmt;

use crate::error::{Error, Result};
use crate::shape::Shape;

/// How `all_reduce` and `reduce_scatter` combine the ranks' values.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReduceOp {
    /// The element-wise sum over the ranks, added in rank order.
    Sum,
    /// The sum divided by the number of ranks.
    Mean,
}

impl ReduceOp {
    /// Turns element-wise sums over `world_size` ranks into this op's result, in place: `Sum` keeps them,
    /// `Mean` divides them by the world size. Engines sum, then call this; dividing (not multiplying by the
    /// reciprocal) keeps every engine's result bit-for-bit the same.
    pub(crate) fn finish_sums(self, sums: &mut [f32], world_size: usize) {
        match self {
            Self::Sum => {}
            Self::Mean => {
                let world_size = world_size as f32;
                sums.iter_mut().for_each(|sum| *sum /= world_size);
            }
        }
    }
}

/// One collective call. Every rank of a group must make the same calls in the same order (SPMD), with the same
/// arguments and tensors of the same shape; engines check this and answer a disagreement with
/// [`Error::CollectiveMismatch`] on every rank.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Collective {
    /// Every rank gets the reduction of every rank's tensor.
    AllReduce(ReduceOp),
    /// Every rank gets the tensor of rank `root`.
    Broadcast {
        /// The rank whose tensor is sent, below the number of ranks.
        root: usize,
    },
    /// Every rank gets the ranks' tensors concatenated along axis 0, in rank order.
    AllGather,
    /// The reduction of every rank's tensor, split along axis 0 into one equal part per rank; rank `r` gets
    /// part `r`. Axis 0 must be divisible by the number of ranks.
    ReduceScatter(ReduceOp),
    /// Returns once every rank has called it; carries no data.
    Barrier,
}

impl Collective {
    /// The collective's name without its arguments, as errors name the op (`all_reduce`).
    pub fn name(&self) -> &'static str {
        match self {
            Self::AllReduce(_) => "all_reduce",
            Self::Broadcast { .. } => "broadcast",
            Self::AllGather => "all_gather",
            Self::ReduceScatter(_) => "reduce_scatter",
            Self::Barrier => "barrier",
        }
    }

    /// Checks the call against the group and gives the shape every rank receives. Run by every engine on the
    /// arguments all ranks agreed on, so every rank reaches the same verdict.
    pub(crate) fn output_shape(&self, input: &Shape, world_size: usize) -> Result<Shape> {
        let op = self.name();
        match *self {
            Self::AllReduce(_) | Self::Barrier => Ok(input.clone()),
            Self::Broadcast { root } if root >= world_size => {
                Err(Error::IndexOutOfRange { op, index: i64::try_from(root).unwrap_or(i64::MAX), len: world_size })
            }
            Self::Broadcast { .. } => Ok(input.clone()),
            Self::AllGather => {
                let rows = leading_dim(op, input)?;
                let total =
                    rows.checked_mul(world_size).ok_or(Error::SizeOverflow { op, what: "the gathered length" })?;
                // Rows alone may fit while the elements do not; every rank rejects such a gather, before any
                // rank allocates its output.
                let output = input.with_dim(op, 0, total)?;
                output.check_tensor_shape(op)?;
                Ok(output)
            }
            Self::ReduceScatter(_) => {
                let rows = leading_dim(op, input)?;
                if rows % world_size != 0 {
                    let expected = "a first axis that the group's ranks split evenly";
                    return Err(Error::unexpected_shape(op, expected, input));
                }
                input.with_dim(op, 0, rows / world_size)
            }
        }
    }
}

fn leading_dim(op: &'static str, shape: &Shape) -> Result<usize> {
    shape.check_non_empty(op)?;
    Ok(shape.dims()[0])
}

impl fmt::Display for Collective {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::AllReduce(op) => write!(f, "all_reduce({op:?})"),
            Self::Broadcast { root } => write!(f, "broadcast(root {root})"),
            Self::AllGather => f.write_str("all_gather"),
            Self::ReduceScatter(op) => write!(f, "reduce_scatter({op:?})"),
            Self::Barrier => f.write_str("barrier"),
        }
    }
}

/// What one rank brings to a collective: the call and the shape of its tensor (`None` for a barrier).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Call {
    pub collective: Collective,
    pub shape: Option<Shape>,
}

/// Checks that every rank (by position in `calls`) made the same call with the same shape. Every rank runs it
/// on the same list, so they all get the same answer.
pub(crate) fn check_agreement(this_rank: &Call, calls: &[Call]) -> Result<()> {
    let op = this_rank.collective.name();
    let Some(first) = calls.first() else {
        return Ok(());
    };
    if calls.iter().any(|call| call.collective != first.collective) {
        let listed: Vec<String> =
            calls.iter().enumerate().map(|(rank, call)| format!("rank {rank} called `{}`", call.collective)).collect();
        return Err(Error::CollectiveMismatch {
            op,
            details: format!("{}; every rank must make the same calls in the same order", listed.join(", ")),
        });
    }
    if calls.iter().any(|call| call.shape != first.shape) {
        let listed: Vec<String> = calls
            .iter()
            .enumerate()
            .map(|(rank, call)| match &call.shape {
                Some(shape) => format!("rank {rank} {shape}"),
                None => format!("rank {rank} no tensor"),
            })
            .collect();
        return Err(Error::CollectiveMismatch {
            op,
            details: format!(
                "different shapes: {}; every rank must pass the same shape (all tensors are f32, the only element \
                 type)",
                listed.join(", ")
            ),
        });
    }
    Ok(())
}

/// The part `[start, end)` of `len` elements that `rank` of `world_size` handles: contiguous, in rank order,
/// sizes differing by at most one. Every caller has `rank < world_size` (groups have at least one rank), so
/// `start + size <= len`: nothing here can overflow.
pub(crate) fn split_range(len: usize, world_size: usize, rank: usize) -> std::ops::Range<usize> {
    let base = len / world_size;
    let extra = len % world_size;
    let start = rank * base + rank.min(extra);
    let size = base + usize::from(rank < extra);
    start..start + size
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(collective: Collective, dims: &[usize]) -> Call {
        Call { collective, shape: Some(Shape::new(dims)) }
    }

    #[test]
    fn agreeing_calls_pass() {
        let calls = vec![call(Collective::AllGather, &[2, 3]); 3];
        assert!(check_agreement(&calls[0], &calls).is_ok());
    }

    #[test]
    fn different_shapes_are_named_in_the_error() {
        let calls =
            [call(Collective::AllReduce(ReduceOp::Sum), &[2, 3]), call(Collective::AllReduce(ReduceOp::Sum), &[3])];
        let message = check_agreement(&calls[1], &calls).unwrap_err().to_string();
        assert!(message.contains("rank 0 [2, 3]") && message.contains("rank 1 [3]"), "{message}");
        assert!(message.contains("f32"), "{message}");
    }

    #[test]
    fn different_collectives_are_named_in_the_error() {
        let calls = [call(Collective::AllReduce(ReduceOp::Mean), &[2]), call(Collective::Broadcast { root: 1 }, &[2])];
        let message = check_agreement(&calls[0], &calls).unwrap_err().to_string();
        assert!(message.contains("all_reduce(Mean)") && message.contains("broadcast(root 1)"), "{message}");
    }

    #[test]
    fn output_shapes_follow_the_collective() {
        let shape = Shape::new([4, 3]);
        assert_eq!(Collective::AllGather.output_shape(&shape, 2).unwrap(), Shape::new([8, 3]));
        assert_eq!(Collective::ReduceScatter(ReduceOp::Sum).output_shape(&shape, 2).unwrap(), Shape::new([2, 3]));
        let uneven = Collective::ReduceScatter(ReduceOp::Sum).output_shape(&shape, 3);
        assert!(matches!(uneven, Err(Error::UnexpectedShape { op: "reduce_scatter", .. })), "{uneven:?}");
        let outside = Collective::Broadcast { root: 2 }.output_shape(&shape, 2);
        assert!(matches!(outside, Err(Error::IndexOutOfRange { op: "broadcast", index: 2, len: 2 })), "{outside:?}");
        assert_eq!(Collective::Broadcast { root: 1 }.output_shape(&shape, 2).unwrap(), shape);
    }

    #[test]
    fn mean_divides_sums_by_the_world_size_and_sum_keeps_them() {
        let mut sums = [3.0, -6.0, 0.0];
        ReduceOp::Sum.finish_sums(&mut sums, 3);
        assert_eq!(sums, [3.0, -6.0, 0.0]);
        ReduceOp::Mean.finish_sums(&mut sums, 3);
        assert_eq!(sums, [1.0, -2.0, 0.0]);
    }

    #[test]
    fn split_ranges_cover_the_length_in_order() {
        let parts: Vec<_> = (0..3).map(|rank| split_range(10, 3, rank)).collect();
        assert_eq!(parts, vec![0..4, 4..7, 7..10]);
        assert_eq!(split_range(0, 2, 1), 0..0);
        assert_eq!(split_range(1, 2, 1), 1..1);
    }
}
