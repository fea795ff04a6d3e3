//! The stand-in backend of an enum whose derive failed.

use std::fmt::Debug;
use std::marker::PhantomData;

use super::*;

/// The backend of an enum whose derive failed: it lets the user's code type-check, so that they see the derive's
/// error rather than a cascade. It cannot be reached at run time, since the crate does not compile.
pub struct FallbackBackend<D>(PhantomData<fn() -> D>);

impl<D> Clone for FallbackBackend<D> {
    fn clone(&self) -> Self {
        Self(PhantomData)
    }
}

impl<D> Debug for FallbackBackend<D> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("FallbackBackend")
    }
}

/// The one error every op of the fallback backend returns.
fn derive_failed(op: &'static str) -> Error {
    Error::invalid(op, "the device enum's `#[derive(Dispatch)]` failed")
}

macro_rules! no_tensor_ops {
    ($($op:ident($($arg:ident: $ty:ty),*);)*) => {
        $(fn $op(tensor: &Infallible $(, $arg: $ty)*) -> Result<Infallible> {
            $(let _ = $arg;)*
            match *tensor {}
        })*
    };
}

impl<D> Backend for FallbackBackend<D>
where
    D: DeviceOf<Self> + BackendDevice,
{
    type Device = D;
    type FloatTensor = Infallible;

    fn name() -> String {
        String::from("fallback")
    }

    fn from_vec(_: Vec<f32>, _: Shape, _: &D) -> Result<Infallible> {
        Err(derive_failed("from_vec"))
    }

    fn full(_: Shape, _: f32, _: &D) -> Result<Infallible> {
        Err(derive_failed("full"))
    }

    fn to_vec(tensor: &Infallible) -> Result<Vec<f32>> {
        match *tensor {}
    }

    fn shape(tensor: &Infallible) -> Shape {
        match *tensor {}
    }

    fn device(tensor: &Infallible) -> D {
        match *tensor {}
    }

    fn to_device(tensor: &Infallible, _: &D) -> Result<Infallible> {
        match *tensor {}
    }

    fn add(lhs: &Infallible, _: &Infallible) -> Result<Infallible> {
        match *lhs {}
    }

    fn sub(lhs: &Infallible, _: &Infallible) -> Result<Infallible> {
        match *lhs {}
    }

    fn mul(lhs: &Infallible, _: &Infallible) -> Result<Infallible> {
        match *lhs {}
    }

    fn div(lhs: &Infallible, _: &Infallible) -> Result<Infallible> {
        match *lhs {}
    }

    fn matmul(lhs: &Infallible, _: &Infallible) -> Result<Infallible> {
        match *lhs {}
    }

    fn cat(_: &[Infallible], _: usize) -> Result<Infallible> {
        Err(derive_failed("cat"))
    }

    no_tensor_ops! {
        add_scalar(scalar: f32);
        mul_scalar(scalar: f32);
        powf_scalar(exponent: f32);
        greater_scalar(threshold: f32);
        neg();
        exp();
        log();
        relu();
        sigmoid();
        tanh();
        swap_dims(dim0: usize, dim1: usize);
        reshape(shape: Shape);
        narrow(axis: usize, start: usize, len: usize);
        sum();
        mean();
        sum_dim(axis: usize);
        mean_dim(axis: usize);
        log_softmax(axis: usize);
        argmax(axis: usize);
    }
}
