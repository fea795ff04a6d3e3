//! The in-process engine's collectives on host buffers: values, shapes and rank order.

use std::time::Duration;

use dispatch_core::distributed::{Collective, ReduceOp, run_in_process};
use dispatch_core::{ArgumentValue, Error, HostTensor, Shape};

const TIMEOUT: Duration = Duration::from_secs(30);

fn host(data: Vec<f32>, dims: &[usize]) -> HostTensor {
    HostTensor { data, shape: Shape::new(dims) }
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
        assert_eq!(output.data, expected);
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
        assert_eq!(output.data, vec![2.0, 4.0, 0.0]);
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
    assert!(results.iter().all(|output| output.data == expected));
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
            value = comm.execute(Collective::AllReduce(ReduceOp::Mean), value)?;
            value.data[0] += 1.0;
        }
        Ok(value.data[0])
    })
    .unwrap()
    .into_values()
    .unwrap();
    // The first mean of 1, 2, 3 is 2; each of the 200 rounds then adds one on every rank.
    assert_eq!(results, vec![202.0; 3]);
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
