//! What each op asks of its operands' shapes, and the shapes its outputs take: the checks that turn a shape an op
//! cannot take into a typed error, kept apart from the type itself, which the errors name.

use super::Shape;
use crate::error::{Error, RankRule, Result};

impl Shape {
    /// The most elements one tensor may hold: its `f32` buffer must fit in `isize::MAX` bytes, as every Rust
    /// allocation must.
    pub const MAX_ELEMENTS: usize = isize::MAX as usize / std::mem::size_of::<f32>();

    /// Rejects the empty shape, which no backend accepts as a tensor shape.
    pub fn check_non_empty(&self, op: &'static str) -> Result<()> {
        if self.dims.is_empty() {
            return Err(Error::unexpected_rank(op, "a shape", RankRule::AtLeast(1), self));
        }
        Ok(())
    }

    /// Checks that a tensor can have this shape: at least one dimension, and a buffer that fits in memory. The
    /// non-zero dimensions alone must fit too, so `[usize::MAX, 0]` is rejected: reshaping or multiplying such an
    /// empty tensor could otherwise ask for an impossible allocation (and ndarray refuses it outright).
    pub fn check_tensor_shape(&self, op: &'static str) -> Result<()> {
        self.check_non_empty(op)?;
        let non_zero =
            self.dims.iter().filter(|&&dim| dim != 0).try_fold(1, |count: usize, &dim| count.checked_mul(dim));
        if non_zero.is_none_or(|count| count > Self::MAX_ELEMENTS) {
            return Err(Error::ShapeTooLarge { op, shape: self.clone(), max: Self::MAX_ELEMENTS });
        }
        Ok(())
    }

    /// Checks that `len` values, in row-major order, exactly fill a tensor of this shape.
    pub fn check_data_len(&self, op: &'static str, len: usize) -> Result<()> {
        if len != self.num_elements() {
            return Err(Error::ElementCountMismatch { op, count: len, shape: self.clone() });
        }
        Ok(())
    }

    /// Checks that `axis` names a dimension of this shape.
    pub fn check_axis(&self, op: &'static str, axis: usize) -> Result<()> {
        if axis >= self.rank() {
            return Err(Error::AxisOutOfRange { op, axis, shape: self.clone() });
        }
        Ok(())
    }

    /// The shape two operands of an element-wise op broadcast to (numpy rules: trailing dimensions are aligned and
    /// must be equal or 1).
    pub fn broadcast(op: &'static str, lhs: &Shape, rhs: &Shape) -> Result<Shape> {
        let rank = lhs.rank().max(rhs.rank());
        let mut dims = vec![0; rank];
        for (i, dim) in dims.iter_mut().enumerate() {
            let l = lhs.dim_from_end(rank - 1 - i);
            let r = rhs.dim_from_end(rank - 1 - i);
            *dim = match (l, r) {
                (l, r) if l == r => l,
                (1, r) => r,
                (l, 1) => l,
                _ => return Err(Error::shape_mismatch(op, lhs, rhs)),
            };
        }
        Ok(Shape::new(dims))
    }

    /// Checks that `mask` broadcasts to `tensor` without growing it (what `mask_fill` needs): else a
    /// [`Error::ShapeMismatch`] naming both.
    pub fn check_mask_fits(op: &'static str, tensor: &Shape, mask: &Shape) -> Result<()> {
        if Shape::broadcast(op, tensor, mask)? == *tensor {
            Ok(())
        } else {
            Err(Error::shape_mismatch(op, tensor, mask))
        }
    }

    /// The shape `mask_where`'s mask and two branches broadcast to together.
    pub fn broadcast_three(op: &'static str, mask: &Shape, on_true: &Shape, on_false: &Shape) -> Result<Shape> {
        Shape::broadcast(op, &Shape::broadcast(op, mask, on_true)?, on_false)
    }

