//! What a rank asks of the group in one collective call, and the rules every engine applies to it.

use std::fmt;

use crate::backend::HostValues;
use crate::distributed::element::Element;
use crate::dtype::DType;
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
    /// Turns element-wise sums over `world_size` ranks into this op's result, in place, in the sums' own type:
    /// `Sum` keeps them, `Mean` divides them by the world size. Engines sum, then call this; dividing (not
    /// multiplying by the reciprocal) keeps every engine's result bit-for-bit the same.
    pub(crate) fn finish_sums<T: Element>(self, sums: &mut [T], world_size: usize) {
        match self {
            Self::Sum => {}
            Self::Mean => {
                let world_size = T::from_world_size(world_size);
                sums.iter_mut().for_each(|sum| *sum /= world_size);
            }
        }
    }

    /// [`ReduceOp::finish_sums`] on host values of either element type.
    pub(crate) fn finish_values(self, sums: &mut HostValues, world_size: usize) {
        match sums {
            HostValues::F32(sums) => self.finish_sums(sums, world_size),
            HostValues::F64(sums) => self.finish_sums(sums, world_size),
        }
    }
}

/// One collective call. Every rank of a group must make the same calls in the same order (SPMD), with the same
/// arguments and tensors of the same shape and element type ([`HostValues`]: `f64` from an `F64` tensor, `f32`
/// from the others); engines check this and answer a disagreement with [`Error::CollectiveMismatch`] on every
/// rank. A collective runs in its values' element type: `f64` values are moved and summed as `f64`.
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

/// What one rank brings to a collective: the call and what its tensor looks like (`None` for a barrier).
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Call {
    pub collective: Collective,
    pub operand: Option<Operand>,
}

/// A rank's tensor as the group sees it before any data moves: its shape and the element type of its values.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Operand {
    pub shape: Shape,
    /// [`DType::F32`] or [`DType::F64`], as [`HostValues::dtype`] gives it.
    pub dtype: DType,
}

impl Call {
    /// A call that carries `values` of `shape`.
    pub(crate) fn with_tensor(collective: Collective, shape: Shape, values: &HostValues) -> Self {
        Self { collective, operand: Some(Operand { shape, dtype: values.dtype() }) }
    }

    /// A call that carries no tensor (a barrier).
    pub(crate) fn without_tensor(collective: Collective) -> Self {
        Self { collective, operand: None }
    }

    fn shape(&self) -> Option<&Shape> {
        self.operand.as_ref().map(|operand| &operand.shape)
    }

    fn dtype(&self) -> Option<DType> {
        self.operand.as_ref().map(|operand| operand.dtype)
    }
}

/// Checks that every rank (by position in `calls`) made the same call with a tensor of the same shape and element
/// type. Every rank runs it on the same list, so they all get the same answer.
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
    if calls.iter().any(|call| call.shape() != first.shape()) {
        let listed = list_by_rank(calls, |shape: &Shape| shape.to_string(), Call::shape);
        return Err(Error::CollectiveMismatch {
            op,
            details: format!("different shapes: {listed}; every rank must pass the same shape"),
        });
    }
    if calls.iter().any(|call| call.dtype() != first.dtype()) {
        let listed = list_by_rank(calls, |dtype: DType| dtype.name().to_owned(), Call::dtype);
        return Err(Error::CollectiveMismatch {
            op,
            details: format!(
                "different element types: {listed}; every rank must pass values of the same element type (f64 from \
                 an F64 tensor, f32 from an F32, F16 or BF16 tensor)"
            ),
        });
    }
    Ok(())
}

/// `rank 0 <what>, rank 1 <what>, ...`, with `no tensor` for a rank whose call carries none.
fn list_by_rank<'a, T>(
    calls: &'a [Call],
    describe: impl Fn(T) -> String,
    part: impl Fn(&'a Call) -> Option<T>,
) -> String {
    let listed: Vec<String> = calls
        .iter()
        .enumerate()
        .map(|(rank, call)| match part(call) {
            Some(value) => format!("rank {rank} {}", describe(value)),
            None => format!("rank {rank} no tensor"),
        })
        .collect();
    listed.join(", ")
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
        Call::with_tensor(collective, Shape::new(dims), &HostValues::F32(Vec::new()))
    }

    fn call_f64(collective: Collective, dims: &[usize]) -> Call {
        Call::with_tensor(collective, Shape::new(dims), &HostValues::F64(Vec::new()))
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
    }

    #[test]
    fn different_element_types_are_named_in_the_error() {
        let all_reduce = Collective::AllReduce(ReduceOp::Sum);
        let calls = [call(all_reduce, &[2]), call_f64(all_reduce, &[2]), call(all_reduce, &[2])];
        let error = check_agreement(&calls[2], &calls).unwrap_err();
        assert!(matches!(error, Error::CollectiveMismatch { op: "all_reduce", .. }), "{error}");
        let message = error.to_string();
        assert!(message.contains("different element types: rank 0 f32, rank 1 f64, rank 2 f32"), "{message}");
    }

    #[test]
    fn a_barrier_beside_a_tensor_is_named_in_the_error() {
        let calls = [Call::without_tensor(Collective::Barrier), call(Collective::Barrier, &[1])];
        let message = check_agreement(&calls[0], &calls).unwrap_err().to_string();
        assert!(message.contains("rank 0 no tensor, rank 1 [1]"), "{message}");
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
        let mut sums = [3.0f32, -6.0, 0.0];
        ReduceOp::Sum.finish_sums(&mut sums, 3);
        assert_eq!(sums, [3.0, -6.0, 0.0]);
        ReduceOp::Mean.finish_sums(&mut sums, 3);
        assert_eq!(sums, [1.0, -2.0, 0.0]);
    }

    #[test]
    fn mean_of_f64_values_divides_in_f64() {
        let mut sums = HostValues::F64(vec![1.0, 0.1 + 0.2]);
        ReduceOp::Mean.finish_values(&mut sums, 3);
        assert_eq!(sums, HostValues::F64(vec![1.0 / 3.0, (0.1 + 0.2) / 3.0]));
    }

    #[test]
    fn split_ranges_cover_the_length_in_order() {
        let parts: Vec<_> = (0..3).map(|rank| split_range(10, 3, rank)).collect();
        assert_eq!(parts, vec![0..4, 4..7, 7..10]);
        assert_eq!(split_range(0, 2, 1), 0..0);
        assert_eq!(split_range(1, 2, 1), 1..1);
    }
}
