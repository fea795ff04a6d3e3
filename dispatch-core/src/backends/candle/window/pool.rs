//! Pooling: the largest value of each window, where it is, and adaptive means. A CPU tensor of `f32` or `f64`
//! takes the ndarray backend's max pool (`kernels::window`, one pass over each window). On other devices the
//! windows are the columns of `unfold` with `-inf` in the padding; candle's own pooling kernels take neither padding
//! nor dilation, and skip a NaN that this op's contract says wins.

use candle_core::backend::BackendStorage;
use candle_core::{CpuStorage, CustomOp1, DType as CandleDType, Layout, Tensor};
use num_traits::Float;

use super::columns::{tap_sources, unfold};
use crate::backend::window::{Window2d, adaptive_pool2d_geometry, dims4, pool2d_geometry, product};
use crate::backends::candle::elementwise::{Extreme, contiguous_slice, runs_cpu_kernels};
use crate::backends::candle::error::{OrBackend, candle_dtype, float_dtype};
use crate::backends::candle::indices::{constant, counting};
use crate::backends::candle::layout::shape_of;
use crate::backends::candle::matmul::matmul;
use crate::backends::candle::memory::{check_output, check_output_like, filled};
use crate::backends::candle::reduce::extreme_dim;
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::kernels::window;
use crate::shape::Shape;

/// The windows of `input` as `[n, c, kh * kw, oh * ow]` for the pool's `output` `[n, c, oh, ow]`, `-inf` in the
/// padding.
fn windows(op: &'static str, input: &Tensor, window: Window2d, output: [usize; 4]) -> Result<Tensor> {
    let [n, c, oh, ow] = output;
    let taps = product(op, "the window's taps", &window.kernel)?;
    let positions = product(op, "the output positions", &[oh, ow])?;
    let columns = unfold(op, input, window, f64::NEG_INFINITY)?;
    columns.reshape((n, c, taps, positions)).or_backend(op)
}

/// The largest tap of each window, NaN where a tap is NaN, `-inf` for a window of padding alone.
pub(in crate::backends::candle) fn max_pool2d(input: &Tensor, window: Window2d) -> Result<Tensor> {
    let op = "max_pool2d";
    float_dtype(op, input)?;
    let output = pool2d_geometry(op, &shape_of(input), &window)?;
    if let Some(maxima) = on_cpu(op, input, window, output, Picked::Maxima)? {
        return Ok(maxima);
    }
    let windows = windows(op, input, window, output)?;
    if windows.elem_count() == 0 {
        return filled(op, &Shape::new(output), 0.0, float_dtype(op, input)?, input.device());
    }
    extreme_dim(op, Extreme::Max, &windows, 2)?.reshape(&output).or_backend(op)
}

/// Checks that every window covers some of the input, on each side: the windows of padding alone have no input
/// to point at (PyTorch's pooling padding of at most half the kernel allows them only with dilation).
fn check_windows_cover_input(op: &'static str, window: &Window2d, input: [usize; 2], output: [usize; 2]) -> Result<()> {
    for side in 0..2 {
        let (stride, dilation, padding, kernel) =
            (window.stride[side], window.dilation[side], window.padding[side], window.kernel[side]);
        // The first tap of window `y` at or past the padding before the input, and whether it reads the input. No
        // overflow: every cell is below the padded input's size, which fits.
        let covers = |y: usize| {
            let start = y * stride;
            let tap = padding.saturating_sub(start).div_ceil(dilation);
            tap < kernel && start + tap * dilation - padding < input[side]
        };
        if !(0..output[side]).all(covers) {
            return Err(Error::invalid_value(
                op,
                "padding",
                window.padding,
                "small enough that every window covers some input",
            ));
        }
    }
    Ok(())
}