    /// The output shape of `lhs @ rhs`: the last two dimensions of each operand are a matrix, the dimensions in
    /// front of them a batch, and the two batches broadcast together (numpy rules): `[b, h, t, d] @ [d, e]` is
    /// `[b, h, t, e]`.
    pub fn matmul(lhs: &Shape, rhs: &Shape) -> Result<Shape> {
        let (l, r) = (lhs.dims(), rhs.dims());
        for operand in [lhs, rhs] {
            if operand.rank() < 2 {
                let what = "operands (matrices, or batches of them)";
                return Err(Error::unexpected_rank("matmul", what, RankRule::AtLeast(2), operand));
            }
        }
        let ([m, k], [k2, n]) = ([l[l.len() - 2], l[l.len() - 1]], [r[r.len() - 2], r[r.len() - 1]]);
        if k != k2 {
            return Err(Error::shape_mismatch("matmul", lhs, rhs));
        }
        let (lhs_batch, rhs_batch) = (Shape::new(&l[..l.len() - 2]), Shape::new(&r[..r.len() - 2]));
        let batch = Shape::broadcast("matmul", &lhs_batch, &rhs_batch)
            .map_err(|_| Error::shape_mismatch("matmul", lhs, rhs))?;
        // Two empty operands (`k == 0`) can still ask for a huge output, hence the size check.
        Shape::new([batch.dims(), &[m, n]].concat()).checked("matmul")
    }

    /// The shape with its dimensions reordered, dimension `i` being this one's `axes[i]`; `axes` must name every
    /// dimension once.
    pub fn permute(&self, axes: &[usize]) -> Result<Shape> {
        let mut seen = vec![false; self.rank()];
        for &axis in axes {
            self.check_axis("permute", axis)?;
        }
        let valid = axes.len() == self.rank() && axes.iter().all(|&axis| !std::mem::replace(&mut seen[axis], true));
        if !valid {
            return Err(Error::invalid_value("permute", "axes", axes, "a permutation of the tensor's dimensions"));
        }
        Ok(Shape::new(axes.iter().map(|&axis| self.dims[axis]).collect::<Vec<_>>()))
    }

    /// The shape after swapping two dimensions.
    pub fn swap_dims(&self, op: &'static str, dim0: usize, dim1: usize) -> Result<Shape> {
        self.check_axis(op, dim0)?;
        self.check_axis(op, dim1)?;
        let mut dims = self.dims.clone();
        dims.swap(dim0, dim1);
        Ok(Shape::new(dims))
    }

    /// Checks that a tensor of this shape can be viewed as `target`.
    pub fn check_reshape(&self, target: &Shape) -> Result<()> {
        target.check_tensor_shape("reshape")?;
        if self.num_elements() != target.num_elements() {
            return Err(Error::ElementCountMismatch {
                op: "reshape",
                count: self.num_elements(),
                shape: target.clone(),
            });
        }
        Ok(())
    }

    /// This shape with dimension `axis` set to `len`; an error naming `op` if there is no such axis.
    pub fn with_dim(&self, op: &'static str, axis: usize, len: usize) -> Result<Shape> {
        self.check_axis(op, axis)?;
        let mut dims = self.dims.clone();
        dims[axis] = len;
        Ok(Shape::new(dims))
    }

    /// Checks `narrow(axis, start, len)` against this shape.
    pub fn check_narrow(&self, axis: usize, start: usize, len: usize) -> Result<()> {
        self.check_axis("narrow", axis)?;
        let size = self.dims[axis];
        if start.checked_add(len).is_none_or(|end| end > size) {
            return Err(Error::RangeOutOfBounds { op: "narrow", axis, start, len, size });
        }
        Ok(())
    }

    /// The shape of the concatenation of `shapes` along `axis`: all other dimensions must agree.
    pub fn concat(shapes: &[Shape], axis: usize) -> Result<Shape> {
        let Some(first) = shapes.first() else {
            return Err(Error::invalid_value("cat", "tensors.len()", 0usize, "at least 1"));
        };
        first.check_axis("cat", axis)?;
        let mut total = 0;
        for shape in shapes {
            let same_rank = shape.rank() == first.rank();
            let others_agree =
                same_rank && shape.dims.iter().zip(&first.dims).enumerate().all(|(i, (a, b))| i == axis || a == b);
            if !others_agree {
                return Err(Error::shape_mismatch("cat", first, shape));
            }
            let too_long = Error::SizeOverflow { op: "cat", what: "the sum of the lengths along the axis" };
            total = shape.dims[axis].checked_add(total).ok_or(too_long)?;
        }
        first.with_dim("cat", axis, total)?.checked("cat")
    }

