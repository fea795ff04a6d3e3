//! What an op gave, in terms that compare across backends.

use dispatch_core::{Backend, DType, Error, Result, Shape};

#[derive(Debug, PartialEq)]
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
    /// The error's variant (`AxisOutOfRange`); the words may differ between a native kernel and a default.
    Error(String),
}

impl Outcome {
    /// Whether the op failed.
    pub fn is_error(&self) -> bool {
        matches!(self, Outcome::Error(_))
    }

    /// Whether this is a tensor (float, int or bool), the kind of output that could be an operand handed back.
    pub fn is_tensor(&self) -> bool {
        matches!(self, Outcome::Float { .. } | Outcome::Int { .. } | Outcome::Bool { .. })
    }
}

fn error_kind(error: &Error) -> String {
    let debug = format!("{error:?}");
    debug.split([' ', '{', '(']).next().unwrap_or_default().to_owned()
}

pub fn float<B: Backend>(result: Result<B::FloatTensor>) -> Outcome {
    match result.and_then(|tensor| Ok((B::shape(&tensor), B::dtype(&tensor), B::to_f64_vec(&tensor)?))) {
        Ok((shape, dtype, values)) => Outcome::Float { shape, dtype, values },
        Err(error) => Outcome::Error(error_kind(&error)),
    }
}

pub fn int<B: Backend>(result: Result<B::IntTensor>) -> Outcome {
    match result.and_then(|tensor| Ok((B::int_shape(&tensor), B::int_to_vec(&tensor)?))) {
        Ok((shape, values)) => Outcome::Int { shape, values },
        Err(error) => Outcome::Error(error_kind(&error)),
    }
}

pub fn bool<B: Backend>(result: Result<B::BoolTensor>) -> Outcome {
    match result.and_then(|tensor| Ok((B::bool_shape(&tensor), B::bool_to_vec(&tensor)?))) {
        Ok((shape, values)) => Outcome::Bool { shape, values },
        Err(error) => Outcome::Error(error_kind(&error)),
    }
}

pub fn plain<T>(result: Result<T>, outcome: impl FnOnce(T) -> Outcome) -> Outcome {
    result.map_or_else(|error| Outcome::Error(error_kind(&error)), outcome)
}

/// The outcome of one call of an op whose output is `$output` in the op list, on `$operands`.
#[macro_export]
macro_rules! outcome {
    ($b:ty, $operands:ident, Float, $call:expr) => {
        $crate::every_op_support::float::<$b>($call)
    };
    ($b:ty, $operands:ident, Int, $call:expr) => {
        $crate::every_op_support::int::<$b>($call)
    };
    ($b:ty, $operands:ident, Bool, $call:expr) => {
        $crate::every_op_support::bool::<$b>($call)
    };
    ($b:ty, $operands:ident, [Shape], $call:expr) => {
        $crate::every_op_support::Outcome::Shape($call)
    };
    ($b:ty, $operands:ident, [Device], $call:expr) => {
        $crate::every_op_support::Outcome::Device { the_operands: $call == $operands.device }
    };
    ($b:ty, $operands:ident, [$($dtype:tt)*], $call:expr) => {
        $crate::every_op_support::Outcome::DType($call)
    };
    ($b:ty, $operands:ident, (::std::vec::Vec<f32>), $call:expr) => {
        $crate::every_op_support::plain($call, |values| {
            $crate::every_op_support::Outcome::Values(values.into_iter().map(f64::from).collect())
        })
    };
    ($b:ty, $operands:ident, (::std::vec::Vec<f64>), $call:expr) => {
        $crate::every_op_support::plain($call, $crate::every_op_support::Outcome::Values)
    };
    ($b:ty, $operands:ident, (::std::vec::Vec<i64>), $call:expr) => {
        $crate::every_op_support::plain($call, $crate::every_op_support::Outcome::Ints)
    };
    ($b:ty, $operands:ident, (::std::vec::Vec<bool>), $call:expr) => {
        $crate::every_op_support::plain($call, $crate::every_op_support::Outcome::Bools)
    };
}
