//! The in-process engine's collectives on host buffers: values, shapes and rank order, in `f32` and in `f64`; and
//! through tensors of every dtype, which reach the engine in an element type that holds them exactly.

use std::time::Duration;

use dispatch_core::distributed::{Collective, Communicator, ReduceOp, run_in_process};
use dispatch_core::{ArgumentValue, Backend, DType, Error, HostTensor, HostValues, Shape, Tensor};

const TIMEOUT: Duration = Duration::from_secs(30);

fn host(data: Vec<f32>, dims: &[usize]) -> HostTensor {
    HostTensor::new(data, dims)
}

/// Rank `rank`'s test values: distinct per rank and per element, exact in f32.
fn values(rank: usize, len: usize) -> Vec<f32> {
    (0..len).map(|i| (rank * 1000 + i % 997) as f32 * 0.5).collect()
}

#[test]
fn all_reduce_sums_every_rank_into_every_rank() {
    // 1001 elements: parts that are not multiples of the engine's alignment.
    let len = 1001;
    let results = run_in_process(3, TIMEOUT, |comm| {
        comm.execute(Collective::AllReduce(ReduceOp::Sum), host(values(comm.rank(), len), &[7, 143]))
    })
    .unwrap()
    .into_values()
    .unwrap();
    let expected: Vec<f32> = (0..len).map(|i| values(0, len)[i] + values(1, len)[i] + values(2, len)[i]).collect();
    assert_eq!(results.len(), 3);
    for output in results {
        assert_eq!(output.shape, Shape::new([7, 143]));
        assert_eq!(output.values, HostValues::F32(expected.clone()));
    }
}

#[test]
fn all_reduce_mean_divides_by_the_world_size() {
    let results = run_in_process(2, TIMEOUT, |comm| {
        let data = if comm.rank() == 0 { vec![1.0, 2.0, -3.0] } else { vec![3.0, 6.0, 3.0] };
        comm.execute(Collective::AllReduce(ReduceOp::Mean), host(data, &[3]))
    })
    .unwrap()
    .into_values()
    .unwrap();
    for output in results {
        assert_eq!(output.values, HostValues::F32(vec![2.0, 4.0, 0.0]));
    }
}

#[test]
fn all_reduce_of_a_million_elements_matches_a_serial_sum_exactly() {
    let len = 1 << 20;
    let results = run_in_process(2, TIMEOUT, |comm| {
        comm.execute(Collective::AllReduce(ReduceOp::Sum), host(values(comm.rank(), len), &[len]))
    })
    .unwrap()
    .into_values()
    .unwrap();
    let (a, b) = (values(0, len), values(1, len));
    let expected: Vec<f32> = a.iter().zip(&b).map(|(x, y)| x + y).collect();
    let expected = HostValues::F32(expected);
    assert!(results.iter().all(|output| output.values == expected));
}

#[test]
fn broadcast_copies_the_root_to_every_rank() {
    let results = run_in_process(3, TIMEOUT, |comm| {
        comm.execute(Collective::Broadcast { root: 1 }, host(values(comm.rank(), 4), &[2, 2]))
    })
    .unwrap()
    .into_values()
    .unwrap();
    for output in results {
        assert_eq!(output, host(values(1, 4), &[2, 2]));
    }
}

#[test]
fn all_gather_concatenates_along_axis_0_in_rank_order() {
    let results = run_in_process(3, TIMEOUT, |comm| {
        let rank = comm.rank() as f32;
        comm.execute(Collective::AllGather, host(vec![rank, rank + 0.5], &[1, 2]))
    })
    .unwrap()
    .into_values()
    .unwrap();
    for output in results {
        assert_eq!(output, host(vec![0.0, 0.5, 1.0, 1.5, 2.0, 2.5], &[3, 2]));
    }
}