    fn checked(self, op: &'static str) -> Result<Shape> {
        self.check_tensor_shape(op)?;
        Ok(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn broadcasting_follows_numpy_rules() {
        let row = Shape::new([3]);
        let matrix = Shape::new([2, 3]);
        assert_eq!(Shape::broadcast("add", &matrix, &row).unwrap(), matrix);
        assert_eq!(Shape::broadcast("add", &Shape::new([2, 1]), &row).unwrap(), matrix);
        let err = Shape::broadcast("add", &matrix, &Shape::new([2])).unwrap_err();
        assert!(matches!(err, Error::ShapeMismatch { op: "add", .. }), "{err}");
    }

    #[test]
    fn matmul_shapes() {
        assert_eq!(Shape::matmul(&[2, 3].into(), &[3, 4].into()).unwrap(), Shape::new([2, 4]));
        assert_eq!(Shape::matmul(&[5, 2, 3].into(), &[5, 3, 4].into()).unwrap(), Shape::new([5, 2, 4]));
        assert!(matches!(Shape::matmul(&[2, 3].into(), &[4, 4].into()), Err(Error::ShapeMismatch { .. })));
        let vector = Shape::new([3]);
        let error = Shape::matmul(&vector, &Shape::new([3, 4])).unwrap_err();
        assert!(
            matches!(&error, Error::UnexpectedRank { expected: RankRule::AtLeast(2), shape, .. } if *shape == vector)
        );
        let error = Shape::matmul(&Shape::new([4, 3]), &vector).unwrap_err();
        assert!(matches!(&error, Error::UnexpectedRank { shape, .. } if *shape == vector), "{error}");
        // Batches broadcast: a missing batch counts as one, a batch of one stretches.
        assert_eq!(Shape::matmul(&[1, 2, 3].into(), &[3, 4].into()).unwrap(), Shape::new([1, 2, 4]));
        assert_eq!(Shape::matmul(&[2, 1, 2, 3].into(), &[4, 3, 5].into()).unwrap(), Shape::new([2, 4, 2, 5]));
        assert!(matches!(Shape::matmul(&[2, 2, 3].into(), &[3, 3, 4].into()), Err(Error::ShapeMismatch { .. })));
    }

    #[test]
    fn concat_and_narrow_checks() {
        let shapes = [Shape::new([2, 3]), Shape::new([4, 3])];
        assert_eq!(Shape::concat(&shapes, 0).unwrap(), Shape::new([6, 3]));
        assert!(matches!(Shape::concat(&shapes, 1), Err(Error::ShapeMismatch { op: "cat", .. })));
        assert!(matches!(Shape::concat(&shapes, 2), Err(Error::AxisOutOfRange { op: "cat", axis: 2, .. })));
        assert!(matches!(Shape::concat(&[], 0), Err(Error::InvalidValue { op: "cat", .. })));
        assert!(Shape::new([4, 3]).check_narrow(0, 2, 2).is_ok());
        let past_the_end = Shape::new([4, 3]).check_narrow(0, 3, 2);
        assert!(matches!(
            past_the_end,
            Err(Error::RangeOutOfBounds { op: "narrow", axis: 0, start: 3, len: 2, size: 4 })
        ));
        let overflowing = Shape::new([4, 3]).check_narrow(0, usize::MAX, 2);
        assert!(matches!(overflowing, Err(Error::RangeOutOfBounds { start: usize::MAX, len: 2, size: 4, .. })));
    }

    #[test]
    fn absurd_sizes_are_errors_not_overflows() {
        assert_eq!(Shape::new([usize::MAX, 2]).num_elements(), usize::MAX);
        assert_eq!(Shape::new([usize::MAX, 2, 0]).num_elements(), 0);
        let too_large = Shape::new([usize::MAX, 0]).check_tensor_shape("t");
        assert!(matches!(too_large, Err(Error::ShapeTooLarge { op: "t", max: Shape::MAX_ELEMENTS, .. })));
        assert!(Shape::new([1 << 20, 1 << 20, 0]).check_tensor_shape("t").is_ok());
        let empty = [Shape::new([1 << 40, 0]), Shape::new([0, 1 << 40])];
        assert!(Shape::matmul(&empty[0], &empty[1]).is_err());
        let halves = [Shape::new([usize::MAX / 2 + 1, 0]), Shape::new([usize::MAX / 2 + 1, 0])];
        assert!(matches!(Shape::concat(&halves, 0), Err(Error::SizeOverflow { op: "cat", .. })));
        let reshaped = Shape::new([0]).check_reshape(&Shape::new([usize::MAX, 0]));
        assert!(matches!(reshaped, Err(Error::ShapeTooLarge { op: "reshape", .. })));
    }
}
