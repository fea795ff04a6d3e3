//! Convolution and pooling over `[batch, channels, height, width]`, straight from their definitions: each output
//! is a sum (or max, or mean) over the taps of its window.

use crate::support::values::{Floats, Ints, Outcome, count, dtype_mismatch, invalid, mismatch, round_to};
use dispatch_core::backend::{Conv1dOptions, Conv2dOptions, Window2d};

fn dims4(dims: &[usize], what: &str) -> Outcome<[usize; 4]> {
    match <[usize; 4]>::try_from(dims) {
        Ok(dims) => Ok(dims),
        Err(_) => invalid(format!("{what} of dims {dims:?} is not of rank 4")),
    }
}

/// The output size of `window` over an input of `[height, width]`.
pub fn output_size(window: &Window2d, input: [usize; 2]) -> Outcome<[usize; 2]> {
    let mut output = [0; 2];
    for side in 0..2 {
        let (kernel, stride, dilation) = (window.kernel[side], window.stride[side], window.dilation[side]);
        if kernel == 0 || stride == 0 || dilation == 0 {
            return invalid(format!("window {window:?}"));
        }
        let (reach, padded) = (dilation * (kernel - 1) + 1, input[side] + 2 * window.padding[side]);
        if reach > padded {
            return invalid(format!("window {window:?} over {input:?}"));
        }
        output[side] = (padded - reach) / stride + 1;
    }
    Ok(output)
}

/// The input `(row, column)` that tap `(i, j)` of the window at output `(y, x)` reads; `None` in the padding.
fn tap(window: &Window2d, input: [usize; 2], (y, x): (usize, usize), (i, j): (usize, usize)) -> Option<(usize, usize)> {
    let row = (y * window.stride[0] + i * window.dilation[0]).checked_sub(window.padding[0])?;
    let column = (x * window.stride[1] + j * window.dilation[1]).checked_sub(window.padding[1])?;
    (row < input[0] && column < input[1]).then_some((row, column))
}

/// PyTorch's rule for unfolding and pooling: the batch may be empty, the channels and the plane may not.
fn check_planes(dims: &[usize], what: &str) -> Outcome<[usize; 4]> {
    let dims = dims4(dims, what)?;
    if dims[1..].contains(&0) {
        return invalid(format!("{what} of dims {dims:?} has no channels or an empty plane"));
    }
    Ok(dims)
}

/// PyTorch's rule for a pooling window: padding at most half the kernel on each side.
fn check_pool_padding(window: &Window2d) -> Outcome<()> {
    if (0..2).any(|side| window.padding[side] > window.kernel[side] / 2) {
        return invalid(format!("pooling padding beyond half the kernel: {window:?}"));
    }
    Ok(())
}

fn options_window(options: &Conv2dOptions, kernel: [usize; 2]) -> Window2d {
    Window2d { kernel, stride: options.stride, padding: options.padding, dilation: options.dilation }
}

fn check_groups(groups: usize, input_channels: usize, output_channels: usize) -> Outcome<()> {
    if groups == 0 || !input_channels.is_multiple_of(groups) || !output_channels.is_multiple_of(groups) {
        return invalid(format!("{groups} groups for {input_channels} in and {output_channels} out channels"));
    }
    Ok(())
}

