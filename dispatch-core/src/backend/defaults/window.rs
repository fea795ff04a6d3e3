//! Convolution and pooling: one primitive pair on the host, `unfold2d` (im2col) and its adjoint `fold2d`, and every
//! module op composed from them and the backend's own matmul, reshape and reductions. Composed through the backend's
//! ops, they are differentiable wherever those are: `Autodiff` needs backward rules for the two primitives only.
//! What each op accepts and the sizes it computes are in `backend::window`.

mod pool;

pub use pool::{adaptive_avg_pool2d, avg_pool2d, max_pool2d, max_pool2d_indices};

use crate::backend::Backend;
use crate::backend::defaults::host_values::{HostFloat, in_host_float, same_dtype};
use crate::backend::window::{
    Conv1dOptions, Conv2dOptions, Window2d, conv_transpose2d_geometry, conv2d_geometry, conv2d_weight_geometry, dims3,
    dims4, fold2d_geometry, product, unfold2d_geometry,
};
use crate::error::{Error, RankRule, Result};
use crate::memory;
use crate::shape::Shape;

/// On the host: `[n, c, h, w]` to `[n, c * kh * kw, oh * ow]`, row `c * kh * kw + i * kw + j` holding tap `(i, j)`
/// of channel `c` at every output position; taps in the padding read `pad_value`. In `f32` for an `F32` tensor,
/// else in `f64`.
pub fn unfold2d<B: Backend>(tensor: &B::FloatTensor, window: Window2d, pad_value: f64) -> Result<B::FloatTensor> {
    in_host_float!(tensor, |Element| unfold2d_in::<B, Element>(tensor, window, pad_value))
}

fn unfold2d_in<B: Backend, T: HostFloat>(
    tensor: &B::FloatTensor,
    window: Window2d,
    pad: f64,
) -> Result<B::FloatTensor> {
    let op = "unfold2d";
    let ([_, _, h, w], [oh, ow], output_dims) = unfold2d_geometry(&B::shape(tensor), &window)?;
    let [kh, kw] = window.kernel;
    let output_shape = Shape::new(output_dims);
    let (values, pad) = (T::read::<B>(tensor)?, T::of_f64(pad));
    let mut output = memory::try_vec(op, output_shape.num_elements())?;
    // Not empty: `check_planes` refused empty planes.
    for plane in values.chunks_exact(product(op, "a plane", &[h, w])?) {
        for i in 0..kh {
            for j in 0..kw {
                let (rows, columns) = (window.outputs_in_input(0, i, h, oh), window.outputs_in_input(1, j, w, ow));
                for y in 0..oh {
                    if columns.is_empty() || !rows.contains(&y) {
                        output.extend(std::iter::repeat_n(pad, ow));
                        continue;
                    }
                    // The taps of one output row in one input row: padding, a strided run of the row, padding.
                    let (row, first) = (window.cell(0, y, i), window.cell(1, columns.start, j));
                    output.extend(std::iter::repeat_n(pad, columns.start));
                    output.extend(plane[row * w + first..].iter().step_by(window.stride[1]).take(columns.len()));
                    output.extend(std::iter::repeat_n(pad, ow - columns.end));
                }
            }
        }
    }
    T::write::<B>(output, output_shape, tensor)
}

/// On the host, the adjoint of `unfold2d`: `[n, c * kh * kw, oh * ow]` back to `[n, c, height, width]`, adding
/// up every tap that reads the same input (padding taps are dropped). In `f32` for an `F32` tensor, else in `f64`.
pub fn fold2d<B: Backend>(
    tensor: &B::FloatTensor,
    height: usize,
    width: usize,
    window: Window2d,
) -> Result<B::FloatTensor> {
    in_host_float!(tensor, |Element| fold2d_in::<B, Element>(tensor, [height, width], window))
}

