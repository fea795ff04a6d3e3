//! The one error type of every fallible op. Bad input is an `Err`, never a panic.

use crate::shape::Shape;

/// The result of a fallible op: [`Error`] unless another error type is given.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// The source of a [`Error::Backend`]: whatever the underlying library reported.
pub type BoxedSource = Box<dyn std::error::Error + Send + Sync + 'static>;

/// Why an op failed: what was wrong with the input, the devices, the group of ranks or the backend library.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Two operands whose shapes do not fit the op.
    #[error("shape mismatch in `{op}`: {lhs} and {rhs}")]
    ShapeMismatch {
        /// The op that failed, as the user called it (`matmul`).
        op: &'static str,
        /// The shape of the first operand.
        lhs: Shape,
        /// The shape of the other operand; for `cat`, the first tensor whose shape does not fit.
        rhs: Shape,
    },

    /// Two operands on different devices, or on different backends of a dispatch enum.
    #[error("`{op}` mixes devices: `{lhs}` and `{rhs}`; move one with `to_device` first")]
    DeviceMismatch {
        /// The op that failed, as the user called it (`add`).
        op: &'static str,
        /// The device of the first operand, as displayed (`cpu`, `cuda:0`).
        lhs: String,
        /// The device of the other operand, as displayed.
        rhs: String,
    },

    /// Two float operands of different dtypes: ops never promote silently.
    #[error("`{op}` mixes dtypes `{lhs}` and `{rhs}`; cast one with `cast` first")]
    DTypeMismatch {
        /// The op that failed, as the user called it (`add`).
        op: &'static str,
        /// The dtype of the first operand.
        lhs: crate::DType,
        /// The dtype of the other operand.
        rhs: crate::DType,
    },

    /// A float tensor of another dtype than the op reads: `to_vec` gives `f32` values and never rounds an `F64`
    /// tensor silently.
    #[error(
        "`{op}` reads `{expected}` tensors, but this one is `{actual}`; `cast` it first, or read any dtype exactly with `to_f64_vec`"
    )]
    UnexpectedDType {
        /// The op that refused the tensor (`to_vec`).
        op: &'static str,
        /// The dtype the op reads.
        expected: crate::DType,
        /// The tensor's dtype.
        actual: crate::DType,
    },

    /// A tensor of the backend library's own dtype that `dispatch` does not model as a float tensor: a candle
    /// tensor of `u32` or `f8e4m3` handed in through `Tensor::from_primitive`, say, or of a dtype candle added after
    /// this release.
    #[error(
        "`{op}` got a tensor of `{backend}` dtype `{dtype}`, which dispatch does not model; float tensors hold f32, f64, f16 or bf16"
    )]
    UnsupportedDType {
        /// The op that refused the tensor.
        op: &'static str,
        /// The backend whose dtype it is (`candle`).
        backend: &'static str,
        /// The library's name for the dtype (`u32`).
        dtype: &'static str,
    },

    /// An argument out of its domain: a bad axis, a reshape to another element count, an empty shape, data that
    /// does not fill the shape.
    #[error("invalid argument to `{op}`: {reason}")]
    InvalidArgument {
        /// The op or constructor that rejected the argument (`reshape`, `DistributedDevice::in_process`).
        op: &'static str,
        /// What is wrong, in words (`axis 2 is out of range for a tensor of shape [2, 3]`).
        reason: String,
    },

    /// A gradient op on a tensor of a device that does not record gradients.
    #[error(
        "`{op}` needs a device that records gradients, but the tensor lives on `{device}`; pick an autodiff device"
    )]
    NotDifferentiable {
        /// The gradient op called: `require_grad` or `backward`.
        op: &'static str,
        /// The device the tensor lives on, as displayed (`cpu`, `host`).
        device: String,
    },

    /// The ranks of a group called one collective with arguments that do not agree: different shapes (every
    /// collective exchanges `f32` values, so the shape is all that can differ), different collectives, different
    /// roots or reduce ops. Every rank gets this error for that call; the group stays usable.
    #[error("ranks disagree in collective `{op}`: {details}")]
    CollectiveMismatch {
        /// The collective this rank called (`all_reduce`).
        op: &'static str,
        /// What the ranks disagree on: the call or the shape of each rank.
        details: String,
    },

    /// A collective could not complete because another rank of the group failed, left, or stopped answering.
    /// Every later collective of the same run fails the same way; the next run starts with a fresh group.
    #[error("collective `{op}` on rank {rank} cannot complete: {reason}")]
    PeerFailed {
        /// The collective that cannot complete (`all_reduce`).
        op: &'static str,
        /// The rank that got this error; `reason` says which rank failed.
        rank: usize,
        /// Which rank failed and how, e.g. that rank 0 abandoned the collective or its work returned an error.
        reason: String,
    },

    /// A rank waited longer than the group's timeout for the others to join a collective.
    #[error("collective `{op}` on rank {rank} timed out after {timeout:?} waiting for rank(s) {missing:?}")]
    CollectiveTimeout {
        /// The collective the rank waited in (`all_reduce`).
        op: &'static str,
        /// The rank that waited and gave up.
        rank: usize,
        /// How long the rank waited: the group's timeout.
        timeout: std::time::Duration,
        /// The ranks that had not joined the collective when the wait ended, in rank order.
        missing: Vec<usize>,
    },

    /// The work of a rank panicked; the panic was caught so the other ranks fail cleanly instead of hanging.
    #[error("rank {rank} panicked: {message}")]
    RankPanicked {
        /// The rank whose work panicked.
        rank: usize,
        /// The panic message, or a note that the panic carried no string.
        message: String,
    },

    /// The distributed engine could not be set up (e.g. MPI could not be initialised).
    #[error("distributed engine `{engine}` is unavailable: {reason}")]
    EngineUnavailable {
        /// The engine that could not start: `in-process` or `mpi`.
        engine: &'static str,
        /// What went wrong while setting it up.
        reason: String,
    },

    /// A buffer larger than this machine can give: an op's output (or a copy it makes) asks for `bytes` bytes,
    /// more than [`memory::limit`](crate::memory::limit) or more than the allocator would reserve. Shapes like this
    /// are valid, just too large for the memory here; see [`crate::memory`] for the rule. `bytes` is `usize::MAX`
    /// for a request whose size overflows.
    #[error("out of memory in `{op}`: {bytes} bytes ({}) cannot be allocated on this machine", readable_bytes(.bytes))]
    OutOfMemory {
        /// The op whose buffer could not be allocated.
        op: &'static str,
        /// The size of the buffer asked for.
        bytes: usize,
    },

    /// A size an op computes from valid arguments that does not fit in `usize`: a window padded past the address
    /// space, an unfolded input with more elements than `usize` counts. Arguments the op refuses outright are an
    /// [`Error::InvalidArgument`] instead, whatever their size.
    #[error("size overflow in `{op}`: {what} does not fit in usize")]
    SizeOverflow {
        /// The op whose size overflowed (`conv2d`).
        op: &'static str,
        /// Which size, in words (`the padded input height`).
        what: &'static str,
    },

    /// The underlying library failed.
    #[error("backend `{backend}` failed in `{op}`")]
    Backend {
        /// The name of the backend that failed (`ndarray`, `candle`).
        backend: String,
        /// The op the backend was running (`matmul`).
        op: &'static str,
        /// The library's own error.
        #[source]
        source: BoxedSource,
    },
}