/// The gradient of `conv2d`'s weight `[o, c / groups, kh, kw]`: each weight entry's sum, over the outputs, of the
/// output's gradient times the input cell the entry multiplies there.
pub fn conv2d_weight_gradient(
    input: &Floats,
    gradient: &Floats,
    [kh, kw]: [usize; 2],
    options: &Conv2dOptions,
) -> Outcome<Floats> {
    dtype_mismatch(input.dtype, gradient.dtype)?;
    let [n, c, h, w] = dims4(&input.dims, "conv2d_weight_gradient input")?;
    let [_, o, _, _] = dims4(&gradient.dims, "conv2d_weight_gradient gradient")?;
    if kh == 0 || kw == 0 {
        return invalid(format!("a kernel of {:?}", [kh, kw]));
    }
    check_groups(options.groups, c, o)?;
    let per_group = c / options.groups;
    if o == 0 || (n > 0 && c > 0 && (h == 0 || w == 0)) {
        return invalid(format!("conv2d_weight_gradient of {:?} for {:?}", input.dims, gradient.dims));
    }
    let window = options_window(options, [kh, kw]);
    let [oh, ow] = output_size(&window, [h, w])?;
    if gradient.dims != [n, o, oh, ow] {
        return mismatch(format!("a gradient of {:?} for an output of {:?}", gradient.dims, [n, o, oh, ow]));
    }
    let out_per_group = o / options.groups;
    let dims = vec![o, per_group, kh, kw];
    let mut values = vec![0.0; count(&dims)];
    for (b, oc, y, x) in
        (0..n).flat_map(|b| (0..o).flat_map(move |oc| (0..oh * ow).map(move |p| (b, oc, p / ow, p % ow))))
    {
        let (group, g) = (oc / out_per_group, gradient.values[((b * o + oc) * oh + y) * ow + x]);
        for (ci, i, j) in (0..per_group).flat_map(|ci| (0..kh * kw).map(move |t| (ci, t / kw, t % kw))) {
            if let Some((row, column)) = tap(&window, [h, w], (y, x), (i, j)) {
                let pixel = input.values[((b * c + group * per_group + ci) * h + row) * w + column];
                values[((oc * per_group + ci) * kh + i) * kw + j] += g * pixel;
            }
        }
    }
    Ok(Floats::new(dims, values, input.dtype))
}

pub fn conv2d(input: &Floats, weight: &Floats, options: &Conv2dOptions) -> Outcome<Floats> {
    dtype_mismatch(input.dtype, weight.dtype)?;
    let [n, c, h, w] = dims4(&input.dims, "conv2d input")?;
    let [o, per_group, kh, kw] = dims4(&weight.dims, "conv2d weight")?;
    check_groups(options.groups, c, o)?;
    // The input's and the weight's shapes disagree on the channels.
    if per_group * options.groups != c {
        return mismatch(format!("a weight of {per_group} channels per group for {c} channels"));
    }
    // PyTorch: the weight has output channels, and an empty plane needs an empty batch or no channels.
    if o == 0 || (n > 0 && c > 0 && (h == 0 || w == 0)) {
        return invalid(format!("conv2d of {:?} by {:?}", input.dims, weight.dims));
    }
    let window = options_window(options, [kh, kw]);
    let [oh, ow] = output_size(&window, [h, w])?;
    let out_per_group = o / options.groups;
    let dims = vec![n, o, oh, ow];
    let mut values = Vec::with_capacity(count(&dims));
    for b in 0..n {
        for oc in 0..o {
            let group = oc / out_per_group;
            for y in 0..oh {
                for x in 0..ow {
                    let mut sum = 0.0;
                    for ci in 0..per_group {
                        let channel = group * per_group + ci;
                        for (i, j) in (0..kh).flat_map(|i| (0..kw).map(move |j| (i, j))) {
                            if let Some((row, column)) = tap(&window, [h, w], (y, x), (i, j)) {
                                let pixel = input.values[((b * c + channel) * h + row) * w + column];
                                sum += pixel * weight.values[((oc * per_group + ci) * kh + i) * kw + j];
                            }
                        }
                    }
                    values.push(sum);
                }
            }
        }
    }
    Ok(Floats::new(dims, values, input.dtype))
}

