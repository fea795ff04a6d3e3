//! `exp`, `erf` and the GELU of `f32` elements, written without branches or calls so that a loop over a slice
//! vectorises, and those loops compiled for AVX2 when the CPU has it (for AVX-512 when it has that and the loop's
//! work is heavy: `wide_vectors`). The scalar functions (musl's `erf` in `f64`, glibc's `expf`) are calls the
//! compiler cannot vectorise, and took a fifth of ndarray's GPT step. Both CPU backends run them: ndarray in its
//! element-wise loops, candle for its CPU tensors (`backends/candle/elementwise.rs`). `matmul` and `window` hold the
//! matrix product and the convolutions both backends run on the CPU, `reduce` their softmax rows; `AdamConstants`
//! is their one-pass Adam step.
//!
//! Each function computes in `f64` and rounds once to `f32`. Its polynomials multiply and add in one rounding
//! (`mul_add`: an FMA instruction in the AVX2 and AVX-512 loops, compiled with it, and a call to `fma` elsewhere,
//! correctly rounded alike; the `exp` op took 0.68 of its time), and nothing else is contracted (Rust never
//! contracts `a * b + c` by itself), so the AVX-512 and AVX2 loops, the baseline loop and a single element all give
//! the same bits, on every x86-64 CPU and on other targets: a value does not depend on the layout it was computed in
//! or on the host. `f64` elements keep the scalar functions.
//!
//! Accuracy, against the exact function (`tests` below checks a dense sample against the scalar versions):
//! - `exp`: the nearest `f32` (its `f64` value is within 3e-13 relative, so only a near-tie could round the other
//!   way; none of 4.5 million sampled inputs did);
//! - `erf`: within 0.55 ulp, a rational fit of `erf(x)/x`; 3% of inputs get the other neighbour of the exact value
//!   than the scalar `erf` gives;
//! - GELU: within 0.7 ulp (0.66 measured). Left of `-√2`, where `1 + erf` cancels, it is a rational fit of `erfc`
//!   times `exp` (5.7e-11 relative), which a slice computes on its inputs there gathered into blocks.

// Without ndarray, `map_in_place` and its two loops are unused: candle calls the others.
#![cfg_attr(not(feature = "ndarray"), allow(dead_code))]

use std::f64::consts::{FRAC_1_SQRT_2, LN_2, LOG2_E};
use std::mem::MaybeUninit;

use num_traits::Float;

use crate::backend::AdamScalars;
use crate::math;
use crate::parallel::Work;

pub(crate) mod matmul;
pub(crate) mod reduce;
pub(crate) mod window;

/// The element functions that `f32` computes with this module's kernels and `f64` with the scalar ones.
pub(crate) trait Kernels: Copy + Send + Sync {
    /// `e^x`, as the `exp` op computes it.
    fn exp_of(x: Self) -> Self;
    /// The error function, as the `erf` op computes it.
    fn erf_of(x: Self) -> Self;
    /// The exact GELU `x Φ(x)`, as the `gelu` op computes it.
    fn gelu_of(x: Self) -> Self;
    /// `gelu_of` of every input, into the output of the same index (a shorter side ends it).
    fn gelu_slice<O: Slot<Self>>(inputs: &[Self], outputs: &mut [O]) {
        map_slice(Work::Heavy, inputs, outputs, Self::gelu_of);
    }
}

/// Where a loop writes one output: an element (`T`), or memory not written yet (`MaybeUninit<T>`, an output buffer
/// that was never cleared), which the loop writes without reading.
pub(crate) trait Slot<T> {
    fn put(&mut self, value: T);
}

impl<T> Slot<T> for T {
    #[inline(always)]
    fn put(&mut self, value: T) {
        *self = value;
    }
}

impl<T> Slot<T> for MaybeUninit<T> {
    #[inline(always)]
    fn put(&mut self, value: T) {
        self.write(value);
    }
}

impl Kernels for f32 {
    fn exp_of(x: f32) -> f32 {
        exp_wide(f64::from(x)) as f32
    }

    fn erf_of(x: f32) -> f32 {
        erf_wide(f64::from(x)) as f32
    }

    fn gelu_of(x: f32) -> f32 {
        if x < GELU_LEFT_TAIL { gelu_left_tail(x) } else { gelu_bulk(x) }
    }

