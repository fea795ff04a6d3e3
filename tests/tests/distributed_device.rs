//! `DistributedDevice` as the `#[distributed]` variant of a derived enum: running SPMD work on any device of the
//! enum, ranks on different backends, faults through the device, and data-parallel training.

use std::time::Duration;

mod distributed_support;

use dispatch_core::DType;
use dispatch_core::backends::{NdArray, NdArrayDevice};
use dispatch_core::distributed::{self, Rank, ReduceOp, mpi};
use dispatch_core::{AutodiffDevice, Dispatch, DistributedDevice, Error, Result, Route, Tensor};
use dispatch_tests::assert_close_f64;
use distributed_support::{Device, DeviceBackend, DeviceBase, DeviceLocal, STEPS, train};

fn device(spec: &str) -> Device {
    spec.parse().unwrap()
}

fn cluster(spec: &str) -> DistributedDevice<Device> {
    match device(spec).route() {
        Route::Distributed(cluster) => cluster,
        Route::Local(local) => panic!("{local} is not a cluster"),
    }
}

/// Rank `r` all-reduces `[r + 1, 2 (r + 1)]` on its own device and reports the sum and where it computed it.
fn sum_on_each_rank(rank: Rank<Device>) -> Result<(Vec<f32>, String)> {
    let value = rank.index() as f32 + 1.0;
    let tensor = Tensor::<DeviceBackend>::from_vec(vec![value, 2.0 * value], [2], rank.device())?;
    let sum = rank.all_reduce(&tensor, ReduceOp::Sum)?;
    Ok((sum.to_vec()?, sum.device().to_string()))
}

#[test]
fn a_cluster_runs_one_rank_per_device_each_on_its_own_backend() {
    let results =
        distributed::run(&device("cluster:ndarray,cpu,autodiff:cpu"), sum_on_each_rank).into_values().unwrap();
    let sums: Vec<_> = results.iter().map(|(sum, _)| sum.clone()).collect();
    assert_eq!(sums, vec![vec![6.0, 12.0]; 3]);
    let devices: Vec<_> = results.iter().map(|(_, device)| device.as_str()).collect();
    assert_eq!(devices, vec!["ndarray", "cpu", "autodiff:cpu"]);
}

#[test]
fn a_local_device_runs_the_work_as_a_world_of_one() {
    let results = distributed::run(&device("ndarray"), |rank| {
        assert_eq!((rank.index(), rank.world_size()), (0, 1));
        sum_on_each_rank(rank)
    });
    assert_eq!(results.len(), 1);
    assert_eq!(results.into_values().unwrap(), vec![(vec![1.0, 2.0], "ndarray".to_owned())]);
}

#[test]
fn a_world_of_one_still_checks_its_arguments() {
    let results = distributed::run(&device("cpu"), |rank| {
        let tensor = Tensor::<DeviceBackend>::ones([3], DType::F32, rank.device())?;
        Ok((rank.broadcast(&tensor, 1).map(drop), rank.reduce_scatter(&tensor, ReduceOp::Sum)?.to_vec()?))
    })
    .into_values()
    .unwrap();
    let (broadcast, scattered) = &results[0];
    assert!(matches!(broadcast, Err(Error::IndexOutOfRange { op: "broadcast", index: 1, len: 1 })), "{broadcast:?}");
    assert_eq!(scattered, &vec![1.0; 3]);
}

#[test]
fn the_device_describes_its_ranks() {
    let cluster = cluster("cluster:ndarray,autodiff:ndarray");
    assert_eq!(cluster.world_size(), 2);
    assert_eq!(cluster.local_ranks(), 0..2);
    let autodiff_ndarray = DeviceLocal::Autodiff(AutodiffDevice::new(DeviceBase::NdArray(NdArrayDevice)));
    assert_eq!(cluster.local_devices(), &[DeviceLocal::NdArray(NdArrayDevice), autodiff_ndarray]);
    assert_eq!(cluster.timeout(), distributed::DEFAULT_TIMEOUT);
    let patient = cluster.with_timeout(Duration::from_secs(5));
    assert_eq!(patient.timeout(), Duration::from_secs(5));
    assert_eq!(patient, cluster, "the timeout is a setting of the runs, not the device's identity");
}

#[test]
fn a_cluster_needs_at_least_one_rank() {
    assert!(DistributedDevice::<Device>::in_process(Vec::new()).is_err());
}

