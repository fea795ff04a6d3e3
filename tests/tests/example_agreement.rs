//! The check every example (`gpt`, `train`, `cnn`, `data_parallel`) runs on its losses: runs agree within a
//! tolerance, and a loss that is not a finite number is a failure with a message, never a pass.

#[path = "../../examples/common/agreement.rs"]
mod agreement;

use agreement::{check_agreement, relative_gap};

const TOLERANCE: f64 = 1e-4;

#[test]
fn losses_within_the_tolerance_agree_and_report_the_largest_gap() {
    let worst = check_agreement([("a", 2.0, 2.0), ("b", 2.0, 2.0001), ("c", 2.0, 1.99995)], TOLERANCE).unwrap();
    assert_eq!(worst, relative_gap(2.0, 2.0001));
    assert!((worst - 5e-5).abs() < 1e-6, "{worst}");
    assert_eq!(check_agreement(Vec::<(&str, f64, f64)>::new(), TOLERANCE), Ok(0.0));
}

#[test]
fn a_gap_beyond_the_tolerance_names_the_largest() {
    let error = check_agreement([("ndarray", 1.0, 1.001), ("candle", 1.0, 1.01)], TOLERANCE).unwrap_err();
    assert!(error.starts_with("candle: the losses differ by 1.0e-2 relative"), "{error}");
}

#[test]
fn a_nan_or_infinite_loss_fails_wherever_it_is() {
    for (losses, culprit, role) in [
        (vec![("first", 0.5, 0.5), ("autodiff:candle", 0.5, f64::NAN)], "autodiff:candle", "loss is NaN"),
        (vec![("cluster", f64::NAN, f64::NAN)], "cluster", "reference loss is NaN"),
        (vec![("step 3", 0.5, f64::INFINITY), ("step 4", 0.5, 0.5)], "step 3", "loss is inf"),
        (vec![("step 0", 0.5, 0.5), ("step 1", f64::NEG_INFINITY, 0.5)], "step 1", "reference loss is -inf"),
    ] {
        let error = check_agreement(losses, TOLERANCE).unwrap_err();
        assert_eq!(error, format!("{culprit}: the {role}, not a finite number"));
    }
}

/// The old check folded gaps with `gap > worst` and `f64::max`, both of which skip NaN: a diverged run passed.
#[test]
fn a_nan_among_agreeing_losses_is_not_skipped() {
    let comparisons = [("a", 1.0, 1.0), ("b", 1.0, f64::NAN), ("c", 1.0, 1.0)];
    assert!(check_agreement(comparisons, f64::INFINITY).is_err(), "no tolerance lets a NaN through");
}