    /// The bulk's form over the whole slice, then the inputs in the left tail again: gathered block by block, so
    /// that the tail's form runs vectorised too and only on the inputs that need it (computing both forms for
    /// every input made the GPT step 1.03x slower). The same values as `gelu_of`, element by element.
    fn gelu_slice<O: Slot<f32>>(inputs: &[f32], outputs: &mut [O]) {
        const BLOCK: usize = 256;
        map_slice(Work::Heavy, inputs, outputs, gelu_bulk);
        let mut tail = [0.0f32; BLOCK];
        let mut positions = [0usize; BLOCK];
        let mut values = [0.0f32; BLOCK];
        for (input_block, output_block) in inputs.chunks(BLOCK).zip(outputs.chunks_mut(BLOCK)) {
            let mut count = 0;
            for (position, &x) in input_block.iter().enumerate() {
                // Every input is written at `count`, which moves on only past a tail input: no branch on the
                // input, which would be mispredicted for about one input in twelve.
                if let (Some(slot), Some(at)) = (tail.get_mut(count), positions.get_mut(count)) {
                    (*slot, *at) = (x, position);
                }
                count += usize::from(x < GELU_LEFT_TAIL);
            }
            let count = count.min(BLOCK);
            map_slice(Work::Heavy, &tail[..count], &mut values[..count], gelu_left_tail);
            for (&position, &value) in positions[..count].iter().zip(&values[..count]) {
                if let Some(output) = output_block.get_mut(position) {
                    output.put(value);
                }
            }
        }
    }
}

impl Kernels for f64 {
    fn exp_of(x: f64) -> f64 {
        x.exp()
    }

    fn erf_of(x: f64) -> f64 {
        math::erf(x)
    }

    fn gelu_of(x: f64) -> f64 {
        math::gelu(x)
    }
}

/// The constants `gelu_derivative` takes, `1/√2`, `1/2`, `-1/2` and `1/√(2π)`, each as `scalar` puts an `f64` in the
/// tensor's dtype.
pub(crate) fn gelu_derivative_constants<E>(scalar: impl Fn(f64) -> E) -> [E; 4] {
    [std::f64::consts::FRAC_1_SQRT_2, 0.5, -0.5, math::NORMAL_DENSITY_AT_0].map(scalar)
}

/// `g` times the GELU's derivative at `x`, each step rounded by `round`; `constants` are `gelu_derivative_constants`
/// in the tensor's dtype. The steps and their order are `backend::defaults::gelu_backward`'s, so a kernel
/// that rounds as its ops do gives the composition's values bit for bit.
#[inline(always)]
pub(crate) fn gelu_derivative<E: Kernels + Float>(x: E, g: E, constants: [E; 4], round: impl Fn(E) -> E) -> E {
    let [to_erf, one_half, minus_half, density_at_0] = constants;
    let erf = round(E::erf_of(round(x * to_erf)));
    let cdf = round(round(erf + E::one()) * one_half);
    let density = round(round(E::exp_of(round(round(x * x) * minus_half))) * density_at_0);
    round(g * round(cdf + round(x * density)))
}

/// The scalars of one Adam step (`backend::AdamScalars`) in the tensor's element type, each as `scalar` puts an
/// `f64` in the tensor's dtype (as the composed default's scalar ops round it).
#[derive(Clone, Copy, Debug)]
pub(crate) struct AdamConstants<E> {
    decay: Option<E>,
    penalty: Option<E>,
    first: (E, E),
    second: (E, E),
    second_correction: E,
    eps: E,
    step_size: E,
}

impl<E: Float> AdamConstants<E> {
    pub(crate) fn new(scalars: &AdamScalars, scalar: impl Fn(f64) -> E) -> Self {
        let pair = |(a, b): (f64, f64)| (scalar(a), scalar(b));
        Self {
            decay: scalars.decay.map(&scalar),
            penalty: scalars.penalty.map(&scalar),
            first: pair(scalars.first),
            second: pair(scalars.second),
            second_correction: scalar(scalars.second_correction),
            eps: scalar(scalars.eps),
            step_size: scalar(scalars.step_size),
        }
    }

