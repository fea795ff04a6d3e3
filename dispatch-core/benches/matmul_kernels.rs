//! The matrix products of the GPT steps (BENCHMARKS.md, group 8): `matrixmultiply` (what the ndarray backend calls
//! through `general_mat_mul`) against the `gemm` crate (what candle and burn-flex call), on the steps' own shapes
//! and layouts, transposed operands included, in f32. Paired rounds in one process: each round times both kernels
//! on the same operands, in alternating order, and the ratio of each round is `gemm / matrixmultiply`. The outputs
//! are checked to agree before any timing.
//!
//!     MATMUL_NUM_THREADS=2 RAYON_NUM_THREADS=2 cargo bench -p dispatch-core --bench matmul_kernels
//!
//! `gemm` runs on one thread and on two (rayon); `matrixmultiply` with its own threading, as the ndarray backend
//! builds it, on `MATMUL_NUM_THREADS` threads. A batch of products (the attention heads) also runs split over
//! rayon's threads (`RAYON_NUM_THREADS`), each product on one.

use std::hint::black_box;
use std::time::Instant;

use ndarray::linalg::general_mat_mul;
use ndarray::{Array2, ArrayView2, ArrayViewMut2};
use rayon::prelude::*;

/// One product of the step: `[m, k] @ [k, n]`, `batch` times, each operand read transposed or not.
struct Case {
    name: &'static str,
    batch: usize,
    m: usize,
    k: usize,
    n: usize,
    lhs_transposed: bool,
    rhs_transposed: bool,
}

const CASES: [Case; 13] = [
    case("qkv     [1024,64]@[64,192]", 1, [1024, 64, 192], AsStored),
    case("proj    [1024,64]@[64,64]", 1, [1024, 64, 64], AsStored),
    case("mlp up  [1024,64]@[64,256]", 1, [1024, 64, 256], AsStored),
    case("mlp dn  [1024,256]@[256,64]", 1, [1024, 256, 64], AsStored),
    case("logits  [1024,64]@[64,96]", 1, [1024, 64, 96], AsStored),
    case("dX      [1024,192]@[192,64]^T", 1, [1024, 192, 64], RightTransposed),
    case("dW      [64,1024]^T@[1024,192]", 1, [64, 1024, 192], LeftTransposed),
    case("scores  64x [64,16]@[16,64]^T", 64, [64, 16, 64], RightTransposed),
    case("att@v   64x [64,64]@[64,16]", 64, [64, 64, 16], AsStored),
    case("d att   64x [64,16]@[64,16]^T", 64, [64, 16, 64], RightTransposed),
    // The larger GPT of group 7: width 256, 4 heads, context 128, batch 8.
    case("large qkv    [1024,256]@[256,768]", 1, [1024, 256, 768], AsStored),
    case("large scores 32x [128,64]@[64,128]^T", 32, [128, 64, 128], RightTransposed),
    case("large att@v  32x [128,128]@[128,64]", 32, [128, 128, 64], AsStored),
];

/// How a case's operands are read: as stored, the right one transposed, or the left one transposed.
#[derive(Clone, Copy)]
enum Layout {
    AsStored,
    RightTransposed,
    LeftTransposed,
}
use Layout::{AsStored, LeftTransposed, RightTransposed};

const fn case(name: &'static str, batch: usize, [m, k, n]: [usize; 3], layout: Layout) -> Case {
    let (lhs_transposed, rhs_transposed) = match layout {
        AsStored => (false, false),
        RightTransposed => (false, true),
        LeftTransposed => (true, false),
    };
    Case { name, batch, m, k, n, lhs_transposed, rhs_transposed }
}

