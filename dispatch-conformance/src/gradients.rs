//! Gradients: every differentiable op's gradient, as an autodiff backend computes it, against central finite
//! differences of the op's own forward, in `F64`.
//!
//! Each call of a differentiable op (the same calls as the other groups', on operands without ties, so that every
//! op is smooth at them) is turned into the objective `Σ w ⊙ output`, with fixed weights `w` that differ for every
//! output element, so that a permuted gradient cannot pass. The backward pass gives its gradient by every operand;
//! each entry of every operand the call reads is then moved by `± step`, and the objective's change must match.
//! Which operands a call reads is what the reference's backward reaches, so an operand that a backend's backward
//! leaves out is still checked: its gradient there is zero, and the differences say otherwise.

use dispatch_core::backends::{Autodiff, NdArray, NdArrayDevice};
use dispatch_core::{AutodiffBackend, Backend, DType, Result};

use crate::calls::Floats;
use crate::operands::Operands;
use crate::outcome::ErrorKind;
use crate::report::{Group, GroupReport};
use crate::run::{caught, held_dtypes};

/// The autodiff backend the operands a call reads are found with.
type Reference = Autodiff<NdArray>;

/// A differentiable op: its calls on the backend under test and on the reference.
pub(crate) struct DifferentiableOp<A: Backend> {
    pub name: &'static str,
    pub tested: fn(&Operands<A>) -> Floats<A>,
    pub reference: fn(&Operands<Reference>) -> Floats<Reference>,
}

