//! The conformance suite on a backend written outside dispatch-core, as its author would run it: one line that
//! passes, and backends with one fault each, whose report names the op and the group that differ.

mod conformance_support;
// The backend alone, without the derive tests' support module: its test witnesses are not read here.
#[allow(dead_code)]
#[path = "derive_support/host_backend.rs"]
mod host_backend;

use std::collections::BTreeSet;

use conformance_support::{
    ExpGivesF32, F32Alone, Faithful, Forwarding, MatmulErrorsAreInvalidArguments, RefusesF32, SubSwapsOperands,
};
use dispatch_conformance::{Group, Report, check, check_gradients};
use dispatch_core::DType;
use dispatch_core::backends::Autodiff;
use dispatch_core::backends::NdArrayDevice;

dispatch_conformance::conformance_tests!(mod faithful, Forwarding<Faithful>, NdArrayDevice);
// A backend of one dtype conforms: the others are not checked, and neither are mixed dtypes nor gradients (F64).
dispatch_conformance::conformance_tests!(mod f32_alone, Forwarding<F32Alone>, NdArrayDevice);
// The derive tests' backend of its own: `Vec<f32>` tensors and loops written by hand, not a forwarder.
dispatch_conformance::conformance_tests!(mod host, host_backend::HostBackend, host_backend::HostDevice);

/// The ops whose calls differ in `group`, and the dtypes they differ in, in the order of `DType::ALL`.
fn differing(report: &Report, group: Group) -> (BTreeSet<&'static str>, Vec<DType>) {
    let differences = &report.group(group).expect("the report checks every group").differences;
    let dtypes = DType::ALL.into_iter().filter(|&dtype| differences.iter().any(|d| d.dtype == dtype)).collect();
    (differences.iter().map(|difference| difference.op).collect(), dtypes)
}

/// Whether every group of `report` but those in `differing` conforms.
fn only_these_differ(report: &Report, differing: &[Group]) -> bool {
    report.groups.iter().all(|group| group.conforms() != differing.contains(&group.group))
}

#[test]
fn an_op_giving_wrong_values_is_named_in_the_values_of_every_dtype() {
    let report = check::<Forwarding<SubSwapsOperands>>(&NdArrayDevice);
    let values = DType::ALL.map(Group::Values);
    assert!(only_these_differ(&report, &values), "{report}");
    for group in values {
        assert_eq!(differing(&report, group).0, BTreeSet::from(["sub"]), "{report}");
    }
}

#[test]
fn an_op_giving_another_dtype_is_named_in_the_dtypes_group() {
    let report = check::<Forwarding<ExpGivesF32>>(&NdArrayDevice);
    // In F64 the values come out rounded to F32 too; in F16 and BF16, F32 holds their values.
    assert!(only_these_differ(&report, &[Group::DTypes, Group::Values(DType::F64)]), "{report}");
    let in_every_dtype_but_f32 = vec![DType::F64, DType::F16, DType::BF16];
    assert_eq!(differing(&report, Group::DTypes), (BTreeSet::from(["exp"]), in_every_dtype_but_f32), "{report}");
}

#[test]
fn an_op_failing_with_another_error_variant_is_named_in_the_error_kinds_and_the_dtypes() {
    let report = check::<Forwarding<MatmulErrorsAreInvalidArguments>>(&NdArrayDevice);
    assert!(only_these_differ(&report, &[Group::ErrorKinds, Group::DTypes]), "{report}");
    let matmul = BTreeSet::from(["matmul"]);
    assert_eq!(differing(&report, Group::ErrorKinds), (matmul.clone(), DType::ALL.to_vec()), "{report}");
    assert_eq!(differing(&report, Group::DTypes), (matmul, DType::ALL.to_vec()), "{report}");
    let message = report.group(Group::ErrorKinds).unwrap().differences[0].to_string();
    assert!(message.starts_with("`matmul` (call 2) in f32: the reference fails with error ShapeMismatch"), "{message}");
}

#[test]
fn the_dtypes_a_backend_refuses_are_not_checked_but_for_f32() {
    let report = check::<Forwarding<F32Alone>>(&NdArrayDevice);
    for dtype in [DType::F64, DType::F16, DType::BF16] {
        let values = report.group(Group::Values(dtype)).unwrap();
        assert_eq!(values.checked, 0);
        let refusal = format!("the backend does not hold {dtype}: error InvalidArgument");
        assert!(values.not_checked[0].starts_with(&refusal), "{values}");
    }
    assert!(report.group(Group::Values(DType::F32)).unwrap().checked > 250, "{report}");
    let dtypes = report.group(Group::DTypes).unwrap();
    assert_eq!(dtypes.not_checked, ["mixing dtypes: the backend holds f32 alone"]);
    let gradients = check_gradients::<Autodiff<Forwarding<F32Alone>>>(&NdArrayDevice);
    assert!(gradients.not_checked[0].starts_with("gradients are checked in f64, which the backend does not hold"));

    let report = check::<Forwarding<RefusesF32>>(&NdArrayDevice);
    let refusal = &report.group(Group::Values(DType::F32)).unwrap().differences[0];
    assert!(refusal.what.starts_with("every backend must hold f32, but it gave error InvalidArgument"), "{refusal}");
    // `from_vec` makes an F32 tensor whatever the dtype of the run.
    for dtype in [DType::F64, DType::F16, DType::BF16] {
        assert_eq!(differing(&report, Group::Values(dtype)), (BTreeSet::from(["from_vec"]), vec![dtype]), "{report}");
    }
}
