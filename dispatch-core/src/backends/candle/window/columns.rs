//! im2col and col2im on the device. `unfold` picks every tap of every window with one `index_select` from the
//! flattened planes, extended by a column holding the padding value; `fold2d` picks, for every output cell, the
//! column entry of each tap that reads it (a column of zeros for a tap that reads none) and sums them, tap by tap.
//! The indices come from the window's geometry, counted on the device.

use candle_core::{DType as CandleDType, Device, Tensor};

use crate::backend::window::{Window2d, fold2d_geometry, product, unfold2d_geometry};
use crate::backends::candle::error::{OrBackend, dtype_of, float_dtype};
use crate::backends::candle::indices::{constant, counting};
use crate::backends::candle::layout::shape_of;
use crate::backends::candle::memory::{check_output, filled};
use crate::error::{Error, Result};
use crate::shape::Shape;

/// `offset, offset + step, ...`, `count` of them, as an `I64` tensor of shape `dims` (`count` elements). Every
/// caller's values and partial products lie within a plane or a tensor that fits in memory, so in `i64`.
fn steps(op: &'static str, count: usize, step: usize, offset: i64, dims: &[usize], device: &Device) -> Result<Tensor> {
    let counted = counting(op, count, device)?;
    let scaled = || {
        let scaled = counted.broadcast_mul(&constant(step as i64, device)?)?;
        scaled.broadcast_add(&constant(offset, device)?)?.reshape(dims)
    };
    scaled().or_backend(op)
}

/// `Err` unless every index the window ops compute over planes of `[height, width]` padded by `padding`, and into
/// `columns` column entries, fits in `i64`.
fn check_index_range(op: &'static str, [height, width]: [usize; 2], window: &Window2d, columns: usize) -> Result<()> {
    let padded = |side: usize, size: usize| size as u128 + 2 * window.padding[side] as u128;
    let largest = (padded(0, height) * padded(1, width)).max(columns as u128 + 1);
    if largest > i64::MAX as u128 {
        return Err(Error::SizeOverflow { op, what: "an index into a padded plane" });
    }
    Ok(())
}

/// For each tap `(i, j)` and output position `(y, x)`, in that order, the flat position in an `[h, w]` plane of
/// the cell it reads, or `h * w` (the extra column) for a tap in the padding: `[kh * kw * oh * ow]`.
pub(super) fn tap_sources(
    op: &'static str,
    window: &Window2d,
    [h, w]: [usize; 2],
    [oh, ow]: [usize; 2],
    device: &Device,
) -> Result<Tensor> {
    let ([kh, kw], [sh, sw], [dh, dw]) = (window.kernel, window.stride, window.dilation);
    let [ph, pw] = window.padding.map(|padding| padding as i64);
    check_index_range(op, [h, w], window, 0)?;
    let rows = steps(op, oh, sh, -ph, &[1, 1, oh, 1], device)?;
    let row_taps = steps(op, kh, dh, 0, &[kh, 1, 1, 1], device)?;
    let columns = steps(op, ow, sw, -pw, &[1, 1, 1, ow], device)?;
    let column_taps = steps(op, kw, dw, 0, &[1, kw, 1, 1], device)?;
    let sources = || {
        let inside = |cells: &Tensor, len: usize| -> candle_core::Result<Tensor> {
            let above = cells.broadcast_ge(&constant(0i64, device)?)?;
            above.mul(&cells.broadcast_lt(&constant(len as i64, device)?)?)
        };
        let (rows, columns) = (rows.broadcast_add(&row_taps)?, columns.broadcast_add(&column_taps)?);
        let dims = [kh, kw, oh, ow];
        let in_plane = inside(&rows, h)?.broadcast_mul(&inside(&columns, w)?)?.broadcast_as(&dims)?;
        let flat = rows.broadcast_mul(&constant(w as i64, device)?)?.broadcast_add(&columns)?.broadcast_as(&dims)?;
        let padding = constant((h * w) as i64, device)?.broadcast_as(&dims)?;
        in_plane.where_cond(&flat, &padding)?.flatten_all()
    };
    sources().or_backend(op)
}

/// `[n, c, h, w]` to `[n, c * kh * kw, oh * ow]`: row `c * kh * kw + i * kw + j` holds tap `(i, j)` of channel `c`
/// at every output position, taps in the padding `pad_value` (rounded to the tensor's dtype). `op` names the
/// errors.
pub(in crate::backends::candle) fn unfold(
    op: &'static str,
    tensor: &Tensor,
    window: Window2d,
    pad_value: f64,
) -> Result<Tensor> {
    let dtype = float_dtype(op, tensor)?;
    let ([n, c, h, w], positions, output) = unfold2d_geometry(&shape_of(tensor), &window)?;
    let output = Shape::new(output);
    if output.num_elements() == 0 {
        return filled(op, &output, 0.0, dtype, tensor.device());
    }
    let (planes, plane) = (product(op, "the planes", &[n, c])?, product(op, "a plane", &[h, w])?);
    let taps = product(op, "the taps", &[window.kernel[0], window.kernel[1], positions[0], positions[1]])?;
    check_output(op, tensor.device(), taps, CandleDType::I64)?;
    check_output(op, tensor.device(), planes.saturating_mul(plane.saturating_add(1)), tensor.dtype())?;
    check_output(op, tensor.device(), output.num_elements(), tensor.dtype())?;
    let sources = tap_sources(op, &window, [h, w], positions, tensor.device())?;
    let padding = filled(op, &Shape::new([planes, 1]), pad_value, dtype, tensor.device())?;
    let picked = || {
        let extended = Tensor::cat(&[&tensor.reshape((planes, plane))?, &padding], 1)?;
        extended.index_select(&sources, 1)?.reshape(output.dims())
    };
    picked().or_backend(op)
}