fn fold2d_in<B: Backend, T: HostFloat>(
    tensor: &B::FloatTensor,
    [height, width]: [usize; 2],
    window: Window2d,
) -> Result<B::FloatTensor> {
    let op = "fold2d";
    let (output_dims, [oh, ow]) = fold2d_geometry(&B::shape(tensor), [height, width], &window)?;
    let [kh, kw] = window.kernel;
    let (output_shape, columns) = (Shape::new(output_dims), product(op, "the positions", &[oh, ow])?);
    let values = T::read::<B>(tensor)?;
    let mut output = memory::try_filled(op, output_shape.num_elements(), T::default())?;
    let (plane, window_rows) = (product(op, "a plane", &[height, width])?, product(op, "rows", &[kh, kw, columns])?);
    // One plane of the output per channel of each image, from that channel's `kh * kw` rows of columns.
    for (plane, rows) in output.chunks_exact_mut(plane).zip(values.chunks_exact(window_rows)) {
        for (tap_index, row) in rows.chunks_exact(columns).enumerate() {
            let (i, j) = (tap_index / kw, tap_index % kw);
            let across = window.outputs_in_input(1, j, width, ow);
            if across.is_empty() {
                continue;
            }
            for y in window.outputs_in_input(0, i, height, oh) {
                // The taps of one output row land on a strided run of one row of the plane.
                let start = window.cell(0, y, i) * width + window.cell(1, across.start, j);
                let targets = plane[start..].iter_mut().step_by(window.stride[1]);
                for (target, &value) in targets.zip(&row[y * ow + across.start..y * ow + across.end]) {
                    *target += value;
                }
            }
        }
    }
    T::write::<B>(output, output_shape, tensor)
}

/// `[batch, k, positions]` groups of the unfolded input times each group's `[out, k]` filters: `[batch, out,
/// positions]`, the groups' outputs side by side.
fn grouped_matmul<B: Backend>(
    filters: &B::FloatTensor,
    columns: &B::FloatTensor,
    groups: usize,
    batch: usize,
) -> Result<B::FloatTensor> {
    let (filters_shape, columns_shape) = (B::shape(filters), B::shape(columns));
    let ([out, k], [_, rows, _]) = (
        <[usize; 2]>::try_from(filters_shape.dims())
            .map_err(|_| Error::unexpected_rank("conv", "filters [out, k]", RankRule::Exactly(2), &filters_shape))?,
        dims3("conv", "columns [batch, k, positions]", &columns_shape)?,
    );
    let (out_per_group, k_per_group) = (out / groups, rows / groups);
    let mut outputs = memory::try_vec("conv", groups)?;
    for group in 0..groups {
        let filters = B::narrow(filters, 0, group * out_per_group, out_per_group)?;
        let filters = B::expand(&B::unsqueeze(&filters, 0)?, Shape::new([batch, out_per_group, k]))?;
        let columns = B::narrow(columns, 1, group * k_per_group, k_per_group)?;
        outputs.push(B::matmul(&filters, &columns)?);
    }
    if groups == 1 { Ok(outputs.swap_remove(0)) } else { B::cat(&outputs, 1) }
}

/// `unfold2d`, then each group's filters times its columns.
pub fn conv2d<B: Backend>(
    input: &B::FloatTensor,
    weight: &B::FloatTensor,
    options: Conv2dOptions,
) -> Result<B::FloatTensor> {
    let op = "conv2d";
    same_dtype::<B>(op, input, weight)?;
    let geometry = conv2d_geometry(op, &B::shape(input), &B::shape(weight), &options)?;
    let ([n, o, oh, ow], [_, c_per_group, kh, kw]) = (geometry.output, geometry.weight);
    let columns = if B::shape(input).num_elements() == 0 {
        // An empty batch or no channels: the unfolded input has no elements either, and is this one reshaped
        // (`unfold2d` refuses such an input, as PyTorch's does, where a convolution accepts it).
        B::reshape(input, Shape::new([n, geometry.rows, product(op, "the positions", &[oh, ow])?]))?
    } else {
        B::unfold2d(input, options.window([kh, kw]), 0.0)?
    };
    let filters = B::reshape(weight, Shape::new([o, product(op, "a filter", &[c_per_group, kh, kw])?]))?;
    let output = grouped_matmul::<B>(&filters, &columns, options.groups, n)?;
    B::reshape(&output, Shape::new(geometry.output))
}

/// `conv2d` of a height-1 image: `[batch, channels, length]` by `[out, in / groups, kernel]`.
pub fn conv1d<B: Backend>(
    input: &B::FloatTensor,
    weight: &B::FloatTensor,
    options: Conv1dOptions,
) -> Result<B::FloatTensor> {
    let op = "conv1d";
    same_dtype::<B>(op, input, weight)?;
    let [n, c, length] = dims3(op, "an input [batch, channels, length]", &B::shape(input))?;
    let [o, c_per_group, kernel] = dims3(op, "a weight [out, in / groups, kernel]", &B::shape(weight))?;
    let options = options.as_2d();
    // Checked here so that an error names `conv1d`.
    conv2d_geometry(op, &Shape::new([n, c, 1, length]), &Shape::new([o, c_per_group, 1, kernel]), &options)?;
    let output = B::conv2d(&B::unsqueeze(input, 2)?, &B::unsqueeze(weight, 2)?, options)?;
    B::squeeze(&output, 2)
}