#[test]
fn reduce_scatter_gives_each_rank_its_part_of_the_sum() {
    let results = run_in_process(2, TIMEOUT, |comm| {
        let data = if comm.rank() == 0 { vec![1.0, 2.0, 3.0, 4.0] } else { vec![10.0, 20.0, 30.0, 40.0] };
        comm.execute(Collective::ReduceScatter(ReduceOp::Sum), host(data, &[2, 2]))
    })
    .unwrap()
    .into_values()
    .unwrap();
    assert_eq!(results[0], host(vec![11.0, 22.0], &[1, 2]));
    assert_eq!(results[1], host(vec![33.0, 44.0], &[1, 2]));
}

#[test]
fn reduce_scatter_mean_divides_each_part() {
    let results = run_in_process(2, TIMEOUT, |comm| {
        comm.execute(Collective::ReduceScatter(ReduceOp::Mean), host(vec![2.0, 4.0], &[2]))
    })
    .unwrap()
    .into_values()
    .unwrap();
    assert_eq!(results[0], host(vec![2.0], &[1]));
    assert_eq!(results[1], host(vec![4.0], &[1]));
}

#[test]
fn barrier_returns_on_every_rank() {
    let results = run_in_process(4, TIMEOUT, |comm| {
        comm.barrier()?;
        comm.barrier()?;
        Ok(comm.rank())
    })
    .unwrap()
    .into_values()
    .unwrap();
    assert_eq!(results, vec![0, 1, 2, 3]);
}

#[test]
fn many_collectives_in_a_row_stay_in_step() {
    let results = run_in_process(3, TIMEOUT, |comm| {
        let mut value = host(vec![comm.rank() as f32 + 1.0], &[1]);
        for _ in 0..200 {
            value = comm.execute(Collective::AllReduce(ReduceOp::Mean), value)?.map(|mean| mean + 1.0);
        }
        Ok(value.values.get(0))
    })
    .unwrap()
    .into_values()
    .unwrap();
    // The first mean of 1, 2, 3 is 2; each of the 200 rounds then adds one on every rank.
    assert_eq!(results, vec![Some(202.0); 3]);
}

#[test]
fn a_group_of_one_returns_its_input() {
    let results = run_in_process(1, TIMEOUT, |comm| {
        let input = host(vec![1.0, -2.0], &[2]);
        let reduced = comm.execute(Collective::AllReduce(ReduceOp::Mean), input.clone())?;
        let broadcast = comm.execute(Collective::Broadcast { root: 0 }, input.clone())?;
        let gathered = comm.execute(Collective::AllGather, input.clone())?;
        let scattered = comm.execute(Collective::ReduceScatter(ReduceOp::Sum), input.clone())?;
        Ok([reduced, broadcast, gathered, scattered].map(|output| output == input))
    })
    .unwrap()
    .into_values()
    .unwrap();
    assert_eq!(results, vec![[true; 4]]);
}

#[test]
fn empty_tensors_pass_through_every_collective() {
    let results = run_in_process(2, TIMEOUT, |comm| {
        let empty = host(Vec::new(), &[0, 3]);
        Ok([
            comm.execute(Collective::AllReduce(ReduceOp::Sum), empty.clone())?,
            comm.execute(Collective::Broadcast { root: 1 }, empty.clone())?,
            comm.execute(Collective::AllGather, empty.clone())?,
            comm.execute(Collective::ReduceScatter(ReduceOp::Mean), empty.clone())?,
        ])
    })
    .unwrap()
    .into_values()
    .unwrap();
    for outputs in results {
        assert!(outputs.iter().all(|output| output == &host(Vec::new(), &[0, 3])), "{outputs:?}");
    }
}

#[test]
fn shard_ranges_split_a_batch_in_rank_order() {
    let ranges = run_in_process(3, TIMEOUT, |comm| Ok(comm.shard_range(10))).unwrap().into_values().unwrap();
    assert_eq!(ranges, vec![0..4, 4..7, 7..10]);
}