    /// The rows `[parameter, first moment, second moment]` of one Adam step, flattened, from `start` on into
    /// `outputs`: each element from the operands' elements of its column by `backend::defaults::adam_step`'s steps,
    /// each rounded by `round`, so a kernel that rounds as the ops do gives the composition's values bit for bit.
    /// The operands are of one length (the row's); outputs past the three rows, or columns an operand lacks, are NaN.
    pub(crate) fn write_rows<O: Slot<E>>(
        &self,
        (parameter, gradient, first, second): (&[E], &[E], &[E], &[E]),
        start: usize,
        outputs: &mut [O],
        round: impl Fn(E) -> E + Copy,
    ) {
        let width = parameter.len();
        let mut done = 0;
        while done < outputs.len() {
            let at = start.saturating_add(done);
            let (row, column) = (at.checked_div(width).unwrap_or(3), at.checked_rem(width).unwrap_or(0));
            let run = (width - column).min(outputs.len() - done);
            let columns = column..column + run;
            let (true, Some(out), Some(p), Some(g), Some(m), Some(v)) = (
                run > 0,
                outputs.get_mut(done..done + run),
                parameter.get(columns.clone()),
                gradient.get(columns.clone()),
                first.get(columns.clone()),
                second.get(columns),
            ) else {
                all_nan::<E, _>(outputs.get_mut(done..).unwrap_or_default());
                return;
            };
            let operands = p.iter().zip(g).zip(m.iter().zip(v));
            match row {
                0 => out.iter_mut().zip(operands).for_each(|(out, ((&p, &g), (&m, &v)))| {
                    let g = self.gradient(p, g, round);
                    out.put(self.parameter(p, self.first(g, m, round), self.second(g, v, round), round));
                }),
                1 => out.iter_mut().zip(operands).for_each(|(out, ((&p, &g), (&m, _)))| {
                    out.put(self.first(self.gradient(p, g, round), m, round));
                }),
                2 => out.iter_mut().zip(operands).for_each(|(out, ((&p, &g), (_, &v)))| {
                    out.put(self.second(self.gradient(p, g, round), v, round));
                }),
                _ => all_nan::<E, _>(out),
            }
            done += run;
        }
    }

    /// The gradient the moments take: Adam's penalty added, `g + wd p`.
    #[inline(always)]
    fn gradient(&self, p: E, g: E, round: impl Fn(E) -> E) -> E {
        match self.penalty {
            Some(penalty) => round(g + round(p * penalty)),
            None => g,
        }
    }

    #[inline(always)]
    fn first(&self, g: E, m: E, round: impl Fn(E) -> E) -> E {
        let (beta, rest) = self.first;
        round(round(m * beta) + round(g * rest))
    }

    #[inline(always)]
    fn second(&self, g: E, v: E, round: impl Fn(E) -> E) -> E {
        let (beta, rest) = self.second;
        round(round(v * beta) + round(round(g * g) * rest))
    }

    /// The new parameter from the new moments: AdamW's decay, then the step.
    #[inline(always)]
    fn parameter(&self, p: E, m: E, v: E, round: impl Fn(E) -> E) -> E {
        let p = match self.decay {
            Some(decay) => round(p * decay),
            None => p,
        };
        let denominator = round(round(round(v * self.second_correction).sqrt()) + self.eps);
        round(p - round(round(m * self.step_size) / denominator))
    }
}

/// Below this input, `gelu_bulk`'s `1 + erf(x/√2)` cancels too far (its relative error passes 1e-8, a sixth of an
/// `f32` ulp, near here), and the GELU is `gelu_left_tail`. About 8% of normally distributed inputs.
const GELU_LEFT_TAIL: f32 = -std::f32::consts::SQRT_2;

/// `x Φ(x)` with `Φ(x) = (1 + erf(x/√2)) / 2` by `erf_wide`: within 1 ulp from `GELU_LEFT_TAIL` up.
#[inline(always)]
fn gelu_bulk(x: f32) -> f32 {
    let x = f64::from(x);
    (x * (0.5 * (1.0 + erf_wide(x * FRAC_1_SQRT_2)))) as f32
}