impl Error {
    /// An [`Error::ShapeMismatch`] in `op`, with copies of both shapes.
    pub fn shape_mismatch(op: &'static str, lhs: &Shape, rhs: &Shape) -> Self {
        Self::ShapeMismatch { op, lhs: lhs.clone(), rhs: rhs.clone() }
    }

    /// An [`Error::InvalidArgument`] in `op`, with `reason` saying what is wrong.
    pub fn invalid(op: &'static str, reason: impl Into<String>) -> Self {
        Self::InvalidArgument { op, reason: reason.into() }
    }

    /// An [`Error::DeviceMismatch`] in `op`, naming both devices by their `Display` form.
    pub fn device_mismatch(op: &'static str, lhs: impl ToString, rhs: impl ToString) -> Self {
        Self::DeviceMismatch { op, lhs: lhs.to_string(), rhs: rhs.to_string() }
    }

    /// An [`Error::Backend`]: backend `backend` failed in `op` with the library error `source`.
    pub fn backend(backend: impl Into<String>, op: &'static str, source: impl Into<BoxedSource>) -> Self {
        Self::Backend { backend: backend.into(), op, source: source.into() }
    }
}

/// `bytes` in the largest binary unit that keeps it at 1 or more, e.g. `4.0 TiB`.
fn readable_bytes(bytes: &usize) -> String {
    const UNITS: [&str; 7] = ["B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    let mut value = *bytes as f64;
    let mut unit = 0;
    while value >= 1024.0 && unit + 1 < UNITS.len() {
        value /= 1024.0;
        unit += 1;
    }
    format!("{value:.1} {}", UNITS[unit])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn out_of_memory_names_the_op_and_the_bytes_in_a_readable_unit() {
        let error = Error::OutOfMemory { op: "full", bytes: 1 << 42 };
        assert_eq!(
            error.to_string(),
            "out of memory in `full`: 4398046511104 bytes (4.0 TiB) cannot be allocated on this machine"
        );
        assert_eq!(readable_bytes(&1536), "1.5 KiB");
        assert_eq!(readable_bytes(&usize::MAX), "16.0 EiB");
    }
}
