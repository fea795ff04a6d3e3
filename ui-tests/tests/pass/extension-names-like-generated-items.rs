//! An extension whose parameters, ops and types are named like what `#[extension]` and the derive generate (the
//! operand a visitor is routed by, the ops table, its marker, the visitor and the routes trait): none of them meets
//! a generated name, and each op still runs on its variant's backend. One op spells its `Result` out.

use dispatch_core::backends::{Candle, CandleDevice, NdArray, NdArrayDevice};
use dispatch_core::{Backend, DType, Dispatch, Error, Result, Shape, extension};

/// A user type named like the table of a backend's ops.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ops(pub f32);

/// A user type named like the trait a derived backend implements for an extension.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Routes(pub usize);

/// A user type named like dispatch-core's trait of an op's visitor.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Visit(pub f64);

#[extension]
pub trait Named: Backend {
    /// `routed * ops.0 * marker`.
    fn scale(routed: &Self::FloatTensor, ops: Ops, marker: f32) -> Result<Self::FloatTensor>;
    /// The `first.0`-th tensor of `visit`.
    fn pick(visit: &[Self::FloatTensor], first: Routes) -> Result<Self::FloatTensor>;
    /// How many values `marker` and `visit` hold together.
    fn ops(marker: &Self::FloatTensor, visit: &Self::FloatTensor) -> std::result::Result<Routes, Error>;
    /// `routed.0` values of `inner.0` on `device`.
    fn marker(device: &Self::Device, routed: Routes, inner: Visit) -> Result<Self::FloatTensor>;
}

macro_rules! named {
    ($($backend:ident),*) => {$(
        impl Named for $backend {
            fn scale(routed: &Self::FloatTensor, ops: Ops, marker: f32) -> Result<Self::FloatTensor> {
                Self::mul_scalar(routed, f64::from(ops.0 * marker))
            }

            fn pick(visit: &[Self::FloatTensor], first: Routes) -> Result<Self::FloatTensor> {
                Ok(visit[first.0].clone())
            }

            fn ops(marker: &Self::FloatTensor, visit: &Self::FloatTensor) -> std::result::Result<Routes, Error> {
                Ok(Routes(Self::to_vec(marker)?.len() + Self::to_vec(visit)?.len()))
            }

            fn marker(device: &Self::Device, routed: Routes, inner: Visit) -> Result<Self::FloatTensor> {
                Self::full(Shape::new([routed.0]), inner.0, DType::F32, device)
            }
        }
    )*};
}
named!(Candle, NdArray);

#[derive(Clone, Debug, PartialEq, Dispatch)]
#[dispatch(extensions(Named))]
pub enum Device {
    #[backend(Candle)]
    Candle(CandleDevice),
    #[backend(NdArray)]
    NdArray(NdArrayDevice),
}

fn main() -> Result<()> {
    for device in [Device::Candle(CandleDevice::default()), Device::NdArray(NdArrayDevice)] {
        let x = DeviceBackend::from_vec(vec![1.0, 2.0], Shape::new([2]), &device)?;
        let y = DeviceBackend::from_vec(vec![5.0], Shape::new([1]), &device)?;
        assert_eq!(DeviceBackend::to_vec(&DeviceBackend::scale(&x, Ops(2.0), 3.0)?)?, [6.0, 12.0]);
        assert_eq!(DeviceBackend::to_vec(&DeviceBackend::pick(&[x.clone(), y.clone()], Routes(1))?)?, [5.0]);
        assert_eq!(DeviceBackend::ops(&x, &y)?, Routes(3));
        assert_eq!(DeviceBackend::to_vec(&DeviceBackend::marker(&device, Routes(2), Visit(4.0))?)?, [4.0, 4.0]);
    }
    Ok(())
}
