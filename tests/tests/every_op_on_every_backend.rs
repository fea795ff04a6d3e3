//! Every op of the op list, in every float dtype, on every backend (candle, ndarray, and `Autodiff` over each):
//! called with the same operands, each gives the same outcome everywhere. The same shape, dtype and values (to the
//! dtype's tolerance) for a tensor, the same values for the rest, and the same kind of error where the operands do
//! not fit the op. The random programs of `cross_backend.rs` test the ops in depth; this test leaves none out.

use dispatch_core::backends::{Autodiff, Candle, CandleDevice, NdArray, NdArrayDevice};
use dispatch_core::{Backend, DType, Error, Result, Shape};
use dispatch_tests::close_f64;

/// What one op gave, in terms that compare across backends.
#[derive(Debug)]
enum Outcome {
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
    /// A device: each backend has its own, so only its presence compares.
    Device,
    /// The error's variant (`InvalidArgument`); the words may differ between a native kernel and a default.
    Error(String),
}

fn error_kind(error: &Error) -> String {
    let debug = format!("{error:?}");
    debug.split([' ', '{', '(']).next().unwrap_or_default().to_owned()
}

fn float<B: Backend>(result: Result<B::FloatTensor>) -> Outcome {
    match result.and_then(|tensor| Ok((B::shape(&tensor), B::dtype(&tensor), B::to_f64_vec(&tensor)?))) {
        Ok((shape, dtype, values)) => Outcome::Float { shape, dtype, values },
        Err(error) => Outcome::Error(error_kind(&error)),
    }
}

fn int<B: Backend>(result: Result<B::IntTensor>) -> Outcome {
    match result.and_then(|tensor| Ok((B::int_shape(&tensor), B::int_to_vec(&tensor)?))) {
        Ok((shape, values)) => Outcome::Int { shape, values },
        Err(error) => Outcome::Error(error_kind(&error)),
    }
}

fn bool<B: Backend>(result: Result<B::BoolTensor>) -> Outcome {
    match result.and_then(|tensor| Ok((B::bool_shape(&tensor), B::bool_to_vec(&tensor)?))) {
        Ok((shape, values)) => Outcome::Bool { shape, values },
        Err(error) => Outcome::Error(error_kind(&error)),
    }
}

fn plain<T>(result: Result<T>, outcome: impl FnOnce(T) -> Outcome) -> Outcome {
    result.map_or_else(|error| Outcome::Error(error_kind(&error)), outcome)
}

/// The outcome of an op whose output is `$output` in the op list.
#[macro_export]
macro_rules! outcome {
    ($b:ty, Float, $call:expr) => {
        float::<$b>($call)
    };
    ($b:ty, Int, $call:expr) => {
        int::<$b>($call)
    };
    ($b:ty, Bool, $call:expr) => {
        bool::<$b>($call)
    };
    ($b:ty, [Shape], $call:expr) => {
        Outcome::Shape($call)
    };
    ($b:ty, [Device], $call:expr) => {{
        let _ = $call;
        Outcome::Device
    }};
    ($b:ty, [$($dtype:tt)*], $call:expr) => {
        Outcome::DType($call)
    };
    ($b:ty, (::std::vec::Vec<f32>), $call:expr) => {
        plain($call, |values| Outcome::Values(values.into_iter().map(f64::from).collect()))
    };
    ($b:ty, (::std::vec::Vec<f64>), $call:expr) => {
        plain($call, Outcome::Values)
    };
    ($b:ty, (::std::vec::Vec<i64>), $call:expr) => {
        plain($call, Outcome::Ints)
    };
    ($b:ty, (::std::vec::Vec<bool>), $call:expr) => {
        plain($call, Outcome::Bools)
    };
}

/// The operands of the op list's sample values (`dispatch_tests::sample_operand!`) on backend `B`.
struct Operands<B: Backend> {
    float: B::FloatTensor,
    floats: Vec<B::FloatTensor>,
    int: B::IntTensor,
    bool: B::BoolTensor,
    device: B::Device,
}

