//! An extension brought in by a glob import, listed by its bare name in an enum declared inside a function: the
//! derive finds its ops where the glob put them, not in the stand-in it keeps for a trait without them.

use dispatch_core::backends::{NdArray, NdArrayDevice};
use dispatch_core::{Backend, Dispatch, DType, Result};

mod ops {
    use dispatch_core::backends::NdArray;
    use dispatch_core::{Backend, Result, extension};

    /// Doubles a tensor.
    #[extension]
    pub trait Doubling: Backend {
        fn twice(x: &Self::FloatTensor) -> Result<Self::FloatTensor>;
    }

    impl Doubling for NdArray {
        fn twice(x: &Self::FloatTensor) -> Result<Self::FloatTensor> {
            Self::add(x, x)
        }
    }
}

use ops::*;

fn main() -> Result<()> {
    #[derive(Clone, Debug, PartialEq, Dispatch)]
    #[dispatch(extensions(Doubling))]
    enum Device {
        #[backend(NdArray)]
        NdArray(NdArrayDevice),
    }

    let device = Device::NdArray(NdArrayDevice);
    let x = DeviceBackend::full([2].into(), 1.5, DType::F32, &device)?;
    assert_eq!(DeviceBackend::to_f64_vec(&DeviceBackend::twice(&x)?)?, [3.0, 3.0]);
    Ok(())
}
