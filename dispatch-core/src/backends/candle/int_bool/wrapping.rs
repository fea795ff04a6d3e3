//! Wrapping `i64` arithmetic from candle's kernels, which do not wrap: its CPU kernels add and multiply with Rust's
//! `+` and `*`, which panic on overflow wherever overflow checks are on (every debug build), and signed overflow is
//! undefined in its CUDA kernels. So each operand is split into 32-bit halves, `v = high * 2^32 + low` with `low`
//! in `0..2^32` and `high` in `-2^31..2^31`, and every intermediate below stays far inside `i64`; the halves are
//! joined back with the high half reduced modulo `2^32`, which is the wrap.

use candle_core::{DType, Device, Tensor};

use crate::backends::candle::indices::constant;

const HALF: i64 = 1 << 32;
const QUARTER: i64 = 1 << 16;

/// `v` as `(high, low)` halves.
struct Halves {
    high: Tensor,
    low: Tensor,
}

/// `floor(x / divisor)` and `x - floor(x / divisor) * divisor` (in `0..divisor`), for a positive `divisor`: candle's
/// integer division rounds toward zero, so a negative remainder moves one divisor up.
fn floor_div_rem(x: &Tensor, divisor: i64) -> candle_core::Result<(Tensor, Tensor)> {
    let device = x.device();
    let divisor = constant(divisor, device)?;
    let quotient = x.broadcast_div(&divisor)?;
    let remainder = x.broadcast_sub(&quotient.broadcast_mul(&divisor)?)?;
    let negative = remainder.broadcast_lt(&constant(0i64, device)?)?.to_dtype(candle_core::DType::I64)?;
    Ok((quotient.sub(&negative)?, remainder.add(&negative.broadcast_mul(&divisor)?)?))
}

fn split(v: &Tensor) -> candle_core::Result<Halves> {
    let (high, low) = floor_div_rem(v, HALF)?;
    Ok(Halves { high, low })
}

/// `high * 2^32 + low` modulo `2^64`, for `low` in `0..2^32` and any `|high| < 2^62`.
fn join(high: &Tensor, low: &Tensor) -> candle_core::Result<Tensor> {
    let device = high.device();
    let (_, shifted) = floor_div_rem(&high.broadcast_add(&constant(HALF / 2, device)?)?, HALF)?;
    let high = shifted.broadcast_sub(&constant(HALF / 2, device)?)?;
    // At least -2^63 and at most 2^63 - 2^32 + (2^32 - 1): inside `i64`.
    high.broadcast_mul(&constant(HALF, device)?)?.broadcast_add(low)
}

/// `lhs + rhs` modulo `2^64`, broadcasting.
pub(super) fn add(lhs: &Tensor, rhs: &Tensor) -> candle_core::Result<Tensor> {
    let (lhs, rhs) = (split(lhs)?, split(rhs)?);
    let (carry, low) = floor_div_rem(&lhs.low.broadcast_add(&rhs.low)?, HALF)?;
    join(&lhs.high.broadcast_add(&rhs.high)?.add(&carry)?, &low)
}

/// `lhs - rhs` modulo `2^64`, broadcasting.
pub(super) fn sub(lhs: &Tensor, rhs: &Tensor) -> candle_core::Result<Tensor> {
    let (lhs, rhs) = (split(lhs)?, split(rhs)?);
    let (borrow, low) = floor_div_rem(&lhs.low.broadcast_sub(&rhs.low)?, HALF)?;
    join(&lhs.high.broadcast_sub(&rhs.high)?.add(&borrow)?, &low)
}

/// `lhs * rhs` modulo `2^64`, broadcasting: `high_l * low_r + low_l * high_r` counts modulo `2^32` only, and
/// `low_l * low_r` (up to 64 bits) is multiplied in 16-bit quarters.
pub(super) fn mul(lhs: &Tensor, rhs: &Tensor) -> candle_core::Result<Tensor> {
    let (lhs, rhs) = (split(lhs)?, split(rhs)?);
    let ((l1, l0), (r1, r0)) = (floor_div_rem(&lhs.low, QUARTER)?, floor_div_rem(&rhs.low, QUARTER)?);
    // Each below 2^32, their sum `middle` below 2^33.
    let (upper, lower) = (l1.broadcast_mul(&r1)?, l0.broadcast_mul(&r0)?);
    let middle = l1.broadcast_mul(&r0)?.add(&l0.broadcast_mul(&r1)?)?;
    let (middle_high, middle_low) = floor_div_rem(&middle, QUARTER)?;
    let device = middle.device();
    let (carry, low) = floor_div_rem(&middle_low.broadcast_mul(&constant(QUARTER, device)?)?.add(&lower)?, HALF)?;
    // Each product below 2^63 in magnitude; only its low half counts.
    let (_, cross_left) = floor_div_rem(&lhs.high.broadcast_mul(&rhs.low)?, HALF)?;
    let (_, cross_right) = floor_div_rem(&lhs.low.broadcast_mul(&rhs.high)?, HALF)?;
    let high = upper.add(&middle_high)?.add(&carry)?.add(&cross_left)?.add(&cross_right)?;
    join(&high, &low)
}

