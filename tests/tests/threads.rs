//! Devices and tensors cross threads: the types are `Send + Sync`, and one device serves 8 threads at once.

use std::thread;

use dispatch_core::DType;
use dispatch_core::backends::{Autodiff, AutodiffTensor, Candle, CandleDevice, NdArray, NdArrayDevice, NdArrayTensor};
use dispatch_core::{AutodiffDevice, Backend, Dispatch, DistributedDevice, Gradients, Tensor};
use dispatch_tests::assert_close;

/// A derived enum with every role, so its generated types are checked too.
#[derive(Clone, Debug, PartialEq, Dispatch)]
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

// Compiles only if every listed type is `Send + Sync`.
const _: () = {
    const fn send_sync<T: Send + Sync>() {}
    send_sync::<NdArrayDevice>();
    send_sync::<NdArrayTensor>();
    send_sync::<Tensor<NdArray>>();
    send_sync::<CandleDevice>();
    send_sync::<<Candle as Backend>::FloatTensor>();
    send_sync::<Tensor<Candle>>();
    send_sync::<AutodiffTensor<NdArray>>();
    send_sync::<AutodiffTensor<Candle>>();
    send_sync::<Tensor<Autodiff<Candle>>>();
    send_sync::<Gradients<Autodiff<NdArray>>>();
    send_sync::<Device>();
    send_sync::<DeviceLocal>();
    send_sync::<DeviceBase>();
    send_sync::<DistributedDevice<Device>>();
    send_sync::<DeviceTensor>();
    send_sync::<Tensor<DeviceBackend>>();
    send_sync::<Gradients<DeviceBackend>>();
};

const THREADS: usize = 8;

/// Each thread scales a shared weight matrix by its own index, multiplies, adds a bias and reduces, on one device
/// shared by reference; every result is checked against the same arithmetic done on the host.
fn one_device_serves_eight_threads<B: Backend>(device: &B::Device) {
    let (rows, inner, cols) = (4, 3, 5);
    let weights: Vec<f32> = (0..inner * cols).map(|i| i as f32 * 0.25 - 1.0).collect();
    let shared_weights = Tensor::<B>::from_vec(weights.clone(), [inner, cols], device).unwrap();
    thread::scope(|scope| {
        let workers: Vec<_> = (0..THREADS)
            .map(|worker| {
                let shared_weights = &shared_weights;
                scope.spawn(move || {
                    let input: Vec<f32> = (0..rows * inner).map(|i| (i + worker) as f32 * 0.5).collect();
                    let x = Tensor::<B>::from_vec(input, [rows, inner], device).unwrap();
                    let bias = Tensor::<B>::full([cols], worker as f64, DType::F32, device).unwrap();
                    let scaled = shared_weights.mul_scalar(worker as f64 + 1.0).unwrap();
                    let output = x.matmul(&scaled).unwrap().add(&bias).unwrap().relu().unwrap().sum_dim(0).unwrap();
                    (worker, output.to_vec().unwrap())
                })
            })
            .collect();
        for handle in workers {
            let (worker, actual) = handle.join().unwrap();
            assert_close(&actual, &host_result(worker, &weights, rows, inner, cols), 1e-6);
        }
    });
}

fn host_result(worker: usize, weights: &[f32], rows: usize, inner: usize, cols: usize) -> Vec<f32> {
    let scale = worker as f32 + 1.0;
    let mut column_sums = vec![0.0; cols];
    for row in 0..rows {
        for (col, sum) in column_sums.iter_mut().enumerate() {
            let dot: f32 =
                (0..inner).map(|p| (row * inner + p + worker) as f32 * 0.5 * weights[p * cols + col] * scale).sum();
            *sum += (dot + worker as f32).max(0.0);
        }
    }
    column_sums
}

#[test]
fn one_ndarray_device_serves_eight_threads() {
    one_device_serves_eight_threads::<NdArray>(&NdArrayDevice);
}

#[test]
fn one_candle_device_serves_eight_threads() {
    one_device_serves_eight_threads::<Candle>(&CandleDevice::cpu());
}

#[test]
fn one_autodiff_device_serves_eight_threads() {
    one_device_serves_eight_threads::<Autodiff<NdArray>>(&NdArrayDevice);
}

#[test]
fn one_device_of_a_derived_enum_serves_eight_threads() {
    for name in ["candle", "ndarray", "autodiff:candle", "autodiff:ndarray"] {
        one_device_serves_eight_threads::<DeviceBackend>(&name.parse::<DeviceLocal>().unwrap());
    }
}