/// `conv2d` of a height-1 image: `[n, c, length]` by `[out, c / groups, kernel]`, with the second entries of
/// `options`.
pub fn conv1d(input: &Floats, weight: &Floats, options: &Conv1dOptions) -> Outcome<Floats> {
    dtype_mismatch(input.dtype, weight.dtype)?;
    let lift = |dims: &[usize], what| match dims {
        [a, b, len] => Ok(vec![*a, *b, 1, *len]),
        _ => invalid(format!("conv1d {what} of dims {dims:?}")),
    };
    let (input_dims, weight_dims) = (lift(&input.dims, "input")?, lift(&weight.dims, "weight")?);
    let options = Conv2dOptions {
        stride: [1, options.stride],
        padding: [0, options.padding],
        dilation: [1, options.dilation],
        groups: options.groups,
        output_padding: [0, 0],
    };
    let lifted = |floats: &Floats, dims| Floats::new(dims, floats.values.clone(), floats.dtype);
    let output = conv2d(&lifted(input, input_dims), &lifted(weight, weight_dims), &options)?;
    // The height-1 axis of conv2d's `[n, o, 1, length]` goes.
    let dims = [&output.dims[..2], &output.dims[3..]].concat();
    Ok(Floats::new(dims, output.values, output.dtype))
}

/// The adjoint of `conv2d` by its input: each input pixel times each tap of its filters, added where that tap of
/// a `conv2d` over the output would have read.
pub fn conv_transpose2d(input: &Floats, weight: &Floats, options: &Conv2dOptions) -> Outcome<Floats> {
    dtype_mismatch(input.dtype, weight.dtype)?;
    let [n, c, h, w] = dims4(&input.dims, "conv_transpose2d input")?;
    let [weight_channels, out_per_group, kh, kw] = dims4(&weight.dims, "conv_transpose2d weight")?;
    if [weight_channels, out_per_group, kh, kw].contains(&0) {
        return invalid(format!("conv_transpose2d weight of dims {:?}", weight.dims));
    }
    let o = out_per_group * options.groups;
    check_groups(options.groups, c, o)?;
    if weight_channels != c {
        return mismatch(format!("a weight for {weight_channels} channels on {c}"));
    }
    // PyTorch: an empty plane, and an empty output, only for an empty batch.
    if n > 0 && (h == 0 || w == 0) {
        return invalid(format!("conv_transpose2d of an empty plane {:?}", input.dims));
    }
    let mut size = [0; 2];
    for side in 0..2 {
        let (stride, padding, dilation) = (options.stride[side], options.padding[side], options.dilation[side]);
        if options.output_padding[side] >= stride.max(1) {
            return invalid(format!("output padding {:?} for stride {:?}", options.output_padding, options.stride));
        }
        // (in - 1) * stride + dilation * (kernel - 1) + output_padding + 1 - 2 * padding, the size whose conv2d
        // comes back to `in`.
        let [input, kernel] = [[h, w][side] as i64, [kh, kw][side] as i64];
        let length =
            (input - 1) * stride as i64 + dilation as i64 * (kernel - 1) + options.output_padding[side] as i64 + 1
                - 2 * padding as i64;
        if length < i64::from(n > 0) || kernel == 0 {
            return invalid(format!("{options:?} leaves no output"));
        }
        size[side] = length as usize;
    }
    let [height, width] = size;
    let window = options_window(options, [kh, kw]);
    let per_group = c / options.groups;
    let mut values = vec![0.0; n * o * height * width];
    for b in 0..n {
        for ci in 0..c {
            let group = ci / per_group;
            for (y, x) in (0..h).flat_map(|y| (0..w).map(move |x| (y, x))) {
                let pixel = input.values[((b * c + ci) * h + y) * w + x];
                for oc in 0..out_per_group {
                    for (i, j) in (0..kh).flat_map(|i| (0..kw).map(move |j| (i, j))) {
                        if let Some((row, column)) = tap(&window, [height, width], (y, x), (i, j)) {
                            let channel = group * out_per_group + oc;
                            let tap_weight = weight.values[((ci * out_per_group + oc) * kh + i) * kw + j];
                            values[((b * o + channel) * height + row) * width + column] += pixel * tap_weight;
                        }
                    }
                }
            }
        }
    }
    Ok(Floats::new(vec![n, o, height, width], values, input.dtype))
}