/// Each group's transposed filters times the input, then `fold2d` to the output size.
pub fn conv_transpose2d<B: Backend>(
    input: &B::FloatTensor,
    weight: &B::FloatTensor,
    options: Conv2dOptions,
) -> Result<B::FloatTensor> {
    let op = "conv_transpose2d";
    same_dtype::<B>(op, input, weight)?;
    let output = conv_transpose2d_geometry(&B::shape(input), &B::shape(weight), &options)?;
    let [n, c, h, w] = dims4(op, "an input", &B::shape(input))?;
    let [_, o_per_group, kh, kw] = dims4(op, "a weight", &B::shape(weight))?;
    // Each group's filters, [out / groups * kh * kw, in / groups], side by side along the rows.
    let c_per_group = c / options.groups;
    let filter = product(op, "a filter", &[o_per_group, kh, kw])?;
    let mut filters = memory::try_vec(op, options.groups)?;
    for group in 0..options.groups {
        let group_weight = B::narrow(weight, 0, group * c_per_group, c_per_group)?;
        let group_weight = B::reshape(&group_weight, Shape::new([c_per_group, filter]))?;
        filters.push(B::swap_dims(&group_weight, 0, 1)?);
    }
    let filters = if options.groups == 1 { filters.swap_remove(0) } else { B::cat(&filters, 0)? };
    let input = B::reshape(input, Shape::new([n, c, product(op, "a plane", &[h, w])?]))?;
    let columns = grouped_matmul::<B>(&filters, &input, options.groups, n)?;
    if n == 0 {
        // An empty batch: no columns to fold, and this reshape of them is the empty output (`fold2d` refuses an
        // empty plane, as PyTorch's does, where a transposed convolution of an empty batch accepts one).
        return B::reshape(&columns, Shape::new(output));
    }
    B::fold2d(&columns, output[2], output[3], options.window([kh, kw]))
}

/// For each group, the gradient `[n, out / groups, positions]` times the input's windows `[n, positions, c / groups *
/// kh * kw]` (`unfold2d`, transposed), summed over the batch: `[out, c / groups * kh * kw]`, the weight's layout.
pub fn conv2d_weight_gradient<B: Backend>(
    input: &B::FloatTensor,
    gradient: &B::FloatTensor,
    kernel: [usize; 2],
    options: Conv2dOptions,
) -> Result<B::FloatTensor> {
    let op = "conv2d_weight_gradient";
    same_dtype::<B>(op, input, gradient)?;
    let geometry = conv2d_weight_geometry(&B::shape(input), &B::shape(gradient), kernel, &options)?;
    let ([n, o, oh, ow], weight) = (geometry.output, Shape::new(geometry.weight));
    let positions = product(op, "the positions", &[oh, ow])?;
    if B::shape(input).num_elements() == 0 || positions == 0 {
        // No product has terms: the sums are 0 (`unfold2d` refuses such an input, as PyTorch's does).
        return B::full(weight, 0.0, B::dtype(input), &B::device(input));
    }
    let columns = B::unfold2d(input, options.window(kernel), 0.0)?;
    let gradient = B::reshape(gradient, Shape::new([n, o, positions]))?;
    let groups = options.groups;
    let (out_per_group, rows_per_group) = (o / groups, geometry.rows / groups);
    let mut blocks = memory::try_vec(op, groups)?;
    for group in 0..groups {
        let met = B::narrow(&gradient, 1, group * out_per_group, out_per_group)?;
        let windows = B::swap_dims(&B::narrow(&columns, 1, group * rows_per_group, rows_per_group)?, 1, 2)?;
        let product = B::sum_dim(&B::matmul(&met, &windows)?, 0)?;
        blocks.push(B::reshape(&product, Shape::new([out_per_group, rows_per_group]))?);
    }
    let stacked = if groups == 1 { blocks.swap_remove(0) } else { B::cat(&blocks, 0)? };
    B::reshape(&stacked, weight)
}
