//! The suite's own checks: its calls make every op compute and move every operand, and its checkers fail where a
//! backend differs.

use dispatch_core::backend::OPS;
use dispatch_core::backends::{Autodiff, NdArray, NdArrayDevice};
use dispatch_core::{AutodiffBackend, Backend, DType, Error, Shape};

use crate::calls::Floats;
use crate::checks::mixing_dtypes_error;
use crate::gradients::{DifferentiableOp, Setup, check_op};
use crate::operands::Operands;
use crate::outcome::{ErrorKind, Outcome};
use crate::report::{Group, GroupReport};
use crate::run::outcomes;

/// The ops that may hand their operand back: moves to the one device there is, and a cast to the own dtype.
const MAY_HAND_BACK: [&str; 4] = ["to_device", "int_to_device", "bool_to_device", "cast"];

#[test]
fn every_op_computes_in_some_call_and_no_call_hands_an_operand_back() {
    for dtype in DType::ALL {
        let operands = Operands::<NdArray>::new(NdArrayDevice, dtype, &DType::ALL).unwrap();
        let handed_back = operands.outcomes();
        let outcomes = outcomes(&operands);
        let called: Vec<&str> = outcomes.iter().map(|of| of.op).collect();
        assert_eq!(called, OPS, "the ops called in {dtype} are not the op list");
        for of in &outcomes {
            let (op, calls) = (of.op, of.calls.as_ref().unwrap());
            // `to_vec` reads F32 tensors alone; in the other dtypes every call of it must fail.
            if op == "to_vec" && dtype != DType::F32 {
                assert!(calls.iter().all(Outcome::is_error), "{op} in {dtype}: {calls:?}");
                continue;
            }
            assert!(
                calls.iter().any(|outcome| !outcome.is_error()),
                "no call of `{op}` computes in {dtype}: {calls:?}"
            );
            if !MAY_HAND_BACK.contains(&op) {
                for outcome in calls.iter().filter(|outcome| outcome.is_tensor()) {
                    assert!(!handed_back.contains(outcome), "`{op}` in {dtype} hands an operand back: {outcome:?}");
                }
            }
        }
    }
}

#[test]
fn the_reference_mixing_two_dtypes_is_a_dtype_mismatch() {
    let tensor = |dtype| NdArray::from_f64_vec(vec![1.0], Shape::new([1]), dtype, &NdArrayDevice).unwrap();
    let error = NdArray::mul(&tensor(DType::F16), &tensor(DType::BF16)).unwrap_err();
    assert!(matches!(error, Error::DTypeMismatch { .. }), "{error:?}");
    assert_eq!(ErrorKind::of(&error), mixing_dtypes_error());
    assert_ne!(ErrorKind::of(&Error::invalid("mul", "another kind")), mixing_dtypes_error());
}

type Ad = Autodiff<NdArray>;

/// The gradient check of one op made of `tested`, against `reference`, on `Autodiff<NdArray>`.
fn check_one(tested: fn(&Operands<Ad>) -> Floats<Ad>, reference: fn(&Operands<Ad>) -> Floats<Ad>) -> GroupReport {
    let setup = Setup::<Ad>::new(&NdArrayDevice, &DType::ALL).unwrap();
    let mut report = GroupReport::new(Group::Gradients);
    check_op(&setup, &DifferentiableOp { name: "mul", tested, reference }, &mut report).unwrap();
    report
}

#[test]
fn the_gradient_check_passes_a_right_rule_and_tells_a_wrong_one() {
    let square = check_one(|o| vec![Ad::mul(&o.cube, &o.cube)], |o| vec![Ad::mul(&o.cube, &o.cube)]);
    assert!(square.conforms(), "{square}");
    assert_eq!(square.checked, 24);
    // One factor cut from the graph: backward gives `x` where the derivative of `x²` is `2 x`.
    let half = check_one(
        |o| vec![Ad::detach(&o.cube).and_then(|cut| Ad::mul(&o.cube, &cut))],
        |o| vec![Ad::mul(&o.cube, &o.cube)],
    );
    assert_eq!(half.differences.len(), 1, "{half}");
    assert!(half.differences[0].what.starts_with("the gradient by `cube` at entry 0 is "), "{half}");
}

#[test]
fn the_gradient_check_tells_an_operand_the_backward_pass_leaves_out() {
    let dropped = check_one(
        |o| vec![Ad::detach(&o.column).and_then(|column| Ad::mul(&o.cube, &column))],
        |o| vec![Ad::mul(&o.cube, &o.column)],
    );
    assert_eq!(dropped.differences.len(), 1, "{dropped}");
    let what = &dropped.differences[0].what;
    assert!(what.starts_with("the gradient by `column` at entry 0 is 0, central differences give "), "{what}");
}

#[test]
fn every_differentiable_op_has_a_call_the_gradient_check_checks() {
    let report = crate::check_gradients::<Ad>(&NdArrayDevice);
    assert!(report.conforms(), "{report}");
    assert!(report.not_checked.is_empty(), "{report}");
    eprintln!("{report}");
}
