//! An extension declared in another module, through a renamed dependency, named by its path in an enum that also
//! has `#[autodiff]` and `#[distributed]` variants; generic code over the extension takes the derived backend.

use dispatch_core as dc;
use dispatch_core::DType;
use dc::backends::{Candle, CandleDevice, NdArray, NdArrayDevice};
use dc::{AutodiffDevice, Dispatch, DistributedDevice, Tensor};

mod ops {
    use super::dc;
    use dc::backends::{Autodiff, AutodiffTensor};
    use dc::{Backend, BaseBackend, Result};

    /// Doubles a tensor; and a tensor of zeros on a device, sent by its device.
    #[dc::extension(crate = dc)]
    pub trait Doubling: Backend {
        fn twice(x: &Self::FloatTensor) -> Result<Self::FloatTensor>;
        fn zeros_on(len: usize, device: &Self::Device) -> Result<Self::FloatTensor>;
    }

    macro_rules! doubling {
        ($($backend:ident),*) => {$(
            impl Doubling for dc::backends::$backend {
                fn twice(x: &Self::FloatTensor) -> Result<Self::FloatTensor> {
                    Self::add(x, x)
                }

                fn zeros_on(len: usize, device: &Self::Device) -> Result<Self::FloatTensor> {
                    Self::full([len].into(), 0.0, dc::DType::F32, device)
                }
            }
        )*};
    }
    doubling!(Candle, NdArray);

    impl<B: Doubling + BaseBackend> Doubling for Autodiff<B> {
        fn twice(x: &AutodiffTensor<B>) -> Result<AutodiffTensor<B>> {
            let output = B::twice(x.primitive())?;
            Ok(AutodiffTensor::custom_op("twice", [x], output, |gradient| Ok([Some(B::twice(&gradient)?)])))
        }

        fn zeros_on(len: usize, device: &B::Device) -> Result<AutodiffTensor<B>> {
            B::zeros_on(len, device).map(AutodiffTensor::detached)
        }
    }
}

#[derive(Clone, Debug, PartialEq, Dispatch)]
#[dispatch(crate = dc, extensions(ops::Doubling))]
pub enum Device {
    #[backend(Candle)]
    Candle(CandleDevice),
    #[backend(NdArray)]
    NdArray(NdArrayDevice),
    #[autodiff]
    Autodiff(AutodiffDevice<Self>),
    #[distributed]
    Cluster(DistributedDevice<Self>),
}

/// Code written once against the extension.
fn quadruple<B: ops::Doubling>(x: &B::FloatTensor) -> dc::Result<B::FloatTensor> {
    B::twice(&B::twice(x)?)
}

fn main() {
    let device = DeviceLocal::NdArray(NdArrayDevice);
    let x = Tensor::<DeviceBackend>::ones([2], DType::F32, &device).unwrap();
    let y = Tensor::<DeviceBackend>::from_primitive(quadruple::<DeviceBackend>(x.primitive()).unwrap());
    assert_eq!(y.to_vec().unwrap(), [4.0, 4.0]);
    let zeros = <DeviceBackend as ops::Doubling>::zeros_on(3, &device).unwrap();
    assert_eq!(Tensor::<DeviceBackend>::from_primitive(zeros).to_vec().unwrap(), [0.0; 3]);
}
