//! `parallel::build_pool_with_calling_thread`: the calling thread becomes one of rayon's, every pass gives the bits
//! it gives on a thread outside the pool (whose passes the pool's other thread runs alone), and a second call is an
//! `Err`; `parallel::keep_pool_spinning` keeps the other thread polling while its guard lives, with the same bits.
//! Its own test binary: rayon's global pool is built once per process.

use std::thread;

use dispatch_core::backends::{Autodiff, Candle, CandleDevice, NdArray, NdArrayDevice};
use dispatch_core::{AutodiffBackend, DType, Error, Tensor, parallel};

/// A loss and the weight's gradient, through passes large enough to split: GELU of 2^18 values (light and heavy
/// passes from 2^18 and 2^15 elements), row softmaxes, a matrix product and its gradient.
fn loss_and_gradient<B: AutodiffBackend>(device: &B::Device) -> (Vec<f32>, Vec<f32>) {
    let input = Tensor::<B>::random_normal([2048, 128], (0.0, 1.0), 7, DType::F32, device).unwrap();
    let weight = Tensor::<B>::random_normal([128, 128], (0.0, 0.1), 8, DType::F32, device).unwrap();
    let weight = weight.require_grad().unwrap();
    let hidden = input.matmul(&weight).unwrap().gelu().unwrap();
    let loss = hidden.add(&input).unwrap().softmax(1).unwrap().mul(&hidden).unwrap().sum().unwrap();
    let gradients = loss.backward().unwrap();
    (loss.to_vec().unwrap(), weight.grad(&gradients).unwrap().to_vec().unwrap())
}

/// The most threads seen polling while split passes run under a guard held by the caller. A poll starts only when the
/// pool's other thread takes a polling job (sent when a guard is made, and again by a split pass once the last poll
/// ended), and ends after 50 ms without work, which a loaded machine can stretch a single read into: so the count is
/// read while work runs, until some thread polls (for at most 10 s), then over 20 more passes.
fn most_threads_polling_while_working(values: &Tensor<NdArray>) -> usize {
    let (waited, mut most) = (std::time::Instant::now(), 0);
    while most == 0 && waited.elapsed().as_secs() < 10 {
        values.gelu().unwrap();
        most = most.max(parallel::polling_threads());
    }
    for _ in 0..20 {
        values.gelu().unwrap();
        most = most.max(parallel::polling_threads());
    }
    most
}

#[test]
fn the_calling_thread_joins_the_pool_and_every_value_stays() {
    assert_eq!(parallel::build_pool_with_calling_thread(2).unwrap(), 2);
    assert_eq!(rayon::current_thread_index(), Some(0), "the calling thread is the pool's first");
    assert_eq!(rayon::current_num_threads(), 2);

    let on_this_thread = (loss_and_gradient::<Autodiff<NdArray>>(&NdArrayDevice), {
        loss_and_gradient::<Autodiff<Candle>>(&CandleDevice::cpu())
    });
    let outside = thread::spawn(|| {
        assert_eq!(rayon::current_thread_index(), None, "a thread of its own is outside the pool");
        let ndarray = loss_and_gradient::<Autodiff<NdArray>>(&NdArrayDevice);
        (ndarray, loss_and_gradient::<Autodiff<Candle>>(&CandleDevice::cpu()))
    });
    let outside = outside.join().unwrap();
    let bits = |values: &[f32]| values.iter().map(|value| value.to_bits()).collect::<Vec<_>>();
    for ((inside, outside), backend) in [(&on_this_thread.0, &outside.0), (&on_this_thread.1, &outside.1)]
        .into_iter()
        .zip(["autodiff:ndarray", "autodiff:candle"])
    {
        assert!(inside.0[0].is_finite(), "{backend}: loss {}", inside.0[0]);
        assert_eq!(bits(&inside.0), bits(&outside.0), "{backend}: the loss");
        assert_eq!(bits(&inside.1), bits(&outside.1), "{backend}: the weight's gradient");
    }

    // With the pool's other thread polling for work, the same bits; once the guard is dropped, it stops polling.
    let values = Tensor::<NdArray>::random_normal([1 << 16], (0.0, 1.0), 9, DType::F32, &NdArrayDevice).unwrap();
    let spinning = parallel::keep_pool_spinning();
    let polled = (loss_and_gradient::<Autodiff<NdArray>>(&NdArrayDevice), {
        loss_and_gradient::<Autodiff<Candle>>(&CandleDevice::cpu())
    });
    assert_eq!(most_threads_polling_while_working(&values), 1, "the other thread polls; this one does not");
    drop(spinning);
    for ((polled, inside), backend) in [(&polled.0, &on_this_thread.0), (&polled.1, &on_this_thread.1)]
        .into_iter()
        .zip(["autodiff:ndarray", "autodiff:candle"])
    {
        assert_eq!(bits(&polled.0), bits(&inside.0), "{backend}: the loss, polling");
        assert_eq!(bits(&polled.1), bits(&inside.1), "{backend}: the weight's gradient, polling");
    }
    let waited = std::time::Instant::now();
    while parallel::polling_threads() > 0 {
        assert!(waited.elapsed().as_secs() < 10, "the other thread still polls after the guard was dropped");
        std::thread::yield_now();
    }

    // Polling that ended in a stretch without work starts again with the next split pass, the guard still held.
    let spinning = parallel::keep_pool_spinning();
    assert_eq!(most_threads_polling_while_working(&values), 1, "the other thread polls under a new guard");
    let waited = std::time::Instant::now();
    while parallel::polling_threads() > 0 {
        assert!(waited.elapsed().as_secs() < 10, "the other thread still polls after 10 s without work");
        thread::sleep(std::time::Duration::from_millis(10));
    }
    assert_eq!(most_threads_polling_while_working(&values), 1, "polling did not start again with the next pass");
    drop(spinning);
    let waited = std::time::Instant::now();
    while parallel::polling_threads() > 0 {
        assert!(waited.elapsed().as_secs() < 10, "the other thread still polls after the guard was dropped");
        std::thread::yield_now();
    }

    // A guard a step, as a loop that holds one per step does: a new guard's job can reach the other thread while it
    // still polls for the last one, inside a pass's wait; it must not poll there (that held the pass forever).
    for _ in 0..2000 {
        let _spinning = parallel::keep_pool_spinning();
        values.gelu().unwrap().exp().unwrap();
    }
    // Guards held at once: one thread polls.
    let (first, second) = (parallel::keep_pool_spinning(), parallel::keep_pool_spinning());
    assert_eq!(most_threads_polling_while_working(&values), 1, "a second guard's poll ran inside the first's work");
    drop((first, second));

    let again = parallel::build_pool_with_calling_thread(2).unwrap_err();
    assert!(matches!(again, Error::ThreadPool { op: "build_pool_with_calling_thread", .. }), "{again:?}");
    assert_eq!(rayon::current_num_threads(), 2, "the pool is unchanged");
}
