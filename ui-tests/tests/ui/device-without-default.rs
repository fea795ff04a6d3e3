use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use dispatch_core::backends::{NdArray, NdArrayDevice};
use dispatch_core::device::BackendDevice;
use dispatch_core::{Backend, DType, DeviceOf, Dispatch, HostOp, ParseDeviceError, Result, Shape};

/// A third-party backend whose device has no default: a bare name cannot stand for one of its devices.
#[derive(Clone, Debug)]
pub struct Pinned;

#[derive(Clone, Debug, PartialEq)]
pub struct Core(pub u8);

impl<B: Backend<Device = Core>> DeviceOf<B> for Core {
    fn as_device(&self) -> &Core {
        self
    }
}

impl fmt::Display for Core {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "core{}", self.0)
    }
}

impl FromStr for Core {
    type Err = ParseDeviceError;
    fn from_str(name: &str) -> Result<Self, ParseDeviceError> {
        let core = name.strip_prefix("core").and_then(|number| number.parse().ok());
        core.map(Core).ok_or_else(|| ParseDeviceError::unknown(name, &["core<number>"]))
    }
}

impl BackendDevice for Core {
    fn available() -> Vec<Self> {
        vec![Core(0), Core(1)]
    }
}

type Nd = <NdArray as Backend>::FloatTensor;
type Ints = <NdArray as Backend>::IntTensor;
type Bools = <NdArray as Backend>::BoolTensor;

impl Backend for Pinned {
    type Device = Core;
    type FloatTensor = Nd;
    type IntTensor = Ints;
    type BoolTensor = Bools;
    fn name() -> String { "pinned".into() }
    fn from_vec(data: Vec<f32>, shape: Shape, _: &Core) -> Result<Nd> { NdArray::from_vec(data, shape, &NdArrayDevice) }
    fn from_f64_vec(data: Vec<f64>, shape: Shape, dtype: DType, _: &Core) -> Result<Nd> { NdArray::from_f64_vec(data, shape, dtype, &NdArrayDevice) }
    fn full(shape: Shape, value: f64, dtype: DType, _: &Core) -> Result<Nd> { NdArray::full(shape, value, dtype, &NdArrayDevice) }
    fn to_vec(t: &Nd) -> Result<Vec<f32>> { NdArray::to_vec(t) }
    fn to_f64_vec(t: &Nd) -> Result<Vec<f64>> { NdArray::to_f64_vec(t) }
    fn dtype(t: &Nd) -> DType { NdArray::dtype(t) }
    fn cast(t: &Nd, dtype: DType) -> Result<Nd> { NdArray::cast(t, dtype) }
    fn shape(t: &Nd) -> Shape { NdArray::shape(t) }
    fn device(_: &Nd) -> Core { Core(0) }
    fn to_device(t: &Nd, _: &Core) -> Result<Nd> { Ok(t.clone()) }
    fn add(a: &Nd, b: &Nd) -> Result<Nd> { NdArray::add(a, b) }
    fn sub(a: &Nd, b: &Nd) -> Result<Nd> { NdArray::sub(a, b) }
    fn mul(a: &Nd, b: &Nd) -> Result<Nd> { NdArray::mul(a, b) }
    fn div(a: &Nd, b: &Nd) -> Result<Nd> { NdArray::div(a, b) }
    fn add_scalar(t: &Nd, s: f64) -> Result<Nd> { NdArray::add_scalar(t, s) }
    fn mul_scalar(t: &Nd, s: f64) -> Result<Nd> { NdArray::mul_scalar(t, s) }
    fn powf_scalar(t: &Nd, e: f64) -> Result<Nd> { NdArray::powf_scalar(t, e) }
    fn neg(t: &Nd) -> Result<Nd> { NdArray::neg(t) }
    fn exp(t: &Nd) -> Result<Nd> { NdArray::exp(t) }
    fn log(t: &Nd) -> Result<Nd> { NdArray::log(t) }
    fn relu(t: &Nd) -> Result<Nd> { NdArray::relu(t) }
    fn sigmoid(t: &Nd) -> Result<Nd> { NdArray::sigmoid(t) }
    fn tanh(t: &Nd) -> Result<Nd> { NdArray::tanh(t) }
    fn matmul(a: &Nd, b: &Nd) -> Result<Nd> { NdArray::matmul(a, b) }
    fn swap_dims(t: &Nd, a: usize, b: usize) -> Result<Nd> { NdArray::swap_dims(t, a, b) }
    fn reshape(t: &Nd, s: Shape) -> Result<Nd> { NdArray::reshape(t, s) }
    fn narrow(t: &Nd, a: usize, s: usize, l: usize) -> Result<Nd> { NdArray::narrow(t, a, s, l) }
    fn cat(t: &[Nd], a: usize) -> Result<Nd> { NdArray::cat(t, a) }
    fn sum(t: &Nd) -> Result<Nd> { NdArray::sum(t) }
    fn mean(t: &Nd) -> Result<Nd> { NdArray::mean(t) }
    fn sum_dim(t: &Nd, a: usize) -> Result<Nd> { NdArray::sum_dim(t, a) }
    fn mean_dim(t: &Nd, a: usize) -> Result<Nd> { NdArray::mean_dim(t, a) }
    fn log_softmax(t: &Nd, a: usize) -> Result<Nd> { NdArray::log_softmax(t, a) }
    fn argmax(t: &Nd, a: usize) -> Result<Ints> { NdArray::argmax(t, a) }
    fn host_op(t: &Nd, op: Arc<dyn HostOp>) -> Result<Nd> { NdArray::host_op(t, op) }
    fn int_from_vec(d: Vec<i64>, s: Shape, _: &Core) -> Result<Ints> { NdArray::int_from_vec(d, s, &NdArrayDevice) }
    fn int_to_vec(t: &Ints) -> Result<Vec<i64>> { NdArray::int_to_vec(t) }
    fn int_shape(t: &Ints) -> Shape { NdArray::int_shape(t) }
    fn int_device(_: &Ints) -> Core { Core(0) }
    fn int_to_device(t: &Ints, _: &Core) -> Result<Ints> { Ok(t.clone()) }
    fn bool_from_vec(d: Vec<bool>, s: Shape, _: &Core) -> Result<Bools> { NdArray::bool_from_vec(d, s, &NdArrayDevice) }
    fn bool_to_vec(t: &Bools) -> Result<Vec<bool>> { NdArray::bool_to_vec(t) }
    fn bool_shape(t: &Bools) -> Shape { NdArray::bool_shape(t) }
    fn bool_device(_: &Bools) -> Core { Core(0) }
    fn bool_to_device(t: &Bools, _: &Core) -> Result<Bools> { Ok(t.clone()) }
}

#[derive(Clone, Debug, PartialEq, Dispatch)]
pub enum Device {
    #[backend(NdArray)]
    NdArray(NdArrayDevice),
    #[backend(Pinned)]
    Pinned(Core),
}

fn main() {}