#[test]
fn a_group_needs_at_least_one_rank() {
    let error = run_in_process(0, TIMEOUT, |_| Ok(())).unwrap_err();
    let no_rank = matches!(
        error,
        Error::InvalidValue { op: "run_in_process", parameter: "world_size", value: ArgumentValue::Size(0), .. }
    );
    assert!(no_rank, "{error}");
    assert_eq!(
        error.to_string(),
        "invalid argument to `run_in_process`: `world_size` is 0; it must be at least 1: a group needs a rank"
    );
}

// ---- f64: every collective exact in f64 -------------------------------------------------------------------------

/// Rank `rank`'s `f64` values: none of them an `f32` value (each carries a 2^-40 and a multiple of 0.1), distinct
/// per rank and per element, and of mixed magnitudes so that the order of additions shows in the last bits.
fn f64_values(rank: usize, len: usize) -> Vec<f64> {
    let tiny = 2f64.powi(-40);
    (0..len).map(|i| (1.0 + tiny * (i % 7 + 1) as f64) * (rank as f64 * 1e3 + 1.0) + 0.1 * (i % 11) as f64).collect()
}

/// The element-wise sums of every rank's values, added in rank order in `f64`: what every engine must give.
fn f64_sums_in_rank_order(world_size: usize, len: usize) -> Vec<f64> {
    let mut sums = f64_values(0, len);
    for rank in 1..world_size {
        sums.iter_mut().zip(f64_values(rank, len)).for_each(|(sum, value)| *sum += value);
    }
    sums
}

/// So that a check on these values can fail: an engine that went through `f32` would not give them.
fn assert_not_f32_values(values: &[f64]) {
    assert!(values.iter().all(|&value| f64::from(value as f32) != value), "some value is an f32 value");
}

fn f64_host(values: Vec<f64>, dims: &[usize]) -> HostTensor {
    HostTensor::new(values, dims)
}

/// One rank's outputs of a run, bit for bit.
fn bits(output: &HostTensor) -> Vec<u64> {
    match &output.values {
        HostValues::F64(values) => values.iter().map(|value| value.to_bits()).collect(),
        HostValues::F32(values) => panic!("f64 values came back as f32: {values:?}"),
    }
}

fn f64_bits(values: &[f64]) -> Vec<u64> {
    values.iter().map(|value| value.to_bits()).collect()
}

/// Each rank's outputs of `collective` with `Sum`, then with `Mean`, on the input `input(rank)`.
fn sum_and_mean_on_every_rank(
    world_size: usize,
    collective: fn(ReduceOp) -> Collective,
    input: impl Fn(usize) -> HostTensor + Send + Sync,
) -> Vec<(HostTensor, HostTensor)> {
    run_in_process(world_size, TIMEOUT, |comm| {
        let sum = comm.execute(collective(ReduceOp::Sum), input(comm.rank()))?;
        let mean = comm.execute(collective(ReduceOp::Mean), input(comm.rank()))?;
        Ok((sum, mean))
    })
    .unwrap()
    .into_values()
    .unwrap()
}

#[test]
fn f64_all_reduce_sums_and_means_exactly_in_rank_order() {
    // 5000 elements: more than one block of the engine's blocked reduction, parts not aligned to it.
    for (world_size, dims) in [(2, vec![3]), (3, vec![7, 143]), (4, vec![5000])] {
        let len: usize = dims.iter().product();
        let sums = f64_sums_in_rank_order(world_size, len);
        assert_not_f32_values(&sums);
        let means: Vec<f64> = sums.iter().map(|sum| sum / world_size as f64).collect();
        let results = sum_and_mean_on_every_rank(world_size, Collective::AllReduce, |rank| {
            f64_host(f64_values(rank, len), &dims)
        });
        for (rank, (sum, mean)) in results.iter().enumerate() {
            assert_eq!((&sum.shape, &mean.shape), (&Shape::new(dims.as_slice()), &Shape::new(dims.as_slice())));
            assert!(bits(sum) == f64_bits(&sums), "{world_size} ranks, rank {rank}: the f64 sums differ");
            assert!(bits(mean) == f64_bits(&means), "{world_size} ranks, rank {rank}: the f64 means differ");
        }
    }
}

