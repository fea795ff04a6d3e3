//! all_reduce (sum) of 1M f32 over 2 ranks: the in-process engine against Open MPI with 2 processes on the same
//! machine, side by side in one criterion run.
//!
//! In-process only (no MPI needed):
//!     cargo bench -p dispatch-core --bench collectives
//! Both engines in the same run (build once with the feature, then start the bench binary on 2 ranks; rank 0
//! runs criterion and reports, rank 1 follows its commands):
//!     cargo bench -p dispatch-core --features mpi --bench collectives --no-run
//!     mpirun -np 2 target/release/deps/collectives-<hash> --bench
//! (as root add `--allow-run-as-root`; `--mca btl self,tcp ...` restricts Open MPI to TCP over loopback, see
//! BENCHMARKS.md).
//!
//! Each variant is timed inside the ranks with `iter_custom`: after set-up the ranks meet at a barrier and rank 0
//! times `iters` back-to-back all-reduces, so thread start-up, buffer set-up and command exchange are not counted.

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{BenchmarkGroup, Criterion, Throughput, measurement::WallTime};
use dispatch_core::HostTensor;
use dispatch_core::Tensor;
use dispatch_core::backends::{NdArray, NdArrayDevice};
use dispatch_core::distributed::{Collective, Communicator, ReduceOp, run_in_process};

const ELEMENTS: usize = 1 << 20;
const RANKS: usize = 2;
const TIMEOUT: Duration = Duration::from_secs(600);
const GROUP: &str = "collectives/all_reduce_sum_1M_f32_2_ranks";

/// A rank's starting values. They double every round and eventually reach infinity, which costs the same as any
/// normal f32 on the CPU (only subnormals are slow), so rounds need no re-initialisation.
fn start_values(rank: usize) -> Vec<f32> {
    (0..ELEMENTS).map(|i| ((i % 1000) as f32 + rank as f32) * 1e-3).collect()
}

fn criterion() -> Criterion {
    Criterion::default().sample_size(30).measurement_time(Duration::from_secs(8)).configure_from_args()
}

fn configure(group: &mut BenchmarkGroup<'_, WallTime>) {
    group.throughput(Throughput::Bytes((ELEMENTS * size_of::<f32>()) as u64));
}

/// `iters` all-reduces on an in-process group, as timed by rank 0.
fn time_in_process(
    iters: u64,
    rounds: impl Fn(&Communicator, u64) -> dispatch_core::Result<Duration> + Sync,
) -> Duration {
    match run_in_process(RANKS, TIMEOUT, |comm| rounds(&comm, iters)).and_then(|timings| timings.into_values()) {
        Ok(timings) => timings[0],
        Err(error) => panic!("in-process benchmark failed: {error}"),
    }
}

/// Times `iters` all-reduces of host values through a communicator, from a barrier (after set-up) to the end.
fn host_rounds(comm: &Communicator, iters: u64) -> dispatch_core::Result<Duration> {
    let mut values = HostTensor::new(start_values(comm.rank()), [ELEMENTS]);
    comm.barrier()?;
    let start = Instant::now();
    for _ in 0..iters {
        values = comm.execute(Collective::AllReduce(ReduceOp::Sum), values)?;
    }
    let elapsed = start.elapsed();
    black_box(values);
    Ok(elapsed)
}

/// As `host_rounds`, on an ndarray tensor: adds the copies between the backend and host memory.
fn tensor_rounds(comm: &Communicator, iters: u64) -> dispatch_core::Result<Duration> {
    let mut tensor = Tensor::<NdArray>::from_vec(start_values(comm.rank()), [ELEMENTS], &NdArrayDevice)?;
    comm.barrier()?;
    let start = Instant::now();
    for _ in 0..iters {
        tensor = comm.all_reduce(&tensor, ReduceOp::Sum)?;
    }
    let elapsed = start.elapsed();
    black_box(tensor);
    Ok(elapsed)
}

fn bench_in_process(group: &mut BenchmarkGroup<'_, WallTime>) {
    group.bench_function("in_process/host_values", |b| b.iter_custom(|iters| time_in_process(iters, host_rounds)));
    group.bench_function("in_process/ndarray_tensor", |b| b.iter_custom(|iters| time_in_process(iters, tensor_rounds)));
}

/// The in-process engine alone, when Open MPI cannot take part; `why` says so after the results.
fn in_process_only(why: &str) {
    let mut criterion = criterion();
    let mut group = criterion.benchmark_group(GROUP);
    configure(&mut group);
    bench_in_process(&mut group);
    group.finish();
    criterion.final_summary();
    eprintln!("collectives: {why}, so only the in-process engine ran");
}