/// For each window, the flat `row * width + column` of its first largest tap in the input (a NaN tap wins, the
/// first one; padding never does): the first tap equal to the window's maximum, or NaN where that is NaN.
pub(in crate::backends::candle) fn max_pool2d_indices(input: &Tensor, window: Window2d) -> Result<Tensor> {
    let op = "max_pool2d_indices";
    float_dtype(op, input)?;
    let [_, _, h, w] = dims4(op, "an input", &shape_of(input))?;
    let output = pool2d_geometry(op, &shape_of(input), &window)?;
    let [n, c, oh, ow] = output;
    if runs_cpu_kernels(input) && output.iter().all(|&dim| dim > 0) {
        check_windows_cover_input(op, &window, [h, w], [oh, ow])?;
        if let Some(indices) = on_cpu(op, input, window, output, Picked::Indices)? {
            return Ok(indices);
        }
    }
    let windows = windows(op, input, window, output)?;
    if windows.elem_count() == 0 {
        return Tensor::zeros(&output, CandleDType::I64, input.device()).or_backend(op);
    }
    // Only where there are windows, as the host default finds it.
    check_windows_cover_input(op, &window, [h, w], [oh, ow])?;
    check_output(op, input.device(), windows.elem_count(), CandleDType::I64)?;
    let [_, _, taps, positions] = dims4(op, "the windows", &shape_of(&windows))?;
    let maxima = extreme_dim(op, Extreme::Max, &windows, 2)?;
    let sources = tap_sources(op, &window, [h, w], [oh, ow], input.device())?;
    let (tap_numbers, position_numbers) =
        (counting(op, taps, input.device())?, counting(op, positions, input.device())?);
    let first = || {
        let device = input.device();
        let in_input = sources.reshape((taps, positions))?.broadcast_lt(&constant((h * w) as i64, device)?)?;
        let nan_maximum = windows.ne(&windows)?.broadcast_mul(&maxima.ne(&maxima)?)?;
        let hits = windows.broadcast_eq(&maxima)?.maximum(&nan_maximum)?.broadcast_mul(&in_input)?;
        let tap_numbers = tap_numbers.reshape((1, 1, taps, 1))?.broadcast_as(windows.dims())?;
        let none = constant(taps as i64, device)?.broadcast_as(windows.dims())?;
        let first_tap = hits.where_cond(&tap_numbers, &none)?.min_keepdim(2)?;
        // The entry of `sources` at (first tap, position): every window has a hit, as it covers some input.
        let entries = first_tap
            .broadcast_mul(&constant(positions as i64, device)?)?
            .broadcast_add(&position_numbers.reshape((1, 1, 1, positions))?)?;
        sources.index_select(&entries.flatten_all()?, 0)?.reshape((n, c, oh, ow))
    };
    first().or_backend(op)
}

/// What a CPU max pool gives for each window.
#[derive(Clone, Copy, Debug)]
enum Picked {
    Maxima,
    Indices,
}

/// The max pool of a CPU tensor of `f32` or `f64` into `output` (the pool's geometry, which the caller found) by
/// `kernels::window`, one pass over each window, as the ndarray backend computes it; `None` for other tensors. The
/// caller has checked that every window covers some input when it asks for the indices (the kernel's own error would
/// reach the caller as candle's).
fn on_cpu(
    op: &'static str,
    input: &Tensor,
    window: Window2d,
    output: [usize; 4],
    picked: Picked,
) -> Result<Option<Tensor>> {
    if !runs_cpu_kernels(input) {
        return Ok(None);
    }
    let planes = dims4(op, "an input", &shape_of(input))?;
    let dtype = match picked {
        Picked::Maxima => input.dtype(),
        Picked::Indices => CandleDType::I64,
    };
    check_output(op, input.device(), product(op, "the output", &output)?, dtype)?;
    check_output_like(op, input)?;
    let input = input.contiguous().or_backend(op)?;
    input.apply_op1_no_bwd(&CpuMaxPool { op, window, planes, output, picked }).map(Some).or_backend(op)
}

struct CpuMaxPool {
    op: &'static str,
    window: Window2d,
    planes: [usize; 4],
    output: [usize; 4],
    picked: Picked,
}

