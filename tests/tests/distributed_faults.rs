//! Faults in an in-process group: every rank gets an `Err`, nobody hangs, and the next run is unaffected.

use std::sync::Barrier;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use dispatch_core::distributed::{Collective, Communicator, ReduceOp, run_in_process};
use dispatch_core::{Error, HostTensor, Shape};

const TIMEOUT: Duration = Duration::from_secs(30);

fn host(data: Vec<f32>, dims: &[usize]) -> HostTensor {
    HostTensor::new(data, dims)
}

fn sum_of_ranks(comm: &Communicator) -> dispatch_core::Result<f64> {
    let output = comm.execute(Collective::AllReduce(ReduceOp::Sum), host(vec![comm.rank() as f32 + 1.0], &[1]))?;
    Ok(output.values.get(0).expect("one value in, one out"))
}

#[test]
fn different_shapes_fail_on_every_rank_naming_the_shapes_and_the_group_goes_on() {
    let results = run_in_process(2, TIMEOUT, |comm| {
        let dims: &[usize] = if comm.rank() == 0 { &[2, 3] } else { &[3, 2] };
        let mismatch = comm.execute(Collective::AllReduce(ReduceOp::Sum), host(vec![1.0; 6], dims));
        // Every rank saw the same disagreement, so the group is still in step for the next call.
        Ok((mismatch.map(drop), sum_of_ranks(&comm)?))
    })
    .unwrap()
    .into_values()
    .unwrap();
    for (mismatch, sum) in results {
        let error = mismatch.unwrap_err();
        assert!(matches!(error, Error::CollectiveMismatch { op: "all_reduce", .. }), "{error}");
        let message = error.to_string();
        assert!(message.contains("rank 0 [2, 3]") && message.contains("rank 1 [3, 2]"), "{message}");
        assert_eq!(sum, 3.0);
    }
}

#[test]
fn different_element_types_fail_on_every_rank_naming_them_and_the_group_goes_on() {
    // Every collective, so that each data phase is guarded, on 3 ranks of which only the last sends f64.
    let collectives = [
        Collective::AllReduce(ReduceOp::Sum),
        Collective::Broadcast { root: 2 },
        Collective::AllGather,
        Collective::ReduceScatter(ReduceOp::Mean),
    ];
    let results = run_in_process(3, TIMEOUT, |comm| {
        let mismatches = collectives.map(|collective| {
            let input = if comm.rank() == 2 { HostTensor::new(vec![1.0f64; 3], [3]) } else { host(vec![1.0; 3], &[3]) };
            comm.execute(collective, input).map(drop)
        });
        // Every rank saw the same disagreement, so the group is still in step for the next call.
        Ok((mismatches, sum_of_ranks(&comm)?))
    })
    .unwrap()
    .into_values()
    .unwrap();
    assert_eq!(results.len(), 3);
    for (mismatches, sum) in results {
        for (collective, mismatch) in collectives.iter().zip(mismatches) {
            let error = mismatch.unwrap_err();
            let op = collective.name();
            assert!(matches!(&error, Error::CollectiveMismatch { op: named, .. } if *named == op), "{error}");
            let message = error.to_string();
            assert!(message.contains("different element types: rank 0 f32, rank 1 f32, rank 2 f64"), "{message}");
        }
        assert_eq!(sum, 6.0);
    }
}

#[test]
fn different_collectives_fail_on_every_rank() {
    let results = run_in_process(2, TIMEOUT, |comm| {
        let collective =
            if comm.rank() == 0 { Collective::AllReduce(ReduceOp::Sum) } else { Collective::Broadcast { root: 0 } };
        Ok(comm.execute(collective, host(vec![1.0], &[1])).map(drop))
    })
    .unwrap()
    .into_values()
    .unwrap();
    for result in results {
        let message = result.unwrap_err().to_string();
        assert!(message.contains("all_reduce(Sum)") && message.contains("broadcast(root 0)"), "{message}");
    }
}