/// The most elements one sum of halves takes: `2^31` low halves (each below `2^32`) sum below `2^63`.
const SUMMED_AT_ONCE: usize = 1 << 31;

/// The sum of every element of `values` modulo `2^64`, as a one-element tensor; longer tensors are summed in parts
/// of [`SUMMED_AT_ONCE`] whose sums are summed again.
pub(super) fn sum(values: &Tensor, device: &Device) -> candle_core::Result<Tensor> {
    if values.elem_count() == 0 {
        // Before any view or kernel: candle's CUDA kernels refuse a launch over no elements.
        return Tensor::zeros(1, DType::I64, device);
    }
    let flat = values.flatten_all()?;
    let len = flat.elem_count();
    if len > SUMMED_AT_ONCE {
        let parts = (0..len)
            .step_by(SUMMED_AT_ONCE)
            .map(|start| sum(&flat.narrow(0, start, SUMMED_AT_ONCE.min(len - start))?, device))
            .collect::<candle_core::Result<Vec<_>>>()?;
        return sum(&Tensor::cat(&parts, 0)?, device);
    }
    let halves = split(&flat)?;
    let (carry, low) = floor_div_rem(&halves.low.sum_keepdim(0)?, HALF)?;
    join(&halves.high.sum_keepdim(0)?.add(&carry)?, &low)
}

#[cfg(test)]
mod tests {
    use crate::backend::Backend;
    use crate::backends::{Candle, CandleDevice};
    use crate::shape::Shape;

    /// Values at every boundary of the halves and of `i64`.
    const EDGES: [i64; 14] = [
        i64::MIN,
        i64::MIN + 1,
        -(1 << 32) - 1,
        -(1 << 32),
        -(1 << 31),
        -65537,
        -1,
        0,
        1,
        65535,
        (1 << 32) - 1,
        1 << 32,
        0x7fff_ffff_0000_0001,
        i64::MAX,
    ];

    fn ints(values: &[i64], dims: &[usize]) -> candle_core::Tensor {
        Candle::int_from_vec(values.to_vec(), Shape::new(dims), &CandleDevice::cpu()).unwrap()
    }

    #[test]
    fn every_pair_of_edges_wraps_as_rust_does() {
        let n = EDGES.len();
        let (column, row) = (ints(&EDGES, &[n, 1]), ints(&EDGES, &[n]));
        let pairs = || EDGES.iter().flat_map(|&a| EDGES.iter().map(move |&b| (a, b)));
        let wrapped: [fn(i64, i64) -> i64; 3] = [i64::wrapping_add, i64::wrapping_sub, i64::wrapping_mul];
        let computed = [Candle::int_add(&column, &row), Candle::int_sub(&column, &row), Candle::int_mul(&column, &row)];
        for (wrapped, computed) in wrapped.into_iter().zip(computed) {
            let expected: Vec<i64> = pairs().map(|(a, b)| wrapped(a, b)).collect();
            assert_eq!(Candle::int_to_vec(&computed.unwrap()).unwrap(), expected);
        }
    }

    #[test]
    fn sums_wrap() {
        let values = ints(&EDGES, &[2, 7]);
        let expected = EDGES.iter().fold(0i64, |sum, &value| sum.wrapping_add(value));
        assert_eq!(Candle::int_to_vec(&Candle::int_sum(&values).unwrap()).unwrap(), [expected]);
        let scaled = Candle::int_mul_scalar(&values, i64::MAX).unwrap();
        let expected: Vec<i64> = EDGES.iter().map(|value| value.wrapping_mul(i64::MAX)).collect();
        assert_eq!(Candle::int_to_vec(&scaled).unwrap(), expected);
    }
}