#[test]
fn f64_broadcast_and_all_gather_move_values_unchanged() {
    let world_size = 3;
    let results = run_in_process(world_size, TIMEOUT, |comm| {
        let broadcast =
            comm.execute(Collective::Broadcast { root: 1 }, f64_host(f64_values(comm.rank(), 6), &[2, 3]))?;
        let gathered = comm.execute(Collective::AllGather, f64_host(f64_values(comm.rank(), 4), &[2, 2]))?;
        Ok((broadcast, gathered))
    })
    .unwrap()
    .into_values()
    .unwrap();
    let root = f64_values(1, 6);
    assert_not_f32_values(&root);
    let gathered: Vec<f64> = (0..world_size).flat_map(|rank| f64_values(rank, 4)).collect();
    for (broadcast, all) in results {
        assert_eq!(broadcast, f64_host(root.clone(), &[2, 3]));
        assert_eq!(all, f64_host(gathered.clone(), &[6, 2]));
    }
}

#[test]
fn f64_reduce_scatter_gives_each_rank_its_exact_part() {
    for world_size in [2, 4] {
        let len = world_size * 6;
        let sums = f64_sums_in_rank_order(world_size, len);
        assert_not_f32_values(&sums);
        let results = sum_and_mean_on_every_rank(world_size, Collective::ReduceScatter, |rank| {
            f64_host(f64_values(rank, len), &[world_size * 3, 2])
        });
        for (rank, (sum, mean)) in results.iter().enumerate() {
            let part = &sums[rank * 6..(rank + 1) * 6];
            let means: Vec<f64> = part.iter().map(|sum| sum / world_size as f64).collect();
            assert_eq!(sum.shape, Shape::new([3, 2]));
            assert!(bits(sum) == f64_bits(part), "{world_size} ranks, rank {rank}: the f64 part differs");
            assert!(bits(mean) == f64_bits(&means), "{world_size} ranks, rank {rank}: the f64 mean differs");
        }
    }
}

#[test]
fn f64_values_stay_f64_in_a_group_of_one() {
    let input = f64_host(vec![1.0 + 2f64.powi(-40), 0.1], &[2]);
    let results = run_in_process(1, TIMEOUT, |comm| {
        let reduced = comm.execute(Collective::AllReduce(ReduceOp::Mean), input.clone())?;
        let gathered = comm.execute(Collective::AllGather, input.clone())?;
        Ok([reduced, gathered].map(|output| output == input))
    })
    .unwrap()
    .into_values()
    .unwrap();
    assert_eq!(results, vec![[true; 2]]);
}

// ---- tensors: each dtype through the collectives ---------------------------------------------------------------

/// Every collective of one rank on `x`, each output read back exactly with its dtype.
fn tensor_collectives<B: Backend>(comm: &Communicator, x: &Tensor<B>) -> dispatch_core::Result<Vec<(DType, Vec<f64>)>> {
    let outputs = [
        comm.all_reduce(x, ReduceOp::Sum)?,
        comm.all_reduce(x, ReduceOp::Mean)?,
        comm.broadcast(x, 1)?,
        comm.all_gather(x)?,
        comm.reduce_scatter(x, ReduceOp::Sum)?,
    ];
    outputs.iter().map(|output| Ok((output.dtype(), output.to_f64_vec()?))).collect()
}