/// Gated on what dispatch-core compiled (`mpi::ENABLED`), not on this crate's feature: Cargo unifies features, so
/// `--features dispatch-core/mpi` builds dispatch-core with MPI while this crate's own `mpi` feature stays off.
#[test]
fn an_mpi_cluster_without_the_feature_is_a_parse_error() {
    let unknown_device = "cluster:mpi:nope".parse::<Device>().unwrap_err();
    if mpi::ENABLED {
        // The device is read before MPI starts, so a bad one is reported without starting MPI in this process.
        assert_eq!(unknown_device.input(), "nope", "{unknown_device}");
        assert!(unknown_device.choices().contains(&"ndarray"), "{unknown_device}");
    } else {
        for spec in ["cluster:mpi:ndarray", "cluster:mpi", "cluster:mpi:nope"] {
            let error = spec.parse::<Device>().unwrap_err();
            assert!(error.to_string().contains("without its `mpi` feature"), "{spec}: {error}");
        }
    }
}

#[test]
fn a_failing_rank_fails_the_cluster_run_and_the_next_run_is_clean() {
    let cluster = Device::from(cluster("cluster:ndarray,ndarray").with_timeout(Duration::from_secs(30)));
    let failed = distributed::run(&cluster, |rank| {
        if rank.index() == 1 {
            return Err(Error::invalid("load_shard", "shard 1 is missing"));
        }
        sum_on_each_rank(rank)
    });
    let peer = failed.get(0).unwrap().as_ref().unwrap_err();
    assert!(peer.to_string().contains("rank 1 returned an error"), "{peer}");
    assert!(matches!(failed.into_values(), Err(Error::InvalidArgument { op: "load_shard", .. })));
    let sums = distributed::run(&cluster, sum_on_each_rank).into_values().unwrap();
    assert_eq!(sums[0].0, vec![3.0, 6.0]);
}

#[test]
fn data_parallel_training_follows_the_single_device_loss_curve() {
    let single = distributed::run(&device("autodiff:ndarray"), train).into_values().unwrap().remove(0);
    assert!(single[STEPS - 1] < 0.5 * single[0], "the model learns: {single:?}");
    for spec in [
        "cluster:autodiff:ndarray,autodiff:ndarray",
        "cluster:autodiff:cpu,autodiff:ndarray,autodiff:cpu,autodiff:ndarray",
    ] {
        let curves = distributed::run(&device(spec), train).into_values().unwrap();
        for curve in curves {
            assert_close_f64(&curve, &single, 1e-4);
        }
    }
}

/// A backend device named `mpi`, like the MPI engine.
#[derive(Clone, Debug, PartialEq, Dispatch)]
enum Machines {
    #[backend(NdArray)]
    Mpi(NdArrayDevice),
    #[distributed]
    Cluster(DistributedDevice<Self>),
}

/// An autodiff device named `mpi`: its local devices are `mpi:<base>`, like the MPI engine on a device.
#[derive(Clone, Debug, PartialEq, Dispatch)]
enum Recorders {
    #[backend(NdArray)]
    NdArray(NdArrayDevice),
    #[autodiff]
    Mpi(AutodiffDevice<Self>),
    #[distributed]
    Cluster(DistributedDevice<Self>),
}

#[test]
fn a_cluster_spec_that_also_names_a_local_device_called_mpi_is_an_error_not_a_guess() {
    let error = "cluster:mpi".parse::<Machines>().unwrap_err();
    assert!(error.to_string().contains("`mpi` is ambiguous"), "{error}");
    let error = "cluster:mpi:ndarray".parse::<Recorders>().unwrap_err();
    assert!(error.to_string().contains("`mpi:ndarray` is ambiguous"), "{error}");
    assert!(error.to_string().contains("#[dispatch(name"), "{error}");
}

#[test]
fn a_local_device_called_mpi_still_runs_in_a_list_of_ranks() {
    let machines: Machines = "cluster:mpi,mpi".parse().unwrap();
    assert_eq!(machines.to_string(), "cluster:mpi,mpi");
    let Route::Distributed(cluster) = machines.route() else { panic!("{machines} is not a cluster") };
    assert_eq!(cluster.local_devices(), &[MachinesLocal::Mpi(NdArrayDevice), MachinesLocal::Mpi(NdArrayDevice)]);
    let sums = distributed::run(&machines, |rank| {
        let tensor = Tensor::<MachinesBackend>::ones([2], DType::F32, rank.device())?;
        rank.all_reduce(&tensor, ReduceOp::Sum)?.to_vec()
    });
    assert_eq!(sums.into_values().unwrap(), vec![vec![2.0, 2.0]; 2]);
    let recorders: Recorders = "cluster:mpi:ndarray,ndarray".parse().unwrap();
    assert_eq!(recorders.to_string(), "cluster:mpi:ndarray,ndarray");
}
