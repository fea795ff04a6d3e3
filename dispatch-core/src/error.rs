//! The one error type of every fallible op. Bad input is an `Err`, never a panic.

mod argument;
mod message;

pub use argument::{ArgumentValue, RankRule};
use message::{range_end, readable_bytes, record_mismatch, scalar_hint};

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

    /// A tensor whose rank (number of dimensions; unrelated to a process rank) is not one the op takes: a vector
    /// to `matmul`, a 3-D input to `conv2d`, the empty shape `[]` anywhere.
    #[error("invalid argument to `{op}`: needs {what} of {expected}, got shape {shape}{}", scalar_hint(.shape))]
    UnexpectedRank {
        /// The op that refused the tensor (`transpose`).
        op: &'static str,
        /// The operand, as the op names it (`an input [batch, channels, height, width]`).
        what: &'static str,
        /// The ranks the op takes.
        expected: RankRule,
        /// The tensor's shape.
        shape: Shape,
    },

    /// A tensor of a rank the op takes whose sizes break another of its rules: a loss of more than one element,
    /// a convolution's input with an empty plane, an empty axis to take the largest entry of.
    #[error("invalid argument to `{op}`: needs {expected}, got shape {shape}")]
    UnexpectedShape {
        /// The op that refused the tensor (`backward`).
        op: &'static str,
        /// What the op needs, in words (`a one-element loss`).
        expected: &'static str,
        /// The tensor's shape.
        shape: Shape,
    },

    /// A number of values that does not fill a shape: data handed to `from_vec`, or a tensor `reshape`d to a shape
    /// of another element count.
    #[error(
        "invalid argument to `{op}`: {count} values do not fill shape {shape} ({} elements)",
        .shape.num_elements()
    )]
    ElementCountMismatch {
        /// The op that refused the values (`from_vec`, `reshape`).
        op: &'static str,
        /// How many values there are: the data's length, or the element count of the tensor reshaped.
        count: usize,
        /// The shape they should fill.
        shape: Shape,
    },

    /// A shape with more elements than fit: more than [`Shape::MAX_ELEMENTS`] for a tensor, or than one call of the
    /// distributed engine moves. Unlike [`Error::OutOfMemory`], no machine holds it.
    #[error("invalid argument to `{op}`: shape {shape} is too large: at most {max} elements fit")]
    ShapeTooLarge {
        /// The op that refused the shape (`full`).
        op: &'static str,
        /// The shape asked for.
        shape: Shape,
        /// The most elements that fit: [`Shape::MAX_ELEMENTS`], or an engine's own limit.
        max: usize,
    },

    /// An axis that names no dimension of the tensor.
    #[error("invalid argument to `{op}`: axis {axis} is out of range for a tensor of shape {shape}")]
    AxisOutOfRange {
        /// The op that got the axis (`sum_dim`).
        op: &'static str,
        /// The axis asked for.
        axis: usize,
        /// The shape of the tensor it should name a dimension of.
        shape: Shape,
    },

    /// An index outside `0..len`: a value of an int tensor of indices (`gather`, `index_select`, `one_hot`), or the
    /// root rank of a `broadcast` in a group of `len` ranks.
    #[error("invalid argument to `{op}`: index {index} is out of range 0..{len}")]
    IndexOutOfRange {
        /// The op that got the index (`index_select`).
        op: &'static str,
        /// The index, as given; an index of type `usize` past `i64::MAX` (a root rank) saturates there.
        index: i64,
        /// How many entries there are to index: the size of the axis, the classes, the ranks.
        len: usize,
    },

    /// A range `start..start + len` that reaches past the end of an axis (`narrow`).
    #[error(
        "invalid argument to `{op}`: range {start}..{} is out of bounds for axis {axis} of size {size}",
        range_end(.start, .len)
    )]
    RangeOutOfBounds {
        /// The op that got the range (`narrow`).
        op: &'static str,
        /// The axis the range runs along.
        axis: usize,
        /// The first entry of the range.
        start: usize,
        /// How many entries the range takes.
        len: usize,
        /// The size of the axis.
        size: usize,
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
        lhs: crate::dtype::DType,
        /// The dtype of the other operand.
        rhs: crate::dtype::DType,
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
        expected: crate::dtype::DType,
        /// The tensor's dtype.
        actual: crate::dtype::DType,
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

    /// An argument outside the values the op takes: a zero divisor, a probability outside `[0, 1)`, bounds with
    /// `min > max`, non-finite random bounds, a stride of 0, an empty list of tensors.
    #[error("invalid argument to `{op}`: `{parameter}` is {value}; it must be {expected}")]
    InvalidValue {
        /// The op or constructor that refused the argument (`clamp`, `Dropout::new`).
        op: &'static str,
        /// The parameter, as the op names it (`max`, `p`, `tensors.len()`).
        parameter: &'static str,
        /// The value given.
        value: ArgumentValue,
        /// What the value must be, in words (`a probability in [0, 1)`).
        expected: &'static str,
    },

    /// A convolution or pooling window that spans more cells than the input holds once padded, along one side.
    #[error(
        "invalid argument to `{op}`: a window spanning {span} cells does not fit an input of {input} padded to {padded}"
    )]
    WindowTooLarge {
        /// The op that slides the window (`max_pool2d`).
        op: &'static str,
        /// The cells one window spans, `dilation * (kernel - 1) + 1`; exact, so wider than `usize`.
        span: u128,
        /// The input's size along that side.
        input: usize,
        /// The input's size with the padding on both ends, `input + 2 * padding`; exact, so wider than `usize`.
        padded: u128,
    },

    /// A failure no other variant describes, with what is wrong in words: within dispatch, a broken invariant of an
    /// engine or a malformed message from another MPI rank, each place saying why no variant fits; also what a
    /// user's own code (a data loader, an extension) reports through [`Error::invalid`].
    #[error("invalid argument to `{op}`: {reason}")]
    InvalidArgument {
        /// The op or the part of dispatch that failed (`max_pool2d backward`, `mpi`).
        op: &'static str,
        /// What is wrong, in words.
        reason: String,
    },

    /// A move of a tensor that records an autodiff graph to a device of another backend: through host memory its
    /// values would arrive untracked and its gradient would be lost. `detach()` first moves the values alone.
    #[error(
        "`{op}` would cut the autodiff graph: the tensor records it on `{from}`, and `{to}` is another backend, \
         where its gradient would be lost; call `detach()` first to move its values alone"
    )]
    GraphCut {
        /// The op that would cut the graph: `to_device`.
        op: &'static str,
        /// The device the tensor records its graph on, as displayed (`autodiff:candle`).
        from: String,
        /// The device it was to move to, as displayed (`ndarray`).
        to: String,
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

    /// The ranks of a group called one collective with arguments that do not agree: different shapes, different
    /// element types (an `F64` tensor's values travel as `f64`, every other dtype's as `f32`), different
    /// collectives, roots or reduce ops. Every rank gets this error for that call; the group stays usable.
    #[error("ranks disagree in collective `{op}`: {details}")]
    CollectiveMismatch {
        /// The collective this rank called (`all_reduce`).
        op: &'static str,
        /// What the ranks disagree on: the call or the shape of each rank.
        details: String,
    },

    /// A rank joined a collective while it was still in another: clones of one rank's communicator used at once,
    /// from two threads. This call fails; the collective already under way goes on. The in-process engine reports
    /// it; under MPI, the library's own rules for concurrent calls apply.
    #[error(
        "rank {rank} joined collective `{op}` while still in another; a rank takes part in one collective at a time"
    )]
    RankBusy {
        /// The collective the rank tried to join (`all_reduce`).
        op: &'static str,
        /// The rank whose communicator was used twice at once.
        rank: usize,
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
    /// space, an unfolded input with more elements than `usize` counts. Arguments the op refuses outright are
    /// another variant instead ([`Error::InvalidValue`], [`Error::ShapeTooLarge`]), whatever their size.
    #[error("size overflow in `{op}`: {what} does not fit in usize")]
    SizeOverflow {
        /// The op whose size overflowed (`conv2d`).
        op: &'static str,
        /// Which size, in words (`the padded input height`).
        what: &'static str,
    },

    /// A record whose entries do not match what loads it: a saved file without a parameter of the module, or with
    /// tensors (or optimizer state) the module does not have. Nothing is skipped or dropped silently.
    #[error("record mismatch in `{op}`: {}", record_mismatch(.missing, .unexpected))]
    RecordMismatch {
        /// The op that loads the record (`load`, `load_state`).
        op: &'static str,
        /// The entries the module needs and the record lacks, by name.
        missing: Vec<String>,
        /// The entries of the record that nothing takes, by name.
        unexpected: Vec<String>,
    },

    /// A file could not be read or written.
    #[error("`{op}` failed on {}: {error}", .path.display())]
    Io {
        /// The op that touched the file (`save`, `load`).
        op: &'static str,
        /// The file, as the user named it.
        path: std::path::PathBuf,
        /// The operating system's error.
        error: std::io::Error,
    },

    /// The CPU backends' thread pool could not be built as asked: rayon's global pool exists already (an earlier
    /// call, or a CPU op split across threads before the call, built it), or the system refused a thread.
    #[error("`{op}` could not build the CPU backends' thread pool")]
    ThreadPool {
        /// The call that tried: `build_pool_with_calling_thread`.
        op: &'static str,
        /// rayon's own error.
        #[source]
        source: BoxedSource,
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

    /// An [`Error::UnexpectedRank`] in `op`: `what` (the operand, in words) has `shape`, whose rank is not
    /// `expected`.
    pub fn unexpected_rank(op: &'static str, what: &'static str, expected: RankRule, shape: &Shape) -> Self {
        Self::UnexpectedRank { op, what, expected, shape: shape.clone() }
    }

    /// An [`Error::UnexpectedShape`] in `op`: the op needs `expected` (in words) and got a tensor of `shape`.
    pub fn unexpected_shape(op: &'static str, expected: &'static str, shape: &Shape) -> Self {
        Self::UnexpectedShape { op, expected, shape: shape.clone() }
    }

    /// An [`Error::InvalidValue`] in `op`: `parameter` is `value`, which is not `expected` (in words).
    pub fn invalid_value(
        op: &'static str,
        parameter: &'static str,
        value: impl Into<ArgumentValue>,
        expected: &'static str,
    ) -> Self {
        Self::InvalidValue { op, parameter, value: value.into(), expected }
    }

    /// An [`Error::InvalidArgument`] in `op`, with `reason` saying what is wrong: for a failure that no structured
    /// variant describes.
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