/// `x Φ(x)` left of `GELU_LEFT_TAIL`, where `Φ(x) = erfc(t) / 2` with `t = -x/√2 > 1`. `t erfc(t) e^{t²}` is a
/// smooth function of `1/t`, fitted there (over `t` in `[1, 14.3]`, past which the GELU is 0 in `f32`) by a ratio of
/// polynomials of degree 6 to within 5.7e-11 relative; multiplied through by `x^6`, it is `P(x) / Q(x)` below, and
/// `x Φ(x) = -P(x) / Q(x) · e^{-x²/2} / √2`. `Q` has no root left of -√2 (it is `x^6` times a ratio positive on
/// `[0, 1]`). `x²` is exact in `f64`; at `-∞`, `P / Q` is NaN, as `x Φ(x) = -∞ · 0` is.
#[inline(always)]
fn gelu_left_tail(x: f32) -> f32 {
    let x = f64::from(x);
    let ratio = polynomial(&GELU_TAIL_NUMERATOR, x) / polynomial(&GELU_TAIL_DENOMINATOR, x);
    (-FRAC_1_SQRT_2 * ratio * exp_wide(-0.5 * (x * x))) as f32
}

const GELU_TAIL_NUMERATOR: [f64; 7] = [
    0.018_881_607_962_942_956,
    32.499_120_045_206_07,
    -5.050_664_403_082_981,
    -13.054_462_190_792_812,
    10.199_851_757_291_146,
    -3.193_619_015_267_235_5,
    0.564_189_697_003_177,
];
const GELU_TAIL_DENOMINATOR: [f64; 7] = [
    -45.803_246_776_031,
    44.131_330_661_786_684,
    6.949_154_423_762_687,
    -28.811_982_070_676_56,
    19.078_150_424_964_594,
    -5.660_559_197_050_999,
    1.0,
];

/// `erf(x) ≈ x P(x²) / Q(x²)` on `[0, 4]`, fitted to `erf` over every `f32` there; beyond 4, `erf` rounds to 1 in
/// `f32` and the fit is held at its value at 4 (1 - 1.4e-8, which rounds to 1 too).
const ERF_NUMERATOR: [f64; 7] = [
    1.128_379_169_955_211_7,
    0.185_053_514_951_380_37,
    0.054_369_392_415_137_41,
    0.003_853_090_833_302_927,
    0.000_382_656_042_700_406,
    4.768_405_016_779_276e-6,
    -1.361_890_822_337_841_2e-8,
];
const ERF_DENOMINATOR: [f64; 6] = [
    1.0,
    0.497_332_838_973_196_3,
    0.113_960_609_789_289_2,
    0.015_479_382_526_678_893,
    0.001_312_413_145_569_473_7,
    6.390_792_801_257_931e-5,
];
const ERF_HELD_FROM: f64 = 4.0;

#[inline(always)]
fn erf_wide(x: f64) -> f64 {
    let t = x.abs();
    // A comparison rather than `min`, so that NaN goes on through the fit and comes out NaN.
    let t = if t > ERF_HELD_FROM { ERF_HELD_FROM } else { t };
    let s = t * t;
    (t * polynomial(&ERF_NUMERATOR, s) / polynomial(&ERF_DENOMINATOR, s)).copysign(x)
}

/// `e^r` on `|r| <= ln(2)/2` by its Taylor series to `r^10` (the remainder is below 3e-13 relative).
const EXP_TAYLOR: [f64; 11] = [
    1.0,
    1.0,
    1.0 / 2.0,
    1.0 / 6.0,
    1.0 / 24.0,
    1.0 / 120.0,
    1.0 / 720.0,
    1.0 / 5_040.0,
    1.0 / 40_320.0,
    1.0 / 362_880.0,
    1.0 / 3_628_800.0,
];

/// Inputs beyond these give 0 and infinity in `f32` (`e^-104` and `e^89` already do), and keep `2^n` a normal `f64`.
const EXP_LOWEST: f64 = -150.0;
const EXP_HIGHEST: f64 = 100.0;

/// Adding this rounds an `f64` below 2^51 in magnitude to an integer, which then sits in the low mantissa bits.
const ROUND_TO_INTEGER: f64 = 6_755_399_441_055_744.0; // 1.5 * 2^52