#[test]
fn a_broadcast_root_out_of_range_fails_on_every_rank() {
    let results = run_in_process(2, TIMEOUT, |comm| {
        Ok(comm.execute(Collective::Broadcast { root: 2 }, host(vec![1.0], &[1])).map(drop))
    })
    .unwrap()
    .into_values()
    .unwrap();
    for result in results {
        let error = result.unwrap_err();
        assert!(matches!(error, Error::IndexOutOfRange { op: "broadcast", index: 2, len: 2 }), "{error}");
        assert_eq!(error.to_string(), "invalid argument to `broadcast`: index 2 is out of range 0..2");
    }
}

#[test]
fn a_reduce_scatter_that_cannot_split_evenly_fails_on_every_rank() {
    let results = run_in_process(2, TIMEOUT, |comm| {
        Ok(comm.execute(Collective::ReduceScatter(ReduceOp::Sum), host(vec![1.0; 3], &[3])).map(drop))
    })
    .unwrap()
    .into_values()
    .unwrap();
    for result in results {
        let error = result.unwrap_err();
        assert!(matches!(&error, Error::UnexpectedShape { op: "reduce_scatter", shape, .. } if shape.dims() == [3]));
        assert_eq!(
            error.to_string(),
            "invalid argument to `reduce_scatter`: needs a first axis that the group's ranks split evenly, got shape [3]"
        );
    }
}

#[test]
fn a_gather_no_tensor_could_hold_fails_on_every_rank() {
    // Each rank's empty tensor is a valid shape, but two of them side by side have more rows than any
    // tensor may hold elements.
    let rows = Shape::MAX_ELEMENTS / 2 + 1;
    let results =
        run_in_process(2, TIMEOUT, |comm| Ok(comm.execute(Collective::AllGather, host(Vec::new(), &[rows, 0, 1]))))
            .unwrap()
            .into_values()
            .unwrap();
    for result in results {
        let error = result.unwrap_err();
        let gathered = Shape::new([2 * rows, 0, 1]);
        assert!(
            matches!(&error, Error::ShapeTooLarge { op: "all_gather", shape, .. } if *shape == gathered),
            "{error}"
        );
    }
}

#[test]
fn values_that_do_not_fill_the_shape_are_rejected() {
    let results = run_in_process(1, TIMEOUT, |comm| Ok(comm.execute(Collective::AllGather, host(vec![1.0], &[2]))))
        .unwrap()
        .into_values()
        .unwrap();
    let error = results[0].as_ref().unwrap_err();
    let expected_shape = Shape::new([2]);
    let unfilled =
        matches!(error, Error::ElementCountMismatch { op: "all_gather", count: 1, shape } if *shape == expected_shape);
    assert!(unfilled, "{error}");
}

#[test]
fn a_rank_that_errors_fails_the_others_and_the_run_reports_its_error() {
    let results = run_in_process(3, TIMEOUT, |comm| {
        if comm.rank() == 2 {
            return Err(Error::invalid("load_batch", "no such file"));
        }
        sum_of_ranks(&comm)
    })
    .unwrap();
    for rank in 0..2 {
        let error = results.get(rank).unwrap().as_ref().unwrap_err();
        assert!(matches!(error, Error::PeerFailed { op: "all_reduce", .. }), "{error}");
        assert!(error.to_string().contains("rank 2 returned an error") && error.to_string().contains("no such file"));
    }
    // The root cause, not the failures it caused.
    let error = results.into_values().unwrap_err();
    assert!(matches!(error, Error::InvalidArgument { op: "load_batch", .. }), "{error}");
}

#[test]
fn a_rank_that_panics_fails_the_others_instead_of_hanging() {
    let results = run_in_process(2, TIMEOUT, |comm| {
        if comm.rank() == 1 {
            panic!("out of memory in rank 1");
        }
        sum_of_ranks(&comm)
    })
    .unwrap();
    let error = results.get(0).unwrap().as_ref().unwrap_err();
    assert!(error.to_string().contains("rank 1 panicked: out of memory in rank 1"), "{error}");
    let own = results.get(1).unwrap().as_ref().unwrap_err();
    assert!(matches!(own, Error::RankPanicked { rank: 1, .. }), "{own}");
}

