//! Valid shapes too large for this machine are `Error::OutOfMemory`, naming the op and the bytes, on every backend
//! and through a derived enum; never an abort.
//!
//! Each check runs in a child process (this test binary again, running only that test, with `DISPATCH_OOM_CHILD`
//! set), because an allocation failure aborts the whole process: in the runner's own process it would take every
//! other test down with it. The parent asserts that the child exited normally after its checks passed.
//!
//! The outputs asked for are 4 TiB (`[2^20, 2^20]` of `f32`), beyond the memory plus swap of any machine that runs
//! these tests, so `dispatch_core::memory` refuses them whatever the kernel's overcommit policy would promise.

use std::process::Command;

use dispatch_core::DType;
use dispatch_core::backends::{Autodiff, Candle, CandleDevice, NdArray, NdArrayDevice};
use dispatch_core::distributed::{self, ReduceOp};
use dispatch_core::{AutodiffDevice, Backend, Dispatch, DistributedDevice, Error, Result, Tensor, memory};

/// Names the test a child process runs.
const CHILD: &str = "DISPATCH_OOM_CHILD";
/// Printed by a child whose checks all passed, so a child that ran no test at all cannot pass.
const PASSED: &str = "out-of-memory checks passed:";

const HUGE: usize = 1 << 20;
/// `HUGE * HUGE` values of 4 bytes.
const HUGE_BYTES: usize = 1 << 42;