/// For every window of every plane: `f` of the `(flat index in the plane, value)` of its taps inside the input.
fn windows<T>(
    input: &Floats,
    window: &Window2d,
    mut f: impl FnMut((usize, usize), &[(usize, f64)]) -> Outcome<T>,
) -> Outcome<(Vec<usize>, Vec<T>)> {
    let [n, c, h, w] = check_planes(&input.dims, "pooled input")?;
    check_pool_padding(window)?;
    let [oh, ow] = output_size(window, [h, w])?;
    let [kh, kw] = window.kernel;
    let mut outputs = Vec::new();
    for plane in 0..n * c {
        for (y, x) in (0..oh).flat_map(|y| (0..ow).map(move |x| (y, x))) {
            let taps: Vec<(usize, f64)> = (0..kh)
                .flat_map(|i| (0..kw).map(move |j| (i, j)))
                .filter_map(|tap_at| tap(window, [h, w], (y, x), tap_at))
                .map(|(row, column)| (row * w + column, input.values[plane * h * w + row * w + column]))
                .collect();
            outputs.push(f((y, x), &taps)?);
        }
    }
    Ok((vec![n, c, oh, ow], outputs))
}

/// The first largest tap of a window (a NaN tap wins, the first one); `None` for a window of padding only.
pub fn first_max(taps: &[(usize, f64)]) -> Option<(usize, f64)> {
    let mut best: Option<(usize, f64)> = None;
    for &(at, value) in taps {
        let wins = match best {
            None => true,
            Some((_, max)) => !max.is_nan() && (value.is_nan() || value > max),
        };
        if wins {
            best = Some((at, value));
        }
    }
    best
}

pub fn max_pool2d(input: &Floats, window: &Window2d) -> Outcome<Floats> {
    let (dims, values) = windows(input, window, |_, taps| Ok(first_max(taps).map_or(f64::NEG_INFINITY, |(_, v)| v)))?;
    Ok(Floats::new(dims, values, input.dtype))
}

pub fn max_pool2d_indices(input: &Floats, window: &Window2d) -> Outcome<Ints> {
    let (dims, values) = windows(input, window, |at, taps| match first_max(taps) {
        Some((index, _)) => Ok(index as i64),
        None => invalid(format!("the window at {at:?} covers only padding")),
    })?;
    Ok(Ints { dims, values })
}

/// The mean of each window, its padding taps counted as zeros.
pub fn avg_pool2d(input: &Floats, window: &Window2d) -> Outcome<Floats> {
    let taps_per_window = (window.kernel[0] * window.kernel[1]) as f64;
    let (dims, values) =
        windows(input, window, |_, taps| Ok(taps.iter().map(|(_, v)| v).sum::<f64>() / taps_per_window))?;
    Ok(Floats::new(dims, values, input.dtype))
}

/// Output cell `i` of `output` averages input cells `floor(i * input / output)..ceil((i + 1) * input / output)`.
pub fn adaptive_avg_pool2d(input: &Floats, [oh, ow]: [usize; 2]) -> Outcome<Floats> {
    let [n, c, h, w] = dims4(&input.dims, "adaptive_avg_pool2d input")?;
    // PyTorch: the batch, the channels and the output may be empty, the input's plane may not.
    if h == 0 || w == 0 {
        return invalid(format!("adaptive pooling of {h}x{w} to {oh}x{ow}"));
    }
    let cells =
        |cell: usize, input: usize, output: usize| (cell * input / output)..((cell + 1) * input).div_ceil(output);
    let mut values = Vec::new();
    for plane in 0..n * c {
        for (y, x) in (0..oh).flat_map(|y| (0..ow).map(move |x| (y, x))) {
            let (rows, columns) = (cells(y, h, oh), cells(x, w, ow));
            let taps = rows.len() * columns.len();
            let sum: f64 = rows
                .flat_map(|r| columns.clone().map(move |col| (r, col)))
                .map(|(r, col)| input.values[plane * h * w + r * w + col])
                .sum();
            values.push(sum / taps as f64);
        }
    }
    Ok(Floats::new(vec![n, c, oh, ow], values, input.dtype))
}