#[test]
fn a_rank_that_makes_fewer_calls_fails_the_others() {
    let results = run_in_process(2, TIMEOUT, |comm| {
        sum_of_ranks(&comm)?;
        if comm.rank() == 0 {
            sum_of_ranks(&comm)?;
        }
        Ok(())
    })
    .unwrap();
    let error = results.get(0).unwrap().as_ref().unwrap_err();
    assert!(error.to_string().contains("rank 1 finished its work without making this call"), "{error}");
    assert!(results.get(1).unwrap().is_ok());
}

#[test]
fn a_rank_that_does_not_join_in_time_makes_the_collective_time_out_on_every_rank() {
    let timeout = Duration::from_millis(50);
    // Rank 1 joins only after rank 0 has given up, so rank 0 must time out, whatever the machine's speed.
    let rank_0_gave_up = Barrier::new(2);
    let results = run_in_process(2, timeout, |comm| {
        if comm.rank() == 0 {
            let result = sum_of_ranks(&comm);
            rank_0_gave_up.wait();
            result
        } else {
            rank_0_gave_up.wait();
            sum_of_ranks(&comm)
        }
    })
    .unwrap();
    let error = results.get(0).unwrap().as_ref().unwrap_err();
    assert!(matches!(error, Error::CollectiveTimeout { rank: 0, missing, .. } if missing == &vec![1]), "{error}");
    let late = results.get(1).unwrap().as_ref().unwrap_err();
    assert!(late.to_string().contains("rank 0 timed out after 50ms waiting for rank(s) [1]"), "{late}");
}

/// A thread cannot be stopped from outside: the others time out, but `run` waits for the stuck rank to return, and
/// that rank, making no further collective, keeps its own result.
#[test]
fn a_rank_stuck_in_its_own_code_times_the_others_out_and_run_waits_for_it() {
    let timeout = Duration::from_millis(50);
    let rank_0_gave_up = Barrier::new(2);
    let stuck_rank_returned = AtomicBool::new(false);
    let results = run_in_process(2, timeout, |comm| {
        if comm.rank() == 0 {
            let result = sum_of_ranks(&comm);
            rank_0_gave_up.wait();
            return result;
        }
        rank_0_gave_up.wait();
        // Still busy well after the others have failed.
        std::thread::sleep(Duration::from_millis(200));
        stuck_rank_returned.store(true, Ordering::SeqCst);
        Ok(-1.0)
    })
    .unwrap();
    assert!(stuck_rank_returned.load(Ordering::SeqCst), "run returned before the stuck rank's work did");
    let error = results.get(0).unwrap().as_ref().unwrap_err();
    assert!(matches!(error, Error::CollectiveTimeout { rank: 0, .. }), "{error}");
    assert_eq!(results.get(1).unwrap().as_ref().ok(), Some(&-1.0));
}

#[test]
fn a_failed_run_does_not_poison_the_next() {
    let failed = run_in_process(2, TIMEOUT, |comm| {
        if comm.rank() == 0 {
            return Err(Error::invalid("step", "diverged"));
        }
        sum_of_ranks(&comm)
    })
    .unwrap();
    assert!(failed.into_values().is_err());
    let sums = run_in_process(2, TIMEOUT, |comm| sum_of_ranks(&comm)).unwrap().into_values().unwrap();
    assert_eq!(sums, vec![3.0, 3.0]);
}

#[test]
fn a_communicator_kept_after_its_run_fails_cleanly() {
    let kept = run_in_process(2, TIMEOUT, Ok).unwrap().into_values().unwrap();
    let error = sum_of_ranks(&kept[0]).unwrap_err();
    assert!(matches!(error, Error::PeerFailed { .. }), "{error}");
}

#[test]
fn a_timeout_too_long_to_represent_means_no_timeout() {
    let sums = run_in_process(2, Duration::MAX, |comm| sum_of_ranks(&comm)).unwrap().into_values().unwrap();
    assert_eq!(sums, vec![3.0, 3.0]);
}