/// Runs `checks` in a child process when this process is the parent, or right here when it is that child.
fn in_child_process(test: &str, checks: impl FnOnce() -> Result<()>) {
    match std::env::var(CHILD) {
        Ok(selected) if selected == test => {
            checks().unwrap();
            println!("{PASSED} {test}");
        }
        Ok(other) => panic!("child process for `{other}` ran `{test}`"),
        Err(_) => {
            let output = Command::new(std::env::current_exe().unwrap())
                .args([test, "--exact", "--nocapture", "--test-threads=1"])
                .env(CHILD, test)
                .output()
                .unwrap();
            let (stdout, stderr) = (String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
            assert!(
                output.status.success() && stdout.contains(&format!("{PASSED} {test}")),
                "the child process of `{test}` did not finish its checks ({}).\n--- stdout\n{stdout}\n--- stderr\n{stderr}",
                output.status
            );
        }
    }
}

#[track_caller]
fn assert_out_of_memory<T: std::fmt::Debug>(case: &str, result: Result<T>, op: &str, bytes: usize) {
    match result {
        Err(Error::OutOfMemory { op: actual_op, bytes: actual_bytes }) => {
            assert_eq!((actual_op, actual_bytes), (op, bytes), "{case}");
            println!("{case}: {}", Error::OutOfMemory { op: actual_op, bytes: actual_bytes });
        }
        other => panic!("{case}: expected OutOfMemory in `{op}` for {bytes} bytes, got {other:?}"),
    }
}

/// Every kind of op whose output is too large: creation, a product of empty matrices, a broadcast, a
/// concatenation of shared tensors, a reduction along an empty axis. Then the backend still computes.
fn huge_outputs_are_errors<B: Backend>(device: &B::Device) -> Result<()> {
    assert!(HUGE_BYTES > memory::limit(), "this machine has more than 4 TiB: the shapes here would fit");
    assert_out_of_memory("zeros", Tensor::<B>::zeros([HUGE, HUGE], DType::F32, device), "full", HUGE_BYTES);
    let random = Tensor::<B>::random_normal([HUGE, HUGE], (0.0, 1.0), 7, DType::F32, device);
    assert_out_of_memory("random_normal", random, "random_normal", HUGE_BYTES);

    let (tall, wide) =
        (Tensor::<B>::zeros([HUGE, 0], DType::F32, device)?, Tensor::<B>::zeros([0, HUGE], DType::F32, device)?);
    assert_out_of_memory("matmul of empty matrices", tall.matmul(&wide), "matmul", HUGE_BYTES);

    let (column, row) =
        (Tensor::<B>::ones([HUGE, 1], DType::F32, device)?, Tensor::<B>::ones([1, HUGE], DType::F32, device)?);
    assert_out_of_memory("broadcast add", column.add(&row), "add", HUGE_BYTES);
    assert_out_of_memory("broadcast div", row.div(&column), "div", HUGE_BYTES);

    // 65536 handles on one 64 MiB tensor, concatenated: 4 TiB.
    let block = Tensor::<B>::zeros([HUGE, 16], DType::F32, device)?;
    assert_out_of_memory("cat", Tensor::cat(&vec![block; 1 << 16], 0), "cat", HUGE_BYTES);

    let empty = Tensor::<B>::zeros([0, HUGE * HUGE], DType::F32, device)?;
    assert_out_of_memory("sum_dim along an empty axis", empty.sum_dim(0), "sum_dim", HUGE_BYTES);

    let sum = Tensor::<B>::from_vec(vec![1.0, 2.0], [2], device)?.add(&Tensor::ones([2], DType::F32, device)?)?;
    assert_eq!(sum.to_vec()?, [2.0, 3.0]);
    Ok(())
}

#[derive(Clone, Debug, PartialEq, Dispatch)]
enum Device {
    #[backend(Candle)]
    Candle(CandleDevice),
    #[backend(NdArray)]
    NdArray(NdArrayDevice),
    #[autodiff]
    Autodiff(AutodiffDevice<Self>),
    #[distributed]
    Cluster(DistributedDevice<Self>),
}

/// Every local device of the enum, each through the generated backend.
fn every_local_device() -> [DeviceLocal; 4] {
    [
        DeviceLocal::Candle(CandleDevice::cpu()),
        DeviceLocal::NdArray(NdArrayDevice),
        DeviceLocal::Autodiff(AutodiffDevice::new(DeviceBase::Candle(CandleDevice::cpu()))),
        DeviceLocal::Autodiff(AutodiffDevice::new(DeviceBase::NdArray(NdArrayDevice))),
    ]
}

#[test]
fn ndarray_huge_outputs_are_errors() {
    in_child_process("ndarray_huge_outputs_are_errors", || huge_outputs_are_errors::<NdArray>(&NdArrayDevice));
}

#[test]
fn candle_huge_outputs_are_errors() {
    in_child_process("candle_huge_outputs_are_errors", || huge_outputs_are_errors::<Candle>(&CandleDevice::cpu()));
}

#[test]
fn autodiff_ndarray_huge_outputs_are_errors() {
    in_child_process("autodiff_ndarray_huge_outputs_are_errors", || {
        huge_outputs_are_errors::<Autodiff<NdArray>>(&NdArrayDevice)
    });
}

#[test]
fn autodiff_candle_huge_outputs_are_errors() {
    in_child_process("autodiff_candle_huge_outputs_are_errors", || {
        huge_outputs_are_errors::<Autodiff<Candle>>(&CandleDevice::cpu())
    });
}

#[test]
fn derived_enum_huge_outputs_are_errors_on_every_device() {
    in_child_process("derived_enum_huge_outputs_are_errors_on_every_device", || {
        for device in every_local_device() {
            println!("device {device}");
            huge_outputs_are_errors::<DeviceBackend>(&device)?;
        }
        Ok(())
    });
}

/// A tracked input: the error comes from the forward op, before anything is recorded, and the graph of a small
/// loss on the same leaf still trains.
#[test]
fn autodiff_huge_outputs_of_tracked_tensors_are_errors() {
    in_child_process("autodiff_huge_outputs_of_tracked_tensors_are_errors", || {
        let row = Tensor::<Autodiff<NdArray>>::ones([1, HUGE], DType::F32, &NdArrayDevice)?.require_grad()?;
        let column = Tensor::<Autodiff<NdArray>>::ones([HUGE, 1], DType::F32, &NdArrayDevice)?;
        assert_out_of_memory("tracked broadcast mul", row.mul(&column), "mul", HUGE_BYTES);
        let gradients = row.sum()?.backward()?;
        assert_eq!(row.grad(&gradients).unwrap().to_vec()?, vec![1.0; HUGE]);
        Ok(())
    });
}

/// On a cluster, each rank's op fails on its own rank, and the others learn why from their collective.
#[test]
fn cluster_ranks_get_out_of_memory_errors() {
    in_child_process("cluster_ranks_get_out_of_memory_errors", || {
        let cluster: Device = Device::from(DistributedDevice::in_process(vec![
            DeviceLocal::NdArray(NdArrayDevice),
            DeviceLocal::Candle(CandleDevice::cpu()),
        ])?);
        let results = distributed::run(&cluster, |rank| {
            let shape = if rank.index() == 1 { [HUGE, HUGE] } else { [2, 2] };
            let tensor = Tensor::<DeviceBackend>::ones(shape, DType::F32, rank.device())?;
            rank.all_reduce(&tensor, ReduceOp::Sum)?.to_vec()
        });
        let peer = results.get(0).unwrap().as_ref().unwrap_err();
        assert!(peer.to_string().contains("out of memory in `full`"), "{peer}");
        assert_out_of_memory("rank 1", results.into_values(), "full", HUGE_BYTES);
        Ok(())
    });
}
