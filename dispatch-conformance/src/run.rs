//! Every call of every op, on the backend under test and on the reference: the outcomes the checks compare.

use std::panic::{AssertUnwindSafe, catch_unwind};

use dispatch_core::backends::{NdArray, NdArrayDevice};
use dispatch_core::{Backend, DType, Shape};

use crate::operands::Operands;
use crate::outcome::{ErrorKind, Outcome};

/// The outcomes of every call of one op, in the order `calls` makes them; `Err` holds the message of a panic.
pub struct OpOutcomes {
    pub op: &'static str,
    pub calls: Result<Vec<Outcome>, String>,
}

/// The callback that calls every op of the list in each way `calls` has for it and collects the outcomes into
/// `$outcomes`. An op without a function in `calls` does not compile.
macro_rules! every_outcome {
    ({ $b:ty, $operands:ident, $outcomes:ident } $($(#[$doc:meta])* fn $op:ident($($param:ident: $kind:tt),*) -> $output:tt $(= $default:ident)? $(=> $derived:ident)?, $autodiff:ident;)*) => {
        $(
            let calls = $crate::run::caught(|| {
                let calls = $crate::calls::$op::<$b>(&$operands).into_iter();
                calls.map(|call| $crate::outcome::outcome!($b, $operands, $output, call)).collect()
            });
            $outcomes.push($crate::run::OpOutcomes { op: stringify!($op), calls });
        )*
    };
}

pub(crate) use every_outcome;

/// The outcome of every call of every op on `B`, in the order of the op list.
pub fn outcomes<B: Backend>(operands: &Operands<B>) -> Vec<OpOutcomes> {
    let mut outcomes = Vec::new();
    dispatch_core::for_each_op! { crate::run::every_outcome { B, operands, outcomes } }
    outcomes
}

/// `work`'s value, or the message of its panic: a backend that panics on some op is reported, not the end of the
/// suite. (The panic hook still prints the panic where it happened.)
pub fn caught<T>(work: impl FnOnce() -> T) -> Result<T, String> {
    catch_unwind(AssertUnwindSafe(work)).map_err(|payload| {
        let message = payload.downcast_ref::<&str>().map(|text| text.to_string());
        message.or_else(|| payload.downcast_ref::<String>().cloned()).unwrap_or_else(|| "a panic".to_owned())
    })
}

/// Whether `B` holds each dtype on `device`: `Err` says how creating a tensor of it failed.
pub fn held_dtypes<B: Backend>(device: &B::Device) -> Vec<(DType, Result<(), String>)> {
    let holds = |dtype| match caught(|| B::from_f64_vec(vec![0.5, -1.5], Shape::new([2]), dtype, device)) {
        Ok(Ok(_)) => Ok(()),
        Ok(Err(error)) => Err(ErrorKind::of(&error).to_string()),
        Err(panic) => Err(format!("a panic: {panic}")),
    };
    DType::ALL.into_iter().map(|dtype| (dtype, holds(dtype))).collect()
}

/// One dtype's run: the backend under test and the reference, on the same operands.
pub struct DTypeRun {
    pub dtype: DType,
    /// The backend under test.
    pub tested: Vec<OpOutcomes>,
    /// NdArray in the same dtype: what the shapes, dtypes, error kinds and int and bool values must be.
    pub reference: Vec<OpOutcomes>,
    /// NdArray computing in `F64` on the same values: what the float values must be, to the dtype's tolerance.
    pub exact: Vec<OpOutcomes>,
}

impl DTypeRun {
    /// Runs every call in `dtype` on `B` and on the reference, for a backend that holds `held`. `Err` says why the
    /// operands could not be made on `B`.
    pub fn new<B: Backend>(device: &B::Device, dtype: DType, held: &[DType]) -> Result<Self, String> {
        let operands = match caught(|| Operands::<B>::new(device.clone(), dtype, held)) {
            Ok(Ok(operands)) => operands,
            Ok(Err(error)) => return Err(ErrorKind::of(&error).to_string()),
            Err(panic) => return Err(format!("a panic: {panic}")),
        };
        let reference = Operands::<NdArray>::new(NdArrayDevice, dtype, held).expect("ndarray makes every operand");
        let exact = Operands::<NdArray>::exact(NdArrayDevice, dtype, held).expect("ndarray makes every operand");
        Ok(Self { dtype, tested: outcomes(&operands), reference: outcomes(&reference), exact: outcomes(&exact) })
    }

    /// Every call whose outcomes compare, as `(op, call, tested, reference, exact)`; an op whose calls panicked
    /// on the backend under test is in `panicked` instead, with the panic's message.
    pub fn calls(&self) -> Calls<'_> {
        let mut calls = Calls { compared: Vec::new(), panicked: Vec::new() };
        for ((of_tested, of_reference), of_exact) in self.tested.iter().zip(&self.reference).zip(&self.exact) {
            let op = of_tested.op;
            let (Ok(reference_calls), Ok(exact_calls)) = (&of_reference.calls, &of_exact.calls) else {
                panic!("the reference panicked in `{op}`");
            };
            match &of_tested.calls {
                Err(panic) => calls.panicked.push((op, panic.as_str())),
                Ok(tested_calls) => {
                    let outcomes = tested_calls.iter().zip(reference_calls).zip(exact_calls);
                    for (call, ((tested, reference), exact)) in outcomes.enumerate() {
                        calls.compared.push(Call { op, call, tested, reference, exact });
                    }
                }
            }
        }
        calls
    }
}

/// One call's outcomes, on the backend under test and on the references.
pub struct Call<'a> {
    pub op: &'static str,
    /// Its position among the op's calls in `calls`.
    pub call: usize,
    pub tested: &'a Outcome,
    pub reference: &'a Outcome,
    pub exact: &'a Outcome,
}

pub struct Calls<'a> {
    pub compared: Vec<Call<'a>>,
    pub panicked: Vec<(&'static str, &'a str)>,
}
