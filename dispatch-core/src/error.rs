//! The one error type of every fallible op. Bad input is an `Err`, never a panic.

use crate::shape::Shape;

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The source of a [`Error::Backend`]: whatever the underlying library reported.
pub type BoxedSource = Box<dyn std::error::Error + Send + Sync + 'static>;

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Two operands whose shapes do not fit the op.
    #[error("shape mismatch in `{op}`: {lhs} and {rhs}")]
    ShapeMismatch { op: &'static str, lhs: Shape, rhs: Shape },

    /// Two operands on different devices, or on different backends of a dispatch enum.
    #[error("`{op}` mixes devices: `{lhs}` and `{rhs}`; move one with `to_device` first")]
    DeviceMismatch { op: &'static str, lhs: String, rhs: String },

    /// An argument out of its domain: a bad axis, a reshape to another element count, an empty shape, data that
    /// does not fill the shape.
    #[error("invalid argument to `{op}`: {reason}")]
    InvalidArgument { op: &'static str, reason: String },

    /// A gradient op on a tensor of a device that does not record gradients.
    #[error(
        "`{op}` needs a device that records gradients, but the tensor lives on `{device}`; pick an autodiff device"
    )]
    NotDifferentiable { op: &'static str, device: String },

    /// The underlying library failed.
    #[error("backend `{backend}` failed in `{op}`")]
    Backend {
        backend: String,
        op: &'static str,
        #[source]
        source: BoxedSource,
    },
}

impl Error {
    pub fn shape_mismatch(op: &'static str, lhs: &Shape, rhs: &Shape) -> Self {
        Self::ShapeMismatch { op, lhs: lhs.clone(), rhs: rhs.clone() }
    }

    pub fn invalid(op: &'static str, reason: impl Into<String>) -> Self {
        Self::InvalidArgument { op, reason: reason.into() }
    }

    pub fn device_mismatch(op: &'static str, lhs: impl ToString, rhs: impl ToString) -> Self {
        Self::DeviceMismatch { op, lhs: lhs.to_string(), rhs: rhs.to_string() }
    }

    pub fn backend(backend: impl Into<String>, op: &'static str, source: impl Into<BoxedSource>) -> Self {
        Self::Backend { backend: backend.into(), op, source: source.into() }
    }
}