/// `e^x = 2^n e^r` with `n` the integer nearest `x / ln 2` and `r = x - n ln 2`.
#[inline(always)]
fn exp_wide(x: f64) -> f64 {
    // Comparisons keep NaN, which then makes `e^r` NaN.
    let x = if x < EXP_LOWEST { EXP_LOWEST } else { x };
    let x = if x > EXP_HIGHEST { EXP_HIGHEST } else { x };
    let shifted = x * LOG2_E + ROUND_TO_INTEGER;
    let n = shifted - ROUND_TO_INTEGER;
    // |n| <= 217, so `n * LN_2` is off by under 3e-14, and so is `r`.
    let r = x - n * LN_2;
    // `n + 1023` in the exponent field is `2^n`; the bits above it (of `ROUND_TO_INTEGER`) shift out.
    let two_to_n = f64::from_bits(shifted.to_bits().wrapping_add(1023) << 52);
    polynomial(&EXP_TAYLOR, r) * two_to_n
}

/// `c[0] + c[1] x + c[2] x² + ...` by Horner's rule, each step one rounding (an FMA where the loop has it).
#[inline(always)]
fn polynomial<const N: usize>(coefficients: &[f64; N], x: f64) -> f64 {
    coefficients.iter().rev().fold(0.0, |sum, &c| sum.mul_add(x, c))
}

/// `outputs` as NaN: what a part of an element-wise pass gets when its inputs fall short, which no caller hands
/// over, so that every output is written all the same.
pub(crate) fn all_nan<T: Float, O: Slot<T>>(outputs: &mut [O]) {
    outputs.iter_mut().for_each(|output| output.put(T::nan()));
}

/// Whether a loop of `work` runs on 512-bit vectors: heavy work on a CPU with AVX-512 (8 `f64` lanes), where `exp`
/// took 0.70 of its AVX2 time. Light passes stay on AVX2: they wait on memory, and 512-bit vectors made an `add`
/// 1.2x slower.
#[cfg(target_arch = "x86_64")]
fn wide_vectors(work: Work) -> bool {
    matches!(work, Work::Heavy) && std::arch::is_x86_feature_detected!("avx512f") && avx2_and_fma()
}

/// Whether the CPU runs the `avx2` loops, which are compiled with FMA too.
#[cfg(target_arch = "x86_64")]
fn avx2_and_fma() -> bool {
    std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
}

/// `f` of every input into the output of the same index (a shorter side ends it), vectorised.
pub(crate) fn map_slice<T: Copy, O: Slot<T>>(work: Work, inputs: &[T], outputs: &mut [O], f: impl Fn(T) -> T) {
    #[cfg(target_arch = "x86_64")]
    if wide_vectors(work) {
        // SAFETY: the CPU has AVX-512F, AVX2 and FMA, as checked just above.
        return unsafe { avx512::map_slice(inputs, outputs, f) };
    }
    #[cfg(target_arch = "x86_64")]
    if avx2_and_fma() {
        // SAFETY: the CPU has AVX2 and FMA, as checked just above.
        return unsafe { avx2::map_slice(inputs, outputs, f) };
    }
    map_loop(inputs, outputs, f);
}

/// `f` of the inputs of each index into the output of that index (the shortest side ends it), vectorised.
pub(crate) fn zip_slices<T: Copy, O: Slot<T>>(
    work: Work,
    lhs: &[T],
    rhs: &[T],
    outputs: &mut [O],
    f: impl Fn(T, T) -> T,
) {
    #[cfg(target_arch = "x86_64")]
    if wide_vectors(work) {
        // SAFETY: the CPU has AVX-512F, AVX2 and FMA, as checked just above.
        return unsafe { avx512::zip_slices(lhs, rhs, outputs, f) };
    }
    #[cfg(target_arch = "x86_64")]
    if avx2_and_fma() {
        // SAFETY: the CPU has AVX2 and FMA, as checked just above.
        return unsafe { avx2::zip_slices(lhs, rhs, outputs, f) };
    }
    zip_loop(lhs, rhs, outputs, f);
}

/// Every value replaced by `f` of it, vectorised.
pub(crate) fn map_in_place<T: Copy>(work: Work, values: &mut [T], f: impl Fn(T) -> T) {
    #[cfg(target_arch = "x86_64")]
    if wide_vectors(work) {
        // SAFETY: the CPU has AVX-512F, AVX2 and FMA, as checked just above.
        return unsafe { avx512::map_in_place(values, f) };
    }
    #[cfg(target_arch = "x86_64")]
    if avx2_and_fma() {
        // SAFETY: the CPU has AVX2 and FMA, as checked just above.
        return unsafe { avx2::map_in_place(values, f) };
    }
    map_in_place_loop(values, f);
}