/// The callback that lists the differentiable ops: those `Autodiff` tracks or composes of tracked ops, with a float
/// output. An op of another kind of the list's does not compile until it is sorted here.
macro_rules! differentiable_ops {
    ({ $a:ident, $ops:ident } $($(#[$doc:meta])* fn $op:ident($($param:ident: $kind:tt),*) -> $output:tt $(= $default:ident)? $(=> $derived:ident)?, $autodiff:ident;)*) => {
        $($crate::gradients::differentiable_op!($autodiff, $output, $op, $a, $ops);)*
    };
}

macro_rules! differentiable_op {
    (tracked, Float, $op:ident, $a:ident, $ops:ident) => {
        $ops.push(DifferentiableOp {
            name: stringify!($op),
            tested: $crate::calls::$op::<$a>,
            reference: $crate::calls::$op,
        });
    };
    (composed, Float, $op:ident, $a:ident, $ops:ident) => {
        $crate::gradients::differentiable_op!(tracked, Float, $op, $a, $ops);
    };
    (forwarded, $output:tt, $op:ident, $a:ident, $ops:ident) => {};
}

pub(crate) use {differentiable_op, differentiable_ops};

// One push per op, written by the op list's callback.
#[allow(clippy::vec_init_then_push)]
fn differentiable<A: AutodiffBackend>() -> Vec<DifferentiableOp<A>> {
    let mut ops = Vec::new();
    dispatch_core::for_each_op! { crate::gradients::differentiable_ops { A, ops } }
    ops
}

/// The step of the central differences and the relative tolerance (absolute below magnitude 1) between the
/// backward pass and the differences.
#[derive(Clone, Copy)]
struct Precision {
    step: f64,
    tolerance: f64,
}

/// Every op's, `host_op` included (an `F64` tensor's values stay `f64` through the host). The truncation error of
/// central differences is `step² f''' / 6`: at most 1e-7 of the gradient for the steepest call (`recip` at 0.03,
/// where `f''' = 6 / x⁴`), and rounding adds about `1e-16 |objective| / step`, under 1e-9. A wrong rule (a missing
/// factor, a sign, a transposed gradient) is off by far more than 1e-6.
const F64: Precision = Precision { step: 1e-5, tolerance: 1e-6 };

/// Checks the gradients of autodiff backend `A` (`Autodiff<MyBackend>`, say) for every differentiable op of the
/// op list, in `F64`; a backend that does not hold `F64` is reported as not checked. Takes a few seconds for a
/// backend on the CPU (every entry of every operand is moved twice per op).
pub fn check_gradients<A: AutodiffBackend>(device: &A::Device) -> GroupReport {
    let mut report = GroupReport::new(Group::Gradients);
    let support = held_dtypes::<A>(device);
    if let Some((_, Err(refusal))) = support.iter().find(|(dtype, _)| *dtype == DType::F64) {
        report.not_checked.push(format!("gradients are checked in f64, which the backend does not hold: {refusal}"));
        return report;
    }
    let held: Vec<DType> = support.iter().filter(|(_, holds)| holds.is_ok()).map(|&(dtype, _)| dtype).collect();
    let setup = match caught(|| Setup::new(device, &held)) {
        Ok(Ok(setup)) => setup,
        Ok(Err(error)) => {
            report.differ("operands", None, DType::F64, format!("cannot be made: {}", ErrorKind::of(&error)));
            return report;
        }
        Err(panic) => {
            report.differ("operands", None, DType::F64, format!("panicked: {panic}"));
            return report;
        }
    };
    for op in differentiable::<A>() {
        match caught(|| check_op(&setup, &op, &mut report)) {
            Ok(Ok(())) => {}
            Ok(Err(error)) => report.differ(op.name, None, DType::F64, format!("fails: {}", ErrorKind::of(&error))),
            Err(panic) => report.differ(op.name, None, DType::F64, format!("panicked: {panic}")),
        }
    }
    report
}

/// The operands of the gradient checks: as they are (to perturb), and tracked on both backends.
pub(crate) struct Setup<A: AutodiffBackend> {
    device: A::Device,
    untracked: Operands<A>,
    tracked: Operands<A>,
    reference: Operands<Reference>,
}

impl<A: AutodiffBackend> Setup<A> {
    pub fn new(device: &A::Device, held: &[DType]) -> Result<Self> {
        let untracked = Operands::<A>::without_ties(device.clone(), held)?;
        let reference = tracked(&Operands::<Reference>::without_ties(NdArrayDevice, held)?)?;
        Ok(Self { device: device.clone(), tracked: tracked(&untracked)?, untracked, reference })
    }
}

/// The operands with every float operand marked as a leaf whose gradient `backward` reports.
fn tracked<A: AutodiffBackend>(operands: &Operands<A>) -> Result<Operands<A>> {
    let mut tracked = operands.clone();
    for operand in tracked.floats_mut() {
        *operand = A::require_grad(operand)?;
    }
    Ok(tracked)
}

/// One call whose gradients are checked: the weights of its objective, its gradient by each float operand (`None`
/// where the backward pass does not reach it), and which operands to perturb.
struct CheckedCall {
    call: usize,
    weights: Vec<f64>,
    gradients: Vec<Option<Vec<f64>>>,
    reads: Vec<bool>,
}

/// Checks every call of `op` that the reference can check: one whose output is an `F64` tensor (not a cast to
/// another dtype, which rounds), finite (inside the op's domain). Errors are the error kinds group's.
pub(crate) fn check_op<A: AutodiffBackend>(
    setup: &Setup<A>,
    op: &DifferentiableOp<A>,
    report: &mut GroupReport,
) -> Result<()> {
    let names = Operands::<A>::FLOAT_NAMES;
    let tested_outputs = (op.tested)(&setup.tracked);
    let reference_outputs = (op.reference)(&setup.reference);
    let (mut checked, mut checkable) = (Vec::new(), 0);
    for (call, (tested, reference)) in tested_outputs.into_iter().zip(reference_outputs).enumerate() {
        let Ok(reference) = reference else { continue };
        let values = Reference::to_f64_vec(&reference)?;
        if Reference::dtype(&reference) != DType::F64 || !values.iter().all(|value| value.is_finite()) {
            continue;
        }
        checkable += 1;
        let weights = weights(values.len(), call);
        let reference_reads = gradients::<Reference>(&reference, &weights, &setup.reference.floats())?;
        let mut differ = |what: String| report.differ(op.name, Some(call), DType::F64, what);
        let tested = match tested {
            Ok(tested) => tested,
            Err(error) => {
                differ(format!("fails on tracked operands: {}", ErrorKind::of(&error)));
                continue;
            }
        };
        if A::dtype(&tested) != DType::F64 || A::tensor_id(&tested).is_none() {
            differ(format!("gives an untracked or {} output on tracked f64 operands", A::dtype(&tested)));
            continue;
        }
        let (shape, expected) = (A::shape(&tested), Reference::shape(&reference));
        if shape != expected {
            differ(format!("gives a {shape} output, the reference {expected}"));
            continue;
        }
        let mut gradients = gradients::<A>(&tested, &weights, &setup.tracked.floats())?;
        for (k, (gradient, operand)) in gradients.iter_mut().zip(setup.untracked.floats()).enumerate() {
            let count = A::shape(operand).num_elements();
            if let Some(length) = gradient.as_ref().map(Vec::len).filter(|&length| length != count) {
                differ(format!("the gradient of `{}` has {length} entries, the operand {count}", names[k]));
                *gradient = None;
            }
        }
        let reads = reference_reads.iter().zip(&gradients).map(|(by, of)| by.is_some() || of.is_some()).collect();
        checked.push(CheckedCall { call, weights, gradients, reads });
    }
    if checkable == 0 {
        report.not_checked.push(format!("`{}`: no call gives a finite f64 output on the reference", op.name));
    }
    for (k, operand) in setup.untracked.floats().into_iter().enumerate() {
        let mut checking: Vec<&CheckedCall> = checked.iter().filter(|checked| checked.reads[k]).collect();
        let values = A::to_f64_vec(operand)?;
        for j in 0..values.len() {
            if checking.is_empty() {
                break;
            }
            let moved = |by: f64| -> Result<(Operands<A>, f64)> {
                let mut moved_values = values.clone();
                moved_values[j] += by;
                let mut operands = setup.untracked.clone();
                *operands.floats_mut()[k] =
                    A::from_f64_vec(moved_values, A::shape(operand), DType::F64, &setup.device)?;
                Ok((operands, values[j] + by))
            };
            let ((plus, above), (minus, below)) = (moved(F64.step)?, moved(-F64.step)?);
            let (plus, minus) = ((op.tested)(&plus), (op.tested)(&minus));
            checking.retain(|checked| {
                report.checked += 1;
                let objective = |outputs: &Floats<A>| match &outputs[checked.call] {
                    Ok(output) => A::to_f64_vec(output)
                        .map(|values| dot(&values, &checked.weights))
                        .map_err(|error| ErrorKind::of(&error)),
                    Err(error) => Err(ErrorKind::of(error)),
                };
                let numeric = match (objective(&plus), objective(&minus)) {
                    (Ok(plus), Ok(minus)) => (plus - minus) / (above - below),
                    (Err(error), _) | (_, Err(error)) => {
                        let what = format!("fails once `{}` moves: {error}", names[k]);
                        report.differ(op.name, Some(checked.call), DType::F64, what);
                        return false;
                    }
                };
                let backward = checked.gradients[k].as_ref().map_or(0.0, |gradient| gradient[j]);
                let deviation = deviation(backward, numeric);
                report.measured(op.name, deviation);
                let agrees = deviation <= F64.tolerance;
                if !agrees {
                    let what = format!(
                        "the gradient by `{}` at entry {j} is {backward}, central differences give {numeric}",
                        names[k]
                    );
                    report.differ(op.name, Some(checked.call), DType::F64, what);
                }
                // One difference per operand and call is enough to name what differs.
                agrees
            });
        }
    }
    Ok(())
}

/// The gradients backend `A` gives `Σ weights ⊙ output` by each of `operands`: `None` where the backward pass does
/// not reach one.
fn gradients<A: AutodiffBackend>(
    output: &A::FloatTensor,
    weights: &[f64],
    operands: &[&A::FloatTensor],
) -> Result<Vec<Option<Vec<f64>>>> {
    let weights = A::from_f64_vec(weights.to_vec(), A::shape(output), DType::F64, &A::device(output))?;
    let gradients = A::backward(&A::sum(&A::mul(output, &weights)?)?)?;
    let gradient =
        |operand: &&A::FloatTensor| A::tensor_id(operand).and_then(|id| gradients.get(id)).map(A::to_f64_vec);
    operands.iter().map(|operand| gradient(operand).transpose()).collect()
}

/// `count` fixed weights in `(-1, 1)`, none zero, scrambled differently for each call.
fn weights(count: usize, call: usize) -> Vec<f64> {
    (0..count).map(|i| ((i * 7919 + call * 104_729) % 1000) as f64 * 2.0 / 1000.0 - 0.999).collect()
}

fn dot(values: &[f64], weights: &[f64]) -> f64 {
    values.iter().zip(weights).map(|(value, weight)| value * weight).sum()
}

/// How far `a` is from `b`, relative to the larger magnitude (absolutely below 1); NaN is infinitely far.
fn deviation(a: f64, b: f64) -> f64 {
    let deviation = (a - b).abs() / a.abs().max(b.abs()).max(1.0);
    if deviation.is_nan() { f64::INFINITY } else { deviation }
}
