//! What an op gave, in terms that compare across backends.

use std::fmt;
use std::mem::Discriminant;

use dispatch_core::{Backend, DType, Error, Result, Shape};

#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    Float {
        shape: Shape,
        dtype: DType,
        values: Vec<f64>,
    },
    Int {
        shape: Shape,
        values: Vec<i64>,
    },
    Bool {
        shape: Shape,
        values: Vec<bool>,
    },
    Values(Vec<f64>),
    Ints(Vec<i64>),
    Bools(Vec<bool>),
    Shape(Shape),
    DType(DType),
    /// A device: each backend has its own type, so what compares is whether it is the operands' device.
    Device {
        the_operands: bool,
    },
    Error(ErrorKind),
}

impl Outcome {
    /// Whether the op failed.
    pub fn is_error(&self) -> bool {
        matches!(self, Outcome::Error(_))
    }

    /// Whether this is a tensor (float, int or bool), the kind of output that could be an operand handed back.
    #[cfg(test)]
    pub fn is_tensor(&self) -> bool {
        matches!(self, Outcome::Float { .. } | Outcome::Int { .. } | Outcome::Bool { .. })
    }
}

/// What a report says an outcome is: its kind and shape, not its values.
impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Outcome::Float { shape, dtype, .. } => write!(f, "a {shape} {dtype} tensor"),
            Outcome::Int { shape, .. } => write!(f, "a {shape} int tensor"),
            Outcome::Bool { shape, .. } => write!(f, "a {shape} bool tensor"),
            Outcome::Values(values) => write!(f, "{} values", values.len()),
            Outcome::Ints(values) => write!(f, "ints {values:?}"),
            Outcome::Bools(values) => write!(f, "bools {values:?}"),
            Outcome::Shape(shape) => write!(f, "shape {shape}"),
            Outcome::DType(dtype) => write!(f, "dtype {dtype}"),
            Outcome::Device { the_operands: true } => f.write_str("the operands' device"),
            Outcome::Device { the_operands: false } => f.write_str("another device than the operands'"),
            Outcome::Error(kind) => write!(f, "{kind}"),
        }
    }
}

/// The kind of an error: its variant, compared by [`std::mem::discriminant`], so that the suite depends neither on
/// the words of a message (a native kernel and a default word theirs differently) nor on the variants' fields. The
/// name and the message are for the reader of a report.
#[derive(Clone, Debug)]
pub struct ErrorKind {
    variant: Discriminant<Error>,
    name: String,
    message: String,
}

impl ErrorKind {
    pub fn of(error: &Error) -> Self {
        let debug = format!("{error:?}");
        let name = debug.split([' ', '{', '(']).next().unwrap_or_default().to_owned();
        Self { variant: std::mem::discriminant(error), name, message: error.to_string() }
    }
}

impl PartialEq for ErrorKind {
    fn eq(&self, other: &Self) -> bool {
        self.variant == other.variant
    }
}

impl fmt::Display for ErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "error {} ({})", self.name, self.message)
    }
}

pub fn float<B: Backend>(result: Result<B::FloatTensor>) -> Outcome {
    match result.and_then(|tensor| Ok((B::shape(&tensor), B::dtype(&tensor), B::to_f64_vec(&tensor)?))) {
        Ok((shape, dtype, values)) => Outcome::Float { shape, dtype, values },
        Err(error) => Outcome::Error(ErrorKind::of(&error)),
    }
}

pub fn int<B: Backend>(result: Result<B::IntTensor>) -> Outcome {
    match result.and_then(|tensor| Ok((B::int_shape(&tensor), B::int_to_vec(&tensor)?))) {
        Ok((shape, values)) => Outcome::Int { shape, values },
        Err(error) => Outcome::Error(ErrorKind::of(&error)),
    }
}

pub fn bool<B: Backend>(result: Result<B::BoolTensor>) -> Outcome {
    match result.and_then(|tensor| Ok((B::bool_shape(&tensor), B::bool_to_vec(&tensor)?))) {
        Ok((shape, values)) => Outcome::Bool { shape, values },
        Err(error) => Outcome::Error(ErrorKind::of(&error)),
    }
}

pub fn plain<T>(result: Result<T>, outcome: impl FnOnce(T) -> Outcome) -> Outcome {
    result.map_or_else(|error| Outcome::Error(ErrorKind::of(&error)), outcome)
}

/// The outcome of one call of an op whose output is `$output` in the op list, on `$operands`.
macro_rules! outcome {
    ($b:ty, $operands:ident, Float, $call:expr) => {
        $crate::outcome::float::<$b>($call)
    };
    ($b:ty, $operands:ident, Int, $call:expr) => {
        $crate::outcome::int::<$b>($call)
    };
    ($b:ty, $operands:ident, Bool, $call:expr) => {
        $crate::outcome::bool::<$b>($call)
    };
    ($b:ty, $operands:ident, [Shape], $call:expr) => {
        $crate::outcome::Outcome::Shape($call)
    };
    ($b:ty, $operands:ident, [Device], $call:expr) => {
        $crate::outcome::Outcome::Device { the_operands: $call == $operands.device }
    };
    ($b:ty, $operands:ident, [$($dtype:tt)*], $call:expr) => {
        $crate::outcome::Outcome::DType($call)
    };
    ($b:ty, $operands:ident, (::std::vec::Vec<f32>), $call:expr) => {
        $crate::outcome::plain($call, |values| {
            $crate::outcome::Outcome::Values(values.into_iter().map(f64::from).collect())
        })
    };
    ($b:ty, $operands:ident, (::std::vec::Vec<f64>), $call:expr) => {
        $crate::outcome::plain($call, $crate::outcome::Outcome::Values)
    };
    ($b:ty, $operands:ident, (::std::vec::Vec<i64>), $call:expr) => {
        $crate::outcome::plain($call, $crate::outcome::Outcome::Ints)
    };
    ($b:ty, $operands:ident, (::std::vec::Vec<bool>), $call:expr) => {
        $crate::outcome::plain($call, $crate::outcome::Outcome::Bools)
    };
}

pub(crate) use outcome;
