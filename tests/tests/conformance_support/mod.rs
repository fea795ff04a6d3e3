//! `Forwarding<F>`: a backend of its own, written outside dispatch-core as a user would, that forwards every op
//! of the op list to NdArray through `for_each_op!`; `F` may then tamper with what one op gives. `Faithful` changes
//! nothing; each other fault breaks one op the way a backend's author might, to show what the conformance suite
//! reports.

use std::fmt::Debug;
use std::marker::PhantomData;

use dispatch_core::backends::{NdArray, NdArrayBoolTensor, NdArrayDevice, NdArrayIntTensor, NdArrayTensor};
use dispatch_core::{Backend, BaseBackend, DType, Error, Result, Shape};

/// What a [`Forwarding`] backend does to the float output of each op.
pub trait Fault: Clone + Copy + Debug + Default + Send + Sync + 'static {
    /// The float output of `op`, given NdArray's.
    fn float(op: &'static str, output: Result<NdArrayTensor>) -> Result<NdArrayTensor>;
}

#[derive(Clone, Copy, Debug, Default)]
pub struct Faithful;

impl Fault for Faithful {
    fn float(_: &'static str, output: Result<NdArrayTensor>) -> Result<NdArrayTensor> {
        output
    }
}

/// `sub` computes `rhs - lhs`.
#[derive(Clone, Copy, Debug, Default)]
pub struct SubSwapsOperands;

impl Fault for SubSwapsOperands {
    fn float(op: &'static str, output: Result<NdArrayTensor>) -> Result<NdArrayTensor> {
        match op {
            "sub" => NdArray::neg(&output?),
            _ => output,
        }
    }
}

/// `exp` computes in F32 and gives F32 whatever its operand's dtype.
#[derive(Clone, Copy, Debug, Default)]
pub struct ExpGivesF32;

impl Fault for ExpGivesF32 {
    fn float(op: &'static str, output: Result<NdArrayTensor>) -> Result<NdArrayTensor> {
        match op {
            "exp" => NdArray::cast(&output?, DType::F32),
            _ => output,
        }
    }
}

/// `matmul` reports every failure as an invalid argument, mixed dtypes and shapes that do not fit included.
#[derive(Clone, Copy, Debug, Default)]
pub struct MatmulErrorsAreInvalidArguments;

impl Fault for MatmulErrorsAreInvalidArguments {
    fn float(op: &'static str, output: Result<NdArrayTensor>) -> Result<NdArrayTensor> {
        match op {
            "matmul" => output.map_err(|error| Error::invalid("matmul", error.to_string())),
            _ => output,
        }
    }
}

/// Holds `F32` alone, as a backend of one dtype would: every float tensor of another dtype is refused.
#[derive(Clone, Copy, Debug, Default)]
pub struct F32Alone;

impl Fault for F32Alone {
    fn float(op: &'static str, output: Result<NdArrayTensor>) -> Result<NdArrayTensor> {
        refusing(op, output, |dtype| dtype != DType::F32)
    }
}

/// Refuses `F32` tensors, which every backend must hold.
#[derive(Clone, Copy, Debug, Default)]
pub struct RefusesF32;

impl Fault for RefusesF32 {
    fn float(op: &'static str, output: Result<NdArrayTensor>) -> Result<NdArrayTensor> {
        refusing(op, output, |dtype| dtype == DType::F32)
    }
}

/// `output`, unless it is a tensor of a dtype `refused` picks: then an error saying so.
fn refusing(op: &'static str, output: Result<NdArrayTensor>, refused: fn(DType) -> bool) -> Result<NdArrayTensor> {
    let tensor = output?;
    match NdArray::dtype(&tensor) {
        dtype if refused(dtype) => Err(Error::invalid(op, format!("this backend does not hold {dtype}"))),
        _ => Ok(tensor),
    }
}

#[derive(Clone, Copy, Debug, Default)]
pub struct Forwarding<F: Fault>(PhantomData<F>);

/// The Rust type of a parameter of kind `$kind` of the op list, in NdArray's tensor types.
macro_rules! param_type {
    (Float) => { &NdArrayTensor };
    ([Float]) => { &[NdArrayTensor] };
    (Owned) => { NdArrayTensor };
    (Int) => { &NdArrayIntTensor };
    (Bool) => { &NdArrayBoolTensor };
    (Device) => { &NdArrayDevice };
    (Shape) => { Shape };
    (($($plain:tt)*)) => { $($plain)* };
    ($plain:ty) => { $plain };
}

/// The Rust type of an op's output `$output`.
macro_rules! output_type {
    (Float) => { Result<NdArrayTensor> };
    (Int) => { Result<NdArrayIntTensor> };
    (Bool) => { Result<NdArrayBoolTensor> };
    ([Device]) => { NdArrayDevice };
    ([Shape]) => { Shape };
    ([$($plain:tt)*]) => { $($plain)* };
    (($($plain:tt)*)) => { Result<$($plain)*> };
}

/// NdArray's output of an op, through the fault where it is a float tensor.
macro_rules! through_fault {
    (Float, $op:ident, $output:expr) => {
        F::float(stringify!($op), $output)
    };
    (Int, $op:ident, $output:expr) => {
        $output
    };
    (Bool, $op:ident, $output:expr) => {
        $output
    };
    ([$($plain:tt)*], $op:ident, $output:expr) => {
        $output
    };
    (($($plain:tt)*), $op:ident, $output:expr) => {
        $output
    };
}

/// The callback that writes every op of the list as NdArray's, through the fault.
macro_rules! forward_every_op {
    ({} $($(#[$doc:meta])* fn $op:ident($($param:ident: $kind:tt),*) -> $output:tt $(= $default:ident)? $(=> $derived:ident)?, $autodiff:ident;)*) => {
        $(
            fn $op($($param: param_type!($kind)),*) -> output_type!($output) {
                through_fault!($output, $op, NdArray::$op($($param),*))
            }
        )*
    };
}

pub(crate) use forward_every_op;

impl<F: Fault> Backend for Forwarding<F> {
    type Device = NdArrayDevice;
    type FloatTensor = NdArrayTensor;
    type IntTensor = NdArrayIntTensor;
    type BoolTensor = NdArrayBoolTensor;

    fn name() -> String {
        format!("forwarding<{:?}>", F::default())
    }

    dispatch_core::for_each_op! { crate::conformance_support::forward_every_op {} }
}

/// Opting in: `Autodiff<Forwarding<F>>` records gradients on top of it.
impl<F: Fault> BaseBackend for Forwarding<F> {}
