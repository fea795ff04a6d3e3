//! A device enum written by a `macro_rules!`, its backends and fields passed in as identifiers: the code generated
//! at those tokens (to report errors there) still finds its own local variables, which macro hygiene would hide.

use dispatch_core::backends::{Candle, CandleDevice, NdArray, NdArrayDevice};
use dispatch_core::{AutodiffDevice, Dispatch, DistributedDevice, Route, Tensor};

type Trained = AutodiffDevice<Device>;
type Ranks = DistributedDevice<Device>;

macro_rules! device_enum {
    ($candle:ident, $candle_device:ident, $ndarray:ident, $ndarray_device:ident, $trained:ident, $ranks:ident) => {
        #[derive(Clone, Debug, PartialEq, Dispatch)]
        pub enum Device {
            #[backend($candle)]
            Cpu($candle_device),
            #[backend($ndarray)]
            NdArray($ndarray_device),
            #[autodiff]
            Autodiff($trained),
            #[distributed]
            Cluster($ranks),
        }
    };
}

device_enum!(Candle, CandleDevice, NdArray, NdArrayDevice, Trained, Ranks);

fn main() {
    for name in ["cpu", "ndarray", "autodiff:cpu", "autodiff:ndarray"] {
        let device: Device = name.parse().unwrap();
        assert_eq!(device.to_string(), name);
        let Route::Local(local) = device.route() else { panic!("`{name}` is a local device") };
        let tensor = Tensor::<DeviceBackend>::from_vec(vec![1.0, 2.0], [2], &local).unwrap();
        let moved = tensor.to_device(&DeviceLocal::NdArray(NdArrayDevice)).unwrap();
        assert_eq!(moved.mul(&moved).unwrap().to_vec().unwrap(), vec![1.0, 4.0]);
    }
    assert!("cluster:cpu,ndarray".parse::<Device>().unwrap().is_distributed());
}
