//! Every op of the op list, in every float dtype, on every backend (candle, ndarray, and `Autodiff` over each):
//! called with the same operands, each gives the same outcome everywhere. The same shape, dtype and values (to the
//! dtype's tolerance) for a tensor, the same values for the rest, and the same kind of error where the operands do
//! not fit the op.
//!
//! Each op is called several ways (`every_op_support::calls`), on operands with distinct entries along every axis
//! and with windows, permutations and indices that move them, so that no call hands an operand back unchanged: an
//! op that moved the wrong entries would differ from the others. The random programs of `cross_backend.rs` test
//! the ops in depth; this test leaves none out.

mod every_op_support;

use dispatch_core::backend::OPS;
use dispatch_core::backends::{Autodiff, Candle, CandleDevice, NdArray, NdArrayDevice};
use dispatch_core::{Backend, DType};
use every_op_support::{Operands, Outcome};

/// The callback that calls every op of the list in each way `calls` has for it and collects `(op, outcome)` into
/// `$outcomes`. An op without a function in `calls` does not compile.
#[macro_export]
macro_rules! every_outcome {
    ({ $b:ty, $operands:ident, $outcomes:ident } $($(#[$doc:meta])* fn $op:ident($($param:ident: $kind:tt),*) -> $output:tt $(= $default:ident)? $(=> $derived:ident)?, $autodiff:ident;)*) => {
        $(
            for call in every_op_support::calls::$op::<$b>(&$operands) {
                $outcomes.push((stringify!($op), $crate::outcome!($b, $operands, $output, call)));
            }
        )*
    };
}

/// The outcome of every call of every op on `B`, its float operands in `dtype`.
fn outcomes<B: Backend>(operands: &Operands<B>) -> Vec<(&'static str, Outcome)> {
    let mut outcomes = Vec::new();
    dispatch_core::for_each_op! { crate::every_outcome { B, operands, outcomes } }
    outcomes
}

/// The ops that move a tensor to a device: with one device per backend here, they hand their operand back.
const MOVES: [&str; 3] = ["to_device", "int_to_device", "bool_to_device"];

/// Every op of `OPS` is called, in order; each computes in at least one call (`to_vec` only in `F32`, failing with
/// `UnexpectedDType` in the other dtypes); and no call of an op but the moves hands an operand back unchanged.
fn assert_every_op_computes(dtype: DType, outcomes: &[(&str, Outcome)], operands: &[Outcome]) {
    let mut called: Vec<&str> = outcomes.iter().map(|(op, _)| *op).collect();
    called.dedup();
    assert_eq!(called, OPS, "the ops called in {dtype} are not the op list");
    for &op in OPS {
        let of_op = || outcomes.iter().filter(|(name, _)| *name == op).map(|(_, outcome)| outcome);
        if op == "to_vec" && dtype != DType::F32 {
            assert!(of_op().all(|outcome| *outcome == Outcome::Error("UnexpectedDType".into())), "{op} in {dtype}");
            continue;
        }
        assert!(of_op().any(|outcome| !outcome.is_error()), "no call of `{op}` computes in {dtype}: {:?}", {
            of_op().collect::<Vec<_>>()
        });
        if !MOVES.contains(&op) {
            for outcome in of_op().filter(|outcome| outcome.is_tensor()) {
                assert!(!operands.contains(outcome), "`{op}` in {dtype} hands an operand back: {outcome:?}");
            }
        }
    }
}

/// Relative tolerance (absolute below magnitude 1) between two backends' values of one op: a few roundings of the
/// dtype, at least twice the largest deviation measured (in brackets). The half dtypes deviate most where
/// candle's kernels round or accumulate in the dtype and ndarray computes in f32 and rounds once (sums, softmax,
/// pooling, convolution).
fn tolerance(dtype: DType) -> f64 {
    match dtype {
        DType::F64 => 1e-14, // 1.1e-16
        DType::F32 => 1e-6,  // 3.7e-7
        DType::F16 => 4e-3,  // 1.5e-3
        DType::BF16 => 2e-2, // 8e-3
    }
}

/// How far apart `a` and `b` are, relative to the larger magnitude (absolutely below 1): 0 for equal values, NaN
/// and infinities included, and infinite where one is NaN and the other not.
fn deviation(a: f64, b: f64) -> f64 {
    if a == b || (a.is_nan() && b.is_nan()) {
        return 0.0;
    }
    let deviation = (a - b).abs() / a.abs().max(b.abs()).max(1.0);
    if deviation.is_nan() { f64::INFINITY } else { deviation }
}

/// The largest deviation between two outcomes' values, or `None` if they differ in anything else: shape, dtype,
/// count, an exact value, an error kind.
fn largest_deviation(got: &Outcome, expected: &Outcome) -> Option<f64> {
    let values = |a: &[f64], b: &[f64]| {
        (a.len() == b.len()).then(|| a.iter().zip(b).map(|(&a, &b)| deviation(a, b)).fold(0.0, f64::max))
    };
    match (got, expected) {
        (Outcome::Float { shape: s1, dtype: d1, values: v1 }, Outcome::Float { shape: s2, dtype: d2, values: v2 }) => {
            if s1 == s2 && d1 == d2 {
                values(v1, v2)
            } else {
                None
            }
        }
        (Outcome::Values(v1), Outcome::Values(v2)) => values(v1, v2),
        (got, expected) => (got == expected).then_some(0.0),
    }
}

#[test]
fn every_op_in_every_dtype_gives_the_same_outcome_on_every_backend() {
    for dtype in DType::ALL {
        let operands = Operands::<NdArray>::new(NdArrayDevice, dtype);
        let reference = outcomes(&operands);
        assert_every_op_computes(dtype, &reference, &operands.outcomes());
        let others = [
            ("candle", outcomes(&Operands::<Candle>::new(CandleDevice::cpu(), dtype))),
            ("autodiff<ndarray>", outcomes(&Operands::<Autodiff<NdArray>>::new(NdArrayDevice, dtype))),
            ("autodiff<candle>", outcomes(&Operands::<Autodiff<Candle>>::new(CandleDevice::cpu(), dtype))),
        ];
        let mut worst = (0.0, "");
        for (name, outcomes) in &others {
            assert_eq!(outcomes.len(), reference.len());
            for (call, ((op, got), (_, expected))) in outcomes.iter().zip(&reference).enumerate() {
                let deviation = largest_deviation(got, expected);
                assert!(
                    deviation.is_some_and(|deviation| deviation <= tolerance(dtype)),
                    "`{op}` (call {call}) in {dtype} on {name}: {got:?}, on ndarray: {expected:?}"
                );
                if let Some(deviation) = deviation.filter(|&deviation| deviation > worst.0) {
                    worst = (deviation, op);
                }
            }
        }
        eprintln!("{dtype}: {} calls, largest deviation {:e} (`{}`)", reference.len(), worst.0, worst.1);
    }
}