/// One side (rows or columns) of the window over the output of `fold2d`.
struct Side {
    /// The output's cells along this side.
    cells: usize,
    padding: usize,
    taps: usize,
    dilation: usize,
    stride: usize,
    /// The window's positions along this side.
    positions: usize,
}

/// For every cell and tap of `side`, `[cells, taps]`: whether a position's tap reads the cell (the cell `cell +
/// padding - tap * dilation` of the padded input is a multiple of the stride, below `positions * stride`), and the
/// part of the column entry's index that this side gives, `tap * tap_stride + position * position_stride`.
fn readers(
    op: &'static str,
    side: Side,
    [tap_stride, position_stride]: [usize; 2],
    device: &Device,
) -> Result<(Tensor, Tensor)> {
    let Side { cells, padding, taps, dilation, stride, positions } = side;
    let offsets = steps(op, cells, 1, padding as i64, &[cells, 1], device)?;
    let reach = steps(op, taps, dilation, 0, &[1, taps], device)?;
    let tap_parts = steps(op, taps, tap_stride, 0, &[1, taps], device)?;
    let found = || {
        let padded = offsets.broadcast_sub(&reach)?;
        let stride = constant(stride as i64, device)?;
        let position = padded.broadcast_div(&stride)?;
        let remainder = padded.broadcast_sub(&position.broadcast_mul(&stride)?)?;
        let on_stride = remainder.broadcast_eq(&constant(0i64, device)?)?;
        let at_a_position = padded
            .broadcast_ge(&constant(0i64, device)?)?
            .mul(&position.broadcast_lt(&constant(positions as i64, device)?)?)?;
        let index = position.broadcast_mul(&constant(position_stride as i64, device)?)?.broadcast_add(&tap_parts)?;
        Ok((at_a_position.mul(&on_stride)?, index))
    };
    found().or_backend(op)
}

/// For each output cell `(r, col)` and tap `(i, j)`, in that order, the column entry that holds what the tap read
/// there, or `kh * kw * oh * ow` (the extra zero column) where no position's tap reads the cell:
/// `[height * width * kh * kw]`.
fn cell_sources(
    op: &'static str,
    window: &Window2d,
    [h, w]: [usize; 2],
    [oh, ow]: [usize; 2],
    device: &Device,
) -> Result<Tensor> {
    let Window2d { kernel: [kh, kw], stride, padding, dilation } = *window;
    let entries = product(op, "the column entries", &[kh, kw, oh, ow])?;
    check_index_range(op, [h, w], window, entries)?;
    let rows =
        Side { cells: h, padding: padding[0], taps: kh, dilation: dilation[0], stride: stride[0], positions: oh };
    let columns =
        Side { cells: w, padding: padding[1], taps: kw, dilation: dilation[1], stride: stride[1], positions: ow };
    // Below `entries`, which fits in `i64`.
    let (row_found, row_index) = readers(op, rows, [kw * oh * ow, ow], device)?;
    let (column_found, column_index) = readers(op, columns, [oh * ow, 1], device)?;
    let sources = || {
        let dims = [h, w, kh, kw];
        let (row_found, row_index) = (row_found.reshape((h, 1, kh, 1))?, row_index.reshape((h, 1, kh, 1))?);
        let (column_found, column_index) = (column_found.reshape((1, w, 1, kw))?, column_index.reshape((1, w, 1, kw))?);
        let found = row_found.broadcast_mul(&column_found)?.broadcast_as(&dims)?;
        let index = row_index.broadcast_add(&column_index)?.broadcast_as(&dims)?;
        let none = constant(entries as i64, device)?.broadcast_as(&dims)?;
        found.where_cond(&index, &none)?.flatten_all()
    };
    sources().or_backend(op)
}

/// The adjoint of `unfold`: `[n, c * kh * kw, oh * ow]` back to `[n, c, height, width]`, each cell the sum, tap by
/// tap in order, of the entries whose tap read it.
pub(in crate::backends::candle) fn fold2d(
    tensor: &Tensor,
    height: usize,
    width: usize,
    window: Window2d,
) -> Result<Tensor> {
    let op = "fold2d";
    let dtype = float_dtype(op, tensor)?;
    let ([n, c, _, _], positions) = fold2d_geometry(&shape_of(tensor), [height, width], &window)?;
    let output = Shape::new([n, c, height, width]);
    if output.num_elements() == 0 {
        return filled(op, &output, 0.0, dtype, tensor.device());
    }
    let [kh, kw] = window.kernel;
    let (planes, cells) = (product(op, "the planes", &[n, c])?, product(op, "a plane", &[height, width])?);
    let entries = product(op, "the column entries", &[kh, kw, positions[0], positions[1]])?;
    let (planes_cells, gathered) =
        (product(op, "the output", &[planes, cells])?, product(op, "the gathered taps", &[planes, cells, kh, kw])?);
    check_output(op, tensor.device(), product(op, "the cells' taps", &[cells, kh, kw])?, CandleDType::I64)?;
    check_output(op, tensor.device(), planes.saturating_mul(entries.saturating_add(1)), tensor.dtype())?;
    check_output(op, tensor.device(), gathered, tensor.dtype())?;
    let sources = cell_sources(op, &window, [height, width], positions, tensor.device())?;
    let zeros = filled(op, &Shape::new([planes, 1]), 0.0, dtype_of(tensor), tensor.device())?;
    let summed = || {
        let extended = Tensor::cat(&[&tensor.reshape((planes, entries))?, &zeros], 1)?;
        let taps = extended.index_select(&sources, 1)?.reshape((planes_cells, kh * kw))?;
        taps.sum_keepdim(1)?.reshape(output.dims())
    };
    summed().or_backend(op)
}