/// What [`tensor_collectives`] gives rank `rank` of `world_size` whose inputs were `inputs(rank)` (rows of 3 values),
/// each output computed in `f64` and rounded once to `dtype`.
fn expected_tensor_collectives(
    world_size: usize,
    rank: usize,
    dtype: DType,
    inputs: impl Fn(usize) -> Vec<f64>,
) -> Vec<(DType, Vec<f64>)> {
    let mut sums = inputs(0);
    for other in 1..world_size {
        sums.iter_mut().zip(inputs(other)).for_each(|(sum, value)| *sum += value);
    }
    let means: Vec<f64> = sums.iter().map(|sum| sum / world_size as f64).collect();
    let gathered: Vec<f64> = (0..world_size).flat_map(&inputs).collect();
    let part_len = sums.len() / world_size;
    let part = sums[rank * part_len..(rank + 1) * part_len].to_vec();
    [sums, means, inputs(1), gathered, part]
        .into_iter()
        .map(|values| (dtype, values.into_iter().map(|value| dtype.round(value)).collect()))
        .collect()
}

fn f64_tensors_go_through_every_collective_exactly<B: Backend>(device: &B::Device) {
    let world_size = 2;
    let results = run_in_process(world_size, TIMEOUT, |comm| {
        let x = Tensor::<B>::from_f64_vec(f64_values(comm.rank(), 6), [2, 3], DType::F64, device)?;
        tensor_collectives(&comm, &x)
    })
    .unwrap()
    .into_values()
    .unwrap();
    for (rank, outputs) in results.iter().enumerate() {
        let expected = expected_tensor_collectives(world_size, rank, DType::F64, |rank| f64_values(rank, 6));
        for (collective, (output, expected)) in outputs.iter().zip(&expected).enumerate() {
            assert_not_f32_values(&expected.1);
            assert_eq!(output.0, DType::F64, "rank {rank}, collective {collective}");
            assert!(f64_bits(&output.1) == f64_bits(&expected.1), "rank {rank}, collective {collective}: {output:?}");
        }
    }
}

/// Half-precision values with full significands, rank 1's a quarter of rank 0's: their sums (1.25 times rank 0's)
/// need two more bits than the half type has, which `f32` holds. So every output is rounded once, from the exact
/// result, to the tensor's dtype.
fn half_values(dtype: DType, rank: usize) -> Vec<f64> {
    // The spacing of the dtype's values in [1, 2).
    let eps = if dtype == DType::F16 { 2f64.powi(-10) } else { 2f64.powi(-7) };
    let values = [2.0 - eps, 1.0 + eps, -(1.0 + 3.0 * eps), 0.375, 8.0 * (1.0 + eps), dtype.round(0.1)];
    let scale = 0.25f64.powi(rank as i32);
    values.iter().map(|value| value * scale).inspect(|&value| assert_eq!(dtype.round(value), value)).collect()
}

fn half_tensors_pass_through_f32_exactly_and_round_once<B: Backend>(device: &B::Device) {
    let world_size = 2;
    for dtype in [DType::F16, DType::BF16] {
        let results = run_in_process(world_size, TIMEOUT, |comm| {
            let x = Tensor::<B>::from_f64_vec(half_values(dtype, comm.rank()), [2, 3], dtype, device)?;
            tensor_collectives(&comm, &x)
        })
        .unwrap()
        .into_values()
        .unwrap();
        // The rounding is real: some exact sum is not a value of the dtype.
        let sums: Vec<f64> = (0..6).map(|i| half_values(dtype, 0)[i] + half_values(dtype, 1)[i]).collect();
        assert!(sums.iter().any(|&sum| dtype.round(sum) != sum), "{dtype}: {sums:?}");
        for (rank, outputs) in results.iter().enumerate() {
            let expected = expected_tensor_collectives(world_size, rank, dtype, |rank| half_values(dtype, rank));
            assert_eq!(outputs, &expected, "{dtype}, rank {rank}");
        }
    }
}

dispatch_tests::tests_on_every_base_backend!(
    f64_tensors_go_through_every_collective_exactly,
    half_tensors_pass_through_f32_exactly_and_round_once,
);