/// A kernel: writes `lhs @ rhs` into `out` (row-major), overwriting it.
type Kernel = fn(ArrayView2<'_, f32>, ArrayView2<'_, f32>, ArrayViewMut2<'_, f32>);

fn matrixmultiply(lhs: ArrayView2<'_, f32>, rhs: ArrayView2<'_, f32>, mut out: ArrayViewMut2<'_, f32>) {
    general_mat_mul(1.0, &lhs, &rhs, 0.0, &mut out);
}

fn gemm_with(
    parallelism: gemm::Parallelism,
    lhs: ArrayView2<'_, f32>,
    rhs: ArrayView2<'_, f32>,
    mut out: ArrayViewMut2<'_, f32>,
) {
    let ((m, k), n) = (lhs.dim(), rhs.dim().1);
    let (ls, rs, os) = (lhs.strides(), rhs.strides(), out.strides().to_vec());
    // SAFETY: the three views are valid for their dimensions and strides, `out` is borrowed mutably and does not
    // overlap the operands, and `read_dst` is false, so `out`'s old values are never read.
    unsafe {
        gemm::gemm(
            m,
            n,
            k,
            out.as_mut_ptr(),
            os[1],
            os[0],
            false,
            lhs.as_ptr(),
            ls[1],
            ls[0],
            rhs.as_ptr(),
            rs[1],
            rs[0],
            0.0,
            1.0,
            false,
            false,
            false,
            parallelism,
        );
    }
}

fn gemm_one_thread(lhs: ArrayView2<'_, f32>, rhs: ArrayView2<'_, f32>, out: ArrayViewMut2<'_, f32>) {
    gemm_with(gemm::Parallelism::None, lhs, rhs, out);
}

fn gemm_two_threads(lhs: ArrayView2<'_, f32>, rhs: ArrayView2<'_, f32>, out: ArrayViewMut2<'_, f32>) {
    gemm_with(gemm::Parallelism::Rayon(2), lhs, rhs, out);
}

/// Deterministic operands in `[-1, 1)`.
fn filled(rows: usize, columns: usize, seed: u32) -> Array2<f32> {
    let mut state = seed.wrapping_mul(2_654_435_761).wrapping_add(1);
    Array2::from_shape_fn((rows, columns), |_| {
        state ^= state << 13;
        state ^= state >> 17;
        state ^= state << 5;
        (state as f32 / u32::MAX as f32) * 2.0 - 1.0
    })
}

/// A case's operands, stored so that the views read them with the case's layout.
struct Operands {
    lhs: Vec<Array2<f32>>,
    rhs: Vec<Array2<f32>>,
    case_transposes: (bool, bool),
}

impl Operands {
    fn new(case: &Case) -> Self {
        let stored = |rows, columns, transposed: bool, seed| match transposed {
            true => filled(columns, rows, seed),
            false => filled(rows, columns, seed),
        };
        let lhs = (0..case.batch).map(|i| stored(case.m, case.k, case.lhs_transposed, 2 * i as u32)).collect();
        let rhs = (0..case.batch).map(|i| stored(case.k, case.n, case.rhs_transposed, 2 * i as u32 + 1)).collect();
        Operands { lhs, rhs, case_transposes: (case.lhs_transposed, case.rhs_transposed) }
    }

    fn views(&self, index: usize) -> (ArrayView2<'_, f32>, ArrayView2<'_, f32>) {
        let (lhs, rhs) = (self.lhs[index].view(), self.rhs[index].view());
        let lhs = if self.case_transposes.0 { lhs.reversed_axes() } else { lhs };
        let rhs = if self.case_transposes.1 { rhs.reversed_axes() } else { rhs };
        (lhs, rhs)
    }
}

/// A kernel and how a batch runs: one product after another, or split over rayon's threads.
#[derive(Clone, Copy)]
struct Runner {
    name: &'static str,
    kernel: Kernel,
    parallel_batch: bool,
}

fn run(runner: Runner, operands: &Operands, outputs: &mut [Array2<f32>]) {
    let one = |(index, out): (usize, &mut Array2<f32>)| {
        let (lhs, rhs) = operands.views(index);
        (runner.kernel)(black_box(lhs), black_box(rhs), out.view_mut());
    };
    if runner.parallel_batch && outputs.len() > 1 {
        outputs.par_iter_mut().enumerate().for_each(one);
    } else {
        outputs.iter_mut().enumerate().for_each(one);
    }
}

fn seconds_of(runner: Runner, operands: &Operands, outputs: &mut [Array2<f32>], reps: usize) -> f64 {
    let start = Instant::now();
    for _ in 0..reps {
        run(runner, operands, outputs);
    }
    black_box(&outputs);
    start.elapsed().as_secs_f64() / reps as f64
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn main() {
    let rounds = 15;
    let runner = |name, kernel, parallel_batch| Runner { name, kernel, parallel_batch };
    let kernels = [
        runner("matrixmultiply", matrixmultiply as Kernel, false),
        runner("gemm 1 thread", gemm_one_thread, false),
        runner("gemm 2 threads", gemm_two_threads, false),
        runner("matrixmultiply, batch over rayon", matrixmultiply, true),
        runner("gemm 1 thread, batch over rayon", gemm_one_thread, true),
    ];
    println!(
        "MATMUL_NUM_THREADS={}; {rounds} paired rounds per case; median time per product (all of a batch) and the median of \
         each round's ratio to matrixmultiply",
        std::env::var("MATMUL_NUM_THREADS").unwrap_or_else(|_| "unset".to_owned())
    );
    for case in &CASES {
        let operands = Operands::new(case);
        let mut outputs: Vec<Vec<Array2<f32>>> =
            kernels.iter().map(|_| (0..case.batch).map(|_| Array2::zeros((case.m, case.n))).collect()).collect();
        for (runner, outputs) in kernels.iter().zip(&mut outputs) {
            run(*runner, &operands, outputs);
        }
        for (Runner { name, .. }, other) in kernels.iter().zip(&outputs).skip(1) {
            for (expected, got) in outputs[0].iter().zip(other) {
                let worst = expected.iter().zip(got).map(|(a, b)| (a - b).abs()).fold(0.0f32, f32::max);
                assert!(
                    worst <= 1e-4 * case.k as f32,
                    "{name} disagrees with matrixmultiply on {}: {worst}",
                    case.name
                );
            }
        }
        let flops = 2.0 * (case.batch * case.m * case.k * case.n) as f64;
        // About 20 ms of work per kernel per round.
        let reps = ((0.02 * 20e9 / flops) as usize).clamp(5, 20_000);
        let mut times: Vec<Vec<f64>> = vec![Vec::new(); kernels.len()];
        for round in 0..rounds {
            let mut order: Vec<usize> = (0..kernels.len()).collect();
            if round % 2 == 1 {
                order.reverse();
            }
            for index in order {
                times[index].push(seconds_of(kernels[index], &operands, &mut outputs[index], reps));
            }
        }
        println!("{}", case.name);
        for (index, Runner { name, parallel_batch, .. }) in kernels.iter().enumerate() {
            if *parallel_batch && case.batch == 1 {
                continue;
            }
            let time = median(times[index].clone());
            let ratio = median(times[index].iter().zip(&times[0]).map(|(t, base)| t / base).collect());
            println!("    {name:<34} {:>8.1} us {:>6.1} GFLOP/s   x{ratio:.3}", time * 1e6, flops / time / 1e9);
        }
    }
}