/// Every value replaced by `f` of it and the other of the same index (the shortest side ends it), vectorised: an op
/// written over its left operand.
pub(crate) fn zip_in_place<T: Copy>(work: Work, values: &mut [T], others: &[T], f: impl Fn(T, T) -> T) {
    #[cfg(target_arch = "x86_64")]
    if wide_vectors(work) {
        // SAFETY: the CPU has AVX-512F, AVX2 and FMA, as checked just above.
        return unsafe { avx512::zip_in_place(values, others, f) };
    }
    #[cfg(target_arch = "x86_64")]
    if avx2_and_fma() {
        // SAFETY: the CPU has AVX2 and FMA, as checked just above.
        return unsafe { avx2::zip_in_place(values, others, f) };
    }
    zip_in_place_loop(values, others, f);
}

/// `value` where `fills` holds, else the input of the same index, into the output of that index (the shortest side
/// ends it), vectorised: `mask_fill`'s loop.
pub(crate) fn fill_slices<T: Copy, O: Slot<T>>(fills: &[bool], inputs: &[T], value: T, outputs: &mut [O]) {
    #[cfg(target_arch = "x86_64")]
    if avx2_and_fma() {
        // SAFETY: the CPU has AVX2 and FMA, as checked just above.
        return unsafe { avx2::fill_slices(fills, inputs, value, outputs) };
    }
    fill_loop(fills, inputs, value, outputs);
}

#[inline(always)]
fn fill_loop<T: Copy, O: Slot<T>>(fills: &[bool], inputs: &[T], value: T, outputs: &mut [O]) {
    for ((output, &x), &fill) in outputs.iter_mut().zip(inputs).zip(fills) {
        output.put(if fill { value } else { x });
    }
}

#[inline(always)]
fn map_loop<T: Copy, O: Slot<T>>(inputs: &[T], outputs: &mut [O], f: impl Fn(T) -> T) {
    for (output, &x) in outputs.iter_mut().zip(inputs) {
        output.put(f(x));
    }
}

#[inline(always)]
fn zip_loop<T: Copy, O: Slot<T>>(lhs: &[T], rhs: &[T], outputs: &mut [O], f: impl Fn(T, T) -> T) {
    for ((output, &a), &b) in outputs.iter_mut().zip(lhs).zip(rhs) {
        output.put(f(a, b));
    }
}

#[inline(always)]
fn map_in_place_loop<T: Copy>(values: &mut [T], f: impl Fn(T) -> T) {
    for value in values {
        *value = f(*value);
    }
}

#[inline(always)]
fn zip_in_place_loop<T: Copy>(values: &mut [T], others: &[T], f: impl Fn(T, T) -> T) {
    for (value, &other) in values.iter_mut().zip(others) {
        *value = f(*value, other);
    }
}

/// The loops again, compiled for AVX2 and FMA: 4 `f64` lanes where the baseline has 2.
#[cfg(target_arch = "x86_64")]
mod avx2 {
    use super::Slot;

    #[target_feature(enable = "avx2,fma")]
    pub(crate) fn map_slice<T: Copy, O: Slot<T>>(inputs: &[T], outputs: &mut [O], f: impl Fn(T) -> T) {
        super::map_loop(inputs, outputs, f);
    }

    #[target_feature(enable = "avx2,fma")]
    pub(crate) fn zip_slices<T: Copy, O: Slot<T>>(lhs: &[T], rhs: &[T], outputs: &mut [O], f: impl Fn(T, T) -> T) {
        super::zip_loop(lhs, rhs, outputs, f);
    }

    #[target_feature(enable = "avx2,fma")]
    pub(crate) fn map_in_place<T: Copy>(values: &mut [T], f: impl Fn(T) -> T) {
        super::map_in_place_loop(values, f);
    }

    #[target_feature(enable = "avx2,fma")]
    pub(crate) fn zip_in_place<T: Copy>(values: &mut [T], others: &[T], f: impl Fn(T, T) -> T) {
        super::zip_in_place_loop(values, others, f);
    }

    #[target_feature(enable = "avx2,fma")]
    pub(crate) fn fill_slices<T: Copy, O: Slot<T>>(fills: &[bool], inputs: &[T], value: T, outputs: &mut [O]) {
        super::fill_loop(fills, inputs, value, outputs);
    }
}