/// im2col: row `channel * kh * kw + i * kw + j` holds tap `(i, j)` at every output position; padding reads `pad`.
pub fn unfold2d(input: &Floats, window: &Window2d, pad: f64) -> Outcome<Floats> {
    let [n, c, h, w] = check_planes(&input.dims, "unfold2d input")?;
    let [oh, ow] = output_size(window, [h, w])?;
    let [kh, kw] = window.kernel;
    let pad = round_to(input.dtype, pad);
    let mut values = Vec::with_capacity(n * c * kh * kw * oh * ow);
    for plane in 0..n * c {
        for (i, j) in (0..kh).flat_map(|i| (0..kw).map(move |j| (i, j))) {
            for (y, x) in (0..oh).flat_map(|y| (0..ow).map(move |x| (y, x))) {
                values.push(match tap(window, [h, w], (y, x), (i, j)) {
                    Some((row, column)) => input.values[plane * h * w + row * w + column],
                    None => pad,
                });
            }
        }
    }
    Ok(Floats::new(vec![n, c * kh * kw, oh * ow], values, input.dtype))
}

/// col2im, the adjoint of `unfold2d`: every column entry added to the pixel its tap reads (padding dropped).
pub fn fold2d(input: &Floats, [height, width]: [usize; 2], window: &Window2d) -> Outcome<Floats> {
    let [n, rows, columns] = input.dims[..] else {
        return invalid(format!("fold2d of dims {:?}", input.dims));
    };
    // PyTorch: rows, positions and an output plane.
    if [rows, columns, height, width].contains(&0) {
        return invalid(format!("fold2d of dims {:?} to {height}x{width}", input.dims));
    }
    let [oh, ow] = output_size(window, [height, width])?;
    let [kh, kw] = window.kernel;
    if rows % (kh * kw) != 0 || columns != oh * ow {
        return invalid(format!("columns {:?} for a {kh}x{kw} window over {height}x{width}", input.dims));
    }
    let c = rows / (kh * kw);
    let mut values = vec![0.0; n * c * height * width];
    for plane in 0..n * c {
        for (i, j) in (0..kh).flat_map(|i| (0..kw).map(move |j| (i, j))) {
            for (y, x) in (0..oh).flat_map(|y| (0..ow).map(move |x| (y, x))) {
                if let Some((row, column)) = tap(window, [height, width], (y, x), (i, j)) {
                    let entry = input.values[((plane * kh * kw) + i * kw + j) * columns + y * ow + x];
                    values[plane * height * width + row * width + column] += entry;
                }
            }
        }
    }
    Ok(Floats::new(vec![n, c, height, width], values, input.dtype))
}

/// For every output of `max_pool2d`, the input position (flat over the whole tensor) of its window's first maximum;
/// `None` for a window of padding only.
pub fn max_positions(input: &Floats, window: &Window2d) -> Outcome<Vec<Option<usize>>> {
    let [_, _, h, w] = dims4(&input.dims, "pooled input")?;
    let [oh, ow] = output_size(window, [h, w])?;
    let (_, positions) = windows(input, window, |_, taps| Ok(first_max(taps).map(|(at, _)| at)))?;
    Ok(positions.iter().enumerate().map(|(k, at)| at.map(|at| k / (oh * ow) * h * w + at)).collect())
}

/// The values of the taps inside the input of every window, for checking how clear each window's maximum is.
pub fn windows_of(input: &Floats, window: &Window2d) -> Outcome<Vec<Vec<f64>>> {
    let (_, taps) = windows(input, window, |_, taps| Ok(taps.iter().map(|&(_, value)| value).collect()))?;
    Ok(taps)
}