#[cfg(not(feature = "mpi"))]
fn main() {
    in_process_only("built without the `mpi` feature");
}

#[cfg(feature = "mpi")]
fn main() {
    if !dispatch_core::distributed::mpi::launched_by_mpirun() {
        in_process_only("not started by mpirun (see the header)");
        return;
    }
    mpi_side::main();
}

#[cfg(feature = "mpi")]
mod mpi_side {
    //! Rank 0 runs criterion and sends each timed batch to rank 1 as a command; rank 1 waits for commands with
    //! a sleeping poll, so it does not take a core from the in-process variants measured meanwhile.

    use std::thread;

    use mpi::collective::SystemOperation;
    use mpi::topology::SimpleCommunicator;
    use mpi::traits::{Communicator as _, CommunicatorCollectives, Root};

    use super::*;
    use dispatch_core::distributed::mpi::MpiWorld;

    /// What both ranks run next: `[variant, iters]`; variant `STOP` ends the follower.
    type Command = [u64; 2];
    const STOP: u64 = 0;
    const RAW_MPI: u64 = 1;
    const ENGINE_HOST: u64 = 2;
    const ENGINE_TENSOR: u64 = 3;

    pub fn main() {
        let world = MpiWorld::get().unwrap_or_else(|error| panic!("{error}"));
        assert_eq!(world.size(), RANKS, "start this benchmark with `mpirun -np {RANKS}`");
        let results = world.run(TIMEOUT, |comm| {
            let raw = SimpleCommunicator::world();
            if comm.rank() == 0 {
                lead(&raw, &comm);
            } else {
                follow(&raw, &comm);
            }
            Ok(())
        });
        if let Err(error) = results.into_values() {
            panic!("MPI benchmark failed: {error}");
        }
    }

    fn lead(raw: &SimpleCommunicator, comm: &Communicator) {
        let mut criterion = criterion();
        let mut group = criterion.benchmark_group(GROUP);
        configure(&mut group);
        bench_in_process(&mut group);
        for (name, variant) in [
            ("mpi/raw_rsmpi", RAW_MPI),
            ("mpi/engine_host_values", ENGINE_HOST),
            ("mpi/engine_ndarray_tensor", ENGINE_TENSOR),
        ] {
            group.bench_function(name, |b| {
                b.iter_custom(|iters| {
                    send_command(raw, [variant, iters]);
                    execute(raw, comm, variant, iters)
                })
            });
        }
        group.finish();
        criterion.final_summary();
        send_command(raw, [STOP, 0]);
    }

    fn follow(raw: &SimpleCommunicator, comm: &Communicator) {
        loop {
            let [variant, iters] = receive_command(raw);
            if variant == STOP {
                return;
            }
            execute(raw, comm, variant, iters);
        }
    }

    /// Both ranks run the same `iters` all-reduces of `variant`; rank 0's timing is the one reported.
    fn execute(raw: &SimpleCommunicator, comm: &Communicator, variant: u64, iters: u64) -> Duration {
        let timing = match variant {
            RAW_MPI => Ok(raw_rounds(raw, iters)),
            ENGINE_HOST => host_rounds(comm, iters),
            _ => tensor_rounds(comm, iters),
        };
        timing.unwrap_or_else(|error| panic!("MPI benchmark variant {variant} failed: {error}"))
    }

    /// The plain MPI call as an MPI user writes it: preallocated send and receive buffers, no checks.
    fn raw_rounds(raw: &SimpleCommunicator, iters: u64) -> Duration {
        let send = start_values(raw.rank() as usize);
        let mut receive = vec![0.0_f32; ELEMENTS];
        raw.barrier();
        let start = Instant::now();
        for _ in 0..iters {
            raw.all_reduce_into(&send[..], &mut receive[..], SystemOperation::sum());
        }
        let elapsed = start.elapsed();
        black_box(receive);
        elapsed
    }

    fn send_command(raw: &SimpleCommunicator, mut command: Command) {
        mpi::request::scope(|scope| raw.process_at_rank(0).immediate_broadcast_into(scope, &mut command).wait());
    }

    fn receive_command(raw: &SimpleCommunicator) -> Command {
        let mut command: Command = [STOP, 0];
        mpi::request::scope(|scope| {
            let mut request = raw.process_at_rank(0).immediate_broadcast_into(scope, &mut command);
            loop {
                request = match request.test() {
                    Ok(_) => break,
                    Err(pending) => pending,
                };
                thread::sleep(Duration::from_millis(1));
            }
        });
        command
    }
}