/// The loops again, compiled for AVX-512 and FMA: 8 `f64` lanes.
#[cfg(target_arch = "x86_64")]
mod avx512 {
    use super::Slot;

    #[target_feature(enable = "avx512f,fma")]
    pub(crate) fn map_slice<T: Copy, O: Slot<T>>(inputs: &[T], outputs: &mut [O], f: impl Fn(T) -> T) {
        super::map_loop(inputs, outputs, f);
    }

    #[target_feature(enable = "avx512f,fma")]
    pub(crate) fn zip_slices<T: Copy, O: Slot<T>>(lhs: &[T], rhs: &[T], outputs: &mut [O], f: impl Fn(T, T) -> T) {
        super::zip_loop(lhs, rhs, outputs, f);
    }

    #[target_feature(enable = "avx512f,fma")]
    pub(crate) fn map_in_place<T: Copy>(values: &mut [T], f: impl Fn(T) -> T) {
        super::map_in_place_loop(values, f);
    }

    #[target_feature(enable = "avx512f,fma")]
    pub(crate) fn zip_in_place<T: Copy>(values: &mut [T], others: &[T], f: impl Fn(T, T) -> T) {
        super::zip_in_place_loop(values, others, f);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every `step`-th `f32` magnitude (by bit pattern) and its negation, within `[low, high]`, and the signed zeros.
    fn sample(low: f32, high: f32, step: u32) -> Vec<f32> {
        let mut values = vec![0.0, -0.0];
        let mut bits = 1;
        while f32::from_bits(bits) <= high.max(-low) {
            let x = f32::from_bits(bits);
            values.extend([x, -x].into_iter().filter(|x| (low..=high).contains(x)));
            bits += step;
        }
        values
    }

    /// How many `f32` ulps `got` is from `exact`, in units of the ulp at `exact`.
    fn ulps(got: f32, exact: f64) -> f64 {
        let exact_f32 = exact as f32;
        let ulp = f64::from((f32::from_bits(exact_f32.abs().to_bits() + 1) - exact_f32.abs()).max(f32::MIN_POSITIVE));
        (f64::from(got) - exact).abs() / ulp
    }

    #[test]
    fn exp_is_the_nearest_f32_within_rare_ties() {
        let (mut worst, mut not_nearest, mut count) = (0.0f64, 0, 0);
        for x in sample(-103.0, 88.7, 499) {
            let exact = f64::from(x).exp();
            let got = f32::exp_of(x);
            worst = worst.max(ulps(got, exact));
            not_nearest += usize::from(got != exact as f32);
            count += 1;
        }
        assert!(worst <= 0.5 + 1e-4, "{worst} ulps");
        assert!(not_nearest * 10_000 < count, "{not_nearest} of {count} not the nearest f32");
        assert_eq!((f32::exp_of(0.0), f32::exp_of(-0.0), f32::exp_of(1.0)), (1.0, 1.0, std::f32::consts::E));
        assert_eq!((f32::exp_of(f32::INFINITY), f32::exp_of(f32::NEG_INFINITY)), (f32::INFINITY, 0.0));
        assert_eq!((f32::exp_of(88.8), f32::exp_of(-104.0), f32::exp_of(-1000.0)), (f32::INFINITY, 0.0, 0.0));
        // Subnormal results round as the exact value does.
        assert_eq!(f32::exp_of(-100.0), (-100.0f64).exp() as f32);
        assert!(f32::exp_of(f32::NAN).is_nan());
    }

    #[test]
    fn erf_is_within_0_55_ulp_and_mostly_the_scalar_erf() {
        let (mut worst, mut not_nearest, mut count) = (0.0f64, 0, 0);
        for x in sample(-6.0, 6.0, 331) {
            let exact = libm::erf(f64::from(x));
            let got = f32::erf_of(x);
            worst = worst.max(ulps(got, exact));
            not_nearest += usize::from(got != math::erf(x));
            count += 1;
        }
        assert!(worst < 0.55, "{worst} ulps");
        assert!(not_nearest * 20 < count, "{not_nearest} of {count} differ from the scalar erf");
        assert_eq!((f32::erf_of(0.0).to_bits(), f32::erf_of(-0.0).to_bits()), (0.0f32.to_bits(), (-0.0f32).to_bits()));
        assert_eq!((f32::erf_of(f32::INFINITY), f32::erf_of(f32::NEG_INFINITY)), (1.0, -1.0));
        assert!(f32::erf_of(f32::NAN).is_nan());
    }

    #[test]
    fn gelu_is_within_0_7_ulp_and_its_slice_form_gives_the_same_bits() {
        let inputs = sample(-20.0, 20.0, 443);
        let mut outputs = vec![0.0; inputs.len()];
        f32::gelu_slice(&inputs, &mut outputs);
        let mut worst = 0.0f64;
        for (&x, &got) in inputs.iter().zip(&outputs) {
            let x64 = f64::from(x);
            let exact = math::gelu(x64);
            worst = worst.max(ulps(got, exact));
            assert_eq!(got.to_bits(), f32::gelu_of(x).to_bits(), "gelu({x}): slice and element differ");
        }
        assert!(worst < 0.7, "{worst} ulps");
        assert_eq!(f32::gelu_of(-9.0), math::gelu(-9.0f32), "the left tail");
        assert_eq!(f32::gelu_of(f32::INFINITY), f32::INFINITY);
        assert!(f32::gelu_of(f32::NAN).is_nan());
    }

    /// Every 7th `f32` of the left tail, where the fit replaces `erfc`, and past it where the GELU is 0; slices of
    /// awkward lengths, so that the gathering's blocks end part-way and some hold no tail input.
    #[test]
    fn gelu_left_tail_is_within_0_51_ulp_and_gathered_in_any_block() {
        let inputs: Vec<f32> = sample(-20.0, -1.0, 7).into_iter().filter(|x| *x < GELU_LEFT_TAIL).collect();
        let mut worst = 0.0f64;
        for &x in &inputs {
            let got = f32::gelu_of(x);
            worst = worst.max(ulps(got, math::gelu(f64::from(x))));
            assert_eq!(got.to_bits() >> 31, 1, "gelu({x}) = {got} is not negative");
        }
        assert!(worst < 0.51, "{worst} ulps");
        for length in [1, 255, 256, 257, 1000] {
            let mixed: Vec<f32> = (0..length).map(|i| inputs[i * 977 % inputs.len()] + (i % 3) as f32).collect();
            let mut outputs = vec![0.0; length];
            f32::gelu_slice(&mixed, &mut outputs);
            for (&x, got) in mixed.iter().zip(outputs) {
                assert_eq!(got.to_bits(), f32::gelu_of(x).to_bits(), "gelu({x}) in a slice of {length}");
            }
        }
        assert!(f32::gelu_of(f32::NEG_INFINITY).is_nan() && math::gelu(f64::NEG_INFINITY).is_nan());
        assert_eq!(f32::gelu_of(-1e30).to_bits(), (-0.0f32).to_bits());
    }

    /// On a CPU with AVX-512, the light loops run on AVX2 and the heavy ones on AVX-512: both widths are checked.
    #[test]
    fn the_vectorised_loops_give_the_bits_of_one_element_at_a_time() {
        let inputs: Vec<f32> = (0..1037).map(|i| (i as f32 - 500.0) * 0.0173).collect();
        for work in [Work::Light, Work::Heavy] {
            let mut outputs = vec![0.0; inputs.len()];
            map_slice(work, &inputs, &mut outputs, f32::erf_of);
            let mut in_place = inputs.clone();
            map_in_place(work, &mut in_place, f32::exp_of);
            let mut zipped = vec![0.0; inputs.len()];
            zip_slices(work, &inputs, &outputs, &mut zipped, |a, b| f32::exp_of(a) * b);
            for (i, &x) in inputs.iter().enumerate() {
                assert_eq!(outputs[i].to_bits(), f32::erf_of(x).to_bits(), "{work:?}");
                assert_eq!(in_place[i].to_bits(), f32::exp_of(x).to_bits(), "{work:?}");
                assert_eq!(zipped[i].to_bits(), (f32::exp_of(x) * f32::erf_of(x)).to_bits(), "{work:?}");
            }
            // Each stops at the shorter side.
            let mut short = [0.0f32; 3];
            map_slice(work, &inputs, &mut short, f32::exp_of);
            assert_eq!(short[2], f32::exp_of(inputs[2]));
        }
    }
}