/// The callback that runs every op of the list on `$operands` and collects `(op, outcome)` into `$outcomes`.
#[macro_export]
macro_rules! every_outcome {
    ({ $b:ty, $operands:ident, $outcomes:ident } $($(#[$doc:meta])* fn $op:ident($($param:ident: $kind:tt),*) -> $output:tt $(= $default:ident)? $(=> $derived:ident)?;)*) => {
        $(
            let outcome = outcome!($b, $output, <$b as Backend>::$op($(dispatch_tests::sample_operand!($operands, $kind)),*));
            $outcomes.push((stringify!($op), outcome));
        )*
    };
}

/// Every op's outcome on `B`, its float operands in `dtype`.
fn outcomes<B: Backend>(device: B::Device, dtype: DType) -> Vec<(&'static str, Outcome)> {
    let dims = Shape::new([1, 1, 1, 1]);
    let float = B::from_f64_vec(vec![0.3], dims.clone(), dtype, &device).unwrap();
    let other = B::from_f64_vec(vec![-1.25], dims.clone(), dtype, &device).unwrap();
    let operands = Operands::<B> {
        floats: vec![float.clone(), other],
        float,
        int: B::int_from_vec(vec![0], Shape::new([1]), &device).unwrap(),
        bool: B::bool_from_vec(vec![true], dims, &device).unwrap(),
        device,
    };
    let mut outcomes = Vec::new();
    dispatch_core::__backend_ops! { crate::every_outcome { B, operands, outcomes } }
    outcomes
}

/// Relative tolerance (absolute below magnitude 1) of one op on operands of magnitude about 1: a few roundings.
fn tolerance(dtype: DType) -> f64 {
    match dtype {
        DType::F64 => 1e-12,
        DType::F32 => 1e-6,
        DType::F16 => 2e-3,
        DType::BF16 => 1.6e-2,
    }
}

fn assert_same(op: &str, dtype: DType, name: &str, got: &Outcome, expected: &Outcome) {
    let context = format!("`{op}` in {dtype} on {name}: {got:?} vs {expected:?}");
    let values_agree =
        |a: &[f64], b: &[f64]| a.len() == b.len() && a.iter().zip(b).all(|(&a, &b)| close_f64(a, b, tolerance(dtype)));
    let same = match (got, expected) {
        (Outcome::Float { shape: s1, dtype: d1, values: v1 }, Outcome::Float { shape: s2, dtype: d2, values: v2 }) => {
            s1 == s2 && d1 == d2 && values_agree(v1, v2)
        }
        (Outcome::Int { shape: s1, values: v1 }, Outcome::Int { shape: s2, values: v2 }) => s1 == s2 && v1 == v2,
        (Outcome::Bool { shape: s1, values: v1 }, Outcome::Bool { shape: s2, values: v2 }) => s1 == s2 && v1 == v2,
        (Outcome::Values(v1), Outcome::Values(v2)) => values_agree(v1, v2),
        (Outcome::Ints(v1), Outcome::Ints(v2)) => v1 == v2,
        (Outcome::Bools(v1), Outcome::Bools(v2)) => v1 == v2,
        (Outcome::Shape(s1), Outcome::Shape(s2)) => s1 == s2,
        (Outcome::DType(d1), Outcome::DType(d2)) => d1 == d2,
        (Outcome::Device, Outcome::Device) => true,
        (Outcome::Error(e1), Outcome::Error(e2)) => e1 == e2,
        _ => false,
    };
    assert!(same, "{context}");
}

#[test]
fn every_op_in_every_dtype_gives_the_same_outcome_on_every_backend() {
    let mut computed = 0;
    for dtype in DType::ALL {
        let reference = outcomes::<NdArray>(NdArrayDevice, dtype);
        let others = [
            ("candle", outcomes::<Candle>(CandleDevice::cpu(), dtype)),
            ("autodiff<ndarray>", outcomes::<Autodiff<NdArray>>(NdArrayDevice, dtype)),
            ("autodiff<candle>", outcomes::<Autodiff<Candle>>(CandleDevice::cpu(), dtype)),
        ];
        for (name, outcomes) in &others {
            assert_eq!(outcomes.len(), reference.len());
            for ((op, got), (_, expected)) in outcomes.iter().zip(&reference) {
                assert_same(op, dtype, name, got, expected);
            }
        }
        eprintln!(
            "{dtype}: errors {:?}",
            reference.iter().filter(|(_, o)| matches!(o, Outcome::Error(_))).map(|(op, o)| (op, o)).collect::<Vec<_>>()
        );
        computed = reference.iter().filter(|(_, outcome)| !matches!(outcome, Outcome::Error(_))).count();
        // The operands fit most ops; the few they do not fit must fail alike, which the loop checked.
        assert!(computed * 10 >= reference.len() * 8, "only {computed} of {} ops ran in {dtype}", reference.len());
    }
    assert!(computed > 0);
}