impl CpuMaxPool {
    fn storage<E: Float + Send + Sync>(&self, values: &[E], wrap: fn(Vec<E>) -> CpuStorage) -> Result<CpuStorage> {
        let (op, window, planes, output) = (self.op, &self.window, self.planes, self.output);
        Ok(match self.picked {
            Picked::Maxima => wrap(window::max_pool2d(op, values, planes, window, output)?),
            Picked::Indices => CpuStorage::I64(window::max_pool2d_indices(op, values, planes, window, output)?),
        })
    }
}

impl CustomOp1 for CpuMaxPool {
    fn name(&self) -> &'static str {
        self.op
    }

    fn cpu_fwd(&self, storage: &CpuStorage, layout: &Layout) -> candle_core::Result<(CpuStorage, candle_core::Shape)> {
        let outputs = match storage {
            CpuStorage::F32(values) => self.storage(contiguous_slice(self.op, (values, layout))?, CpuStorage::F32),
            CpuStorage::F64(values) => self.storage(contiguous_slice(self.op, (values, layout))?, CpuStorage::F64),
            other => return Err(candle_core::Error::UnsupportedDTypeForOp(other.dtype(), self.op)),
        };
        Ok((outputs.map_err(candle_core::Error::wrap)?, self.output.to_vec().into()))
    }
}

/// The `[output, input]` matrix averaging input cells `floor(i * input / output)..ceil((i + 1) * input / output)`
/// into output cell `i`, built on the device in `dtype` (each weight `1 / count` divided in `F64` for `F64`, in
/// `F32` for the others, then rounded to `dtype`).
fn averaging_matrix(
    op: &'static str,
    output: usize,
    input: usize,
    dtype: DType,
    device: &candle_core::Device,
) -> Result<Tensor> {
    // Every bound below is at most `output * input`, the matrix's size.
    product(op, "an averaging matrix", &[output, input])?;
    check_output(op, device, output.saturating_mul(input), CandleDType::F64)?;
    let (cells, columns) = (counting(op, output, device)?, counting(op, input, device)?);
    let matrix = || {
        let (size, count) = (constant(input as i64, device)?, constant(output as i64, device)?);
        let cells = cells.reshape((output, 1))?;
        let start = cells.broadcast_mul(&size)?.broadcast_div(&count)?;
        let ceiling = cells.broadcast_add(&constant(1i64, device)?)?.broadcast_mul(&size)?;
        let end = ceiling.broadcast_add(&constant(output as i64 - 1, device)?)?.broadcast_div(&count)?;
        let columns = columns.reshape((1, input))?;
        let inside = columns.broadcast_ge(&start)?.broadcast_mul(&columns.broadcast_lt(&end)?)?;
        let exact = if dtype == DType::F64 { CandleDType::F64 } else { CandleDType::F32 };
        let weights = inside.to_dtype(exact)?.broadcast_div(&end.sub(&start)?.to_dtype(exact)?)?;
        weights.to_dtype(candle_dtype(dtype))
    };
    matrix().or_backend(op)
}

/// `rows · x · columnsᵀ` for each image and channel, the two averaging matrices applied with candle's matmul. As
/// PyTorch: the batch and the channels may be empty, the input's plane may not; any output size is accepted.
pub(in crate::backends::candle) fn adaptive_avg_pool2d(input: &Tensor, [oh, ow]: [usize; 2]) -> Result<Tensor> {
    let op = "adaptive_avg_pool2d";
    let dtype = float_dtype(op, input)?;
    let [n, c, h, w] = adaptive_pool2d_geometry(op, &shape_of(input), [oh, ow])?;
    let output = Shape::new([n, c, oh, ow]);
    if output.num_elements() == 0 {
        return filled(op, &output, 0.0, dtype, input.device());
    }
    let rows = averaging_matrix(op, oh, h, dtype, input.device())?;
    let columns = averaging_matrix(op, ow, w, dtype, input.device())?;
    let planes = product(op, "the planes", &[n, c])?;
    let (rows, columns, input) = (
        rows.reshape((1, oh, h)).or_backend(op)?,
        columns.t().and_then(|columns| columns.reshape((1, w, ow))).or_backend(op)?,
        input.reshape((planes, h, w)).or_backend(op)?,
    );
    matmul(&matmul(&rows, &input)?, &columns)?.reshape(output.dims()).or_backend(op)
}
