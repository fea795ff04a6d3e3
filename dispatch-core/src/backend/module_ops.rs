//! Convolution and pooling: one primitive pair on the host, `unfold2d` (im2col) and its adjoint `fold2d`, and every
//! module op composed from them and the backend's own matmul, reshape and reductions. Composed through the backend's
//! ops, they are differentiable wherever those are: `Autodiff` needs backward rules for the two primitives only.

use crate::backend::Backend;
use crate::backend::defaults::{HostFloat, in_host_float, same_dtype};
use crate::error::{Error, Result};
use crate::memory;
use crate::shape::Shape;

/// A 2-D sliding window: kernel size, stride, zero padding on each side and dilation, each as `[height, width]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Window2d {
    /// The window's size.
    pub kernel: [usize; 2],
    /// How far the window moves between outputs.
    pub stride: [usize; 2],
    /// Rows and columns added on each side of the input.
    pub padding: [usize; 2],
    /// The spacing between the window's taps (1: adjacent).
    pub dilation: [usize; 2],
}

impl Default for Window2d {
    /// A 1x1 window with stride 1, no padding and no dilation.
    fn default() -> Self {
        Self::new([1, 1])
    }
}

impl Window2d {
    /// A window of `kernel` with stride 1, no padding and no dilation.
    pub fn new(kernel: [usize; 2]) -> Self {
        Self { kernel, stride: [1, 1], padding: [0, 0], dilation: [1, 1] }
    }

    /// The same window with another stride.
    pub fn stride(self, stride: [usize; 2]) -> Self {
        Self { stride, ..self }
    }

    /// The same window with another padding.
    pub fn padding(self, padding: [usize; 2]) -> Self {
        Self { padding, ..self }
    }

    /// The same window with another dilation.
    pub fn dilation(self, dilation: [usize; 2]) -> Self {
        Self { dilation, ..self }
    }

    /// The output size over an input of `[height, width]`, or why the window does not fit.
    pub fn output_size(&self, op: &'static str, input: [usize; 2]) -> Result<[usize; 2]> {
        let mut output = [0; 2];
        for side in 0..2 {
            let (kernel, stride, dilation) = (self.kernel[side], self.stride[side], self.dilation[side]);
            if kernel == 0 || stride == 0 || dilation == 0 {
                return Err(Error::invalid(
                    op,
                    format!("needs kernel, stride and dilation of 1 or more, got {self:?}"),
                ));
            }
            let reach = dilation * (kernel - 1) + 1;
            let padded = input[side] + 2 * self.padding[side];
            if reach > padded {
                return Err(Error::invalid(
                    op,
                    format!("a window reaching {reach} does not fit an input of {} padded to {padded}", input[side]),
                ));
            }
            output[side] = (padded - reach) / stride + 1;
        }
        Ok(output)
    }
}

/// Stride, padding, dilation and groups of a 2-D convolution.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Conv2dOptions {
    /// See [`Window2d::stride`].
    pub stride: [usize; 2],
    /// See [`Window2d::padding`].
    pub padding: [usize; 2],
    /// See [`Window2d::dilation`].
    pub dilation: [usize; 2],
    /// Input and output channels split into this many groups, each convolved on its own (1: a plain convolution;
    /// the channel count: depthwise).
    pub groups: usize,
    /// Transposed convolutions only: rows and columns added to one side of the output, below the stride.
    pub output_padding: [usize; 2],
}

impl Default for Conv2dOptions {
    /// Stride 1, no padding, no dilation, one group.
    fn default() -> Self {
        Self { stride: [1, 1], padding: [0, 0], dilation: [1, 1], groups: 1, output_padding: [0, 0] }
    }
}

impl Conv2dOptions {
    fn window(&self, kernel: [usize; 2]) -> Window2d {
        Window2d { kernel, stride: self.stride, padding: self.padding, dilation: self.dilation }
    }
}

/// The dimensions of a rank-4 shape, or why it is not one.
fn dims4(op: &'static str, what: &str, shape: &Shape) -> Result<[usize; 4]> {
    <[usize; 4]>::try_from(shape.dims())
        .map_err(|_| Error::invalid(op, format!("needs {what} of rank 4, got shape {shape}")))
}

/// The `(input row, input column)` that tap `(i, j)` of the window at output `(y, x)` reads; `None` in the padding.
fn tap(window: &Window2d, input: [usize; 2], (y, x): (usize, usize), (i, j): (usize, usize)) -> Option<(usize, usize)> {
    let row = (y * window.stride[0] + i * window.dilation[0]).checked_sub(window.padding[0])?;
    let column = (x * window.stride[1] + j * window.dilation[1]).checked_sub(window.padding[1])?;
    (row < input[0] && column < input[1]).then_some((row, column))
}

/// The outputs `x` (of `ow`) whose tap `j` reads a column of an input `w` wide, not the padding: one run, since the
/// tap's column `x * stride + j * dilation - padding` grows with `x`.
fn tap_columns(window: &Window2d, w: usize, ow: usize, j: usize) -> std::ops::Range<usize> {
    let (stride, offset, padding) = (window.stride[1], j * window.dilation[1], window.padding[1]);
    let start = padding.saturating_sub(offset).div_ceil(stride).min(ow);
    let end = (w + padding).saturating_sub(offset).div_ceil(stride).min(ow).max(start);
    start..end
}

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
    let [n, c, h, w] = dims4("unfold2d", "an input [batch, channels, height, width]", &B::shape(tensor))?;
    let [oh, ow] = window.output_size("unfold2d", [h, w])?;
    let [kh, kw] = window.kernel;
    let output_shape = Shape::new([n, c * kh * kw, oh * ow]);
    output_shape.check_tensor_shape("unfold2d")?;
    let (values, pad) = (T::read::<B>(tensor)?, T::of_f64(pad));
    let mut output = memory::try_vec("unfold2d", output_shape.num_elements())?;
    for image in 0..n {
        for channel in 0..c {
            let plane = &values[(image * c + channel) * h * w..][..h * w];
            for i in 0..kh {
                for j in 0..kw {
                    let columns = tap_columns(&window, w, ow, j);
                    for y in 0..oh {
                        let Some((row, _)) =
                            tap(&window, [h, w], (y, columns.start), (i, j)).filter(|_| !columns.is_empty())
                        else {
                            output.extend(std::iter::repeat_n(pad, ow));
                            continue;
                        };
                        // The taps of one output row in one input row: padding, a strided run of the row, padding.
                        let first = (columns.start * window.stride[1] + j * window.dilation[1]) - window.padding[1];
                        output.extend(std::iter::repeat_n(pad, columns.start));
                        output.extend(plane[row * w + first..].iter().step_by(window.stride[1]).take(columns.len()));
                        output.extend(std::iter::repeat_n(pad, ow - columns.end));
                    }
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
    let shape = B::shape(tensor);
    let [n, rows, columns] = <[usize; 3]>::try_from(shape.dims())
        .map_err(|_| Error::invalid("fold2d", format!("needs columns [batch, rows, positions], got shape {shape}")))?;
    let [oh, ow] = window.output_size("fold2d", [height, width])?;
    let [kh, kw] = window.kernel;
    if !rows.is_multiple_of(kh * kw) || columns != oh * ow {
        return Err(Error::invalid(
            "fold2d",
            format!("columns of shape {shape} do not come from a {kh}x{kw} window over {height}x{width}"),
        ));
    }
    let c = rows / (kh * kw);
    let output_shape = Shape::new([n, c, height, width]);
    output_shape.check_tensor_shape("fold2d")?;
    let values = T::read::<B>(tensor)?;
    let mut output = memory::try_filled("fold2d", output_shape.num_elements(), T::default())?;
    for image in 0..n {
        for channel in 0..c {
            let plane = &mut output[(image * c + channel) * height * width..][..height * width];
            for i in 0..kh {
                for j in 0..kw {
                    let row = &values[((image * c + channel) * kh * kw + i * kw + j) * columns..][..columns];
                    for y in 0..oh {
                        for x in 0..ow {
                            if let Some((r, col)) = tap(&window, [height, width], (y, x), (i, j)) {
                                plane[r * width + col] += row[y * ow + x];
                            }
                        }
                    }
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
    let ([out, k], [_, rows, _]) = (
        <[usize; 2]>::try_from(B::shape(filters).dims()).map_err(|_| Error::invalid("conv", "filters of rank 2"))?,
        <[usize; 3]>::try_from(B::shape(columns).dims()).map_err(|_| Error::invalid("conv", "columns of rank 3"))?,
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

/// Checks that `groups` divides both channel counts.
fn check_groups(op: &'static str, groups: usize, in_channels: usize, out_channels: usize) -> Result<()> {
    if groups == 0 || !in_channels.is_multiple_of(groups) || !out_channels.is_multiple_of(groups) {
        return Err(Error::invalid(
            op,
            format!("{groups} groups must divide {in_channels} input and {out_channels} output channels"),
        ));
    }
    Ok(())
}

/// The sizes of a 2-D convolution, once its operands and options are known to fit.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Conv2dGeometry {
    /// `[batch, out channels, out height, out width]`.
    pub(crate) output: [usize; 4],
    /// The weight's `[out, in / groups, kh, kw]`.
    pub(crate) weight: [usize; 4],
    /// The elements of the unfolded input, `batch * in channels * kh * kw * out height * out width`. Computed (and
    /// checked for overflow) for every backend; read by candle, whose kernel allocates the columns itself.
    #[cfg_attr(not(feature = "candle"), allow(dead_code))]
    pub(crate) columns: usize,
}

/// Checks a 2-D convolution's operands against each other and its options.
pub(crate) fn conv2d_geometry(input: &Shape, weight: &Shape, options: &Conv2dOptions) -> Result<Conv2dGeometry> {
    let [n, c, h, w] = dims4("conv2d", "an input [batch, channels, height, width]", input)?;
    let [o, c_per_group, kh, kw] = dims4("conv2d", "a weight [out, in / groups, height, width]", weight)?;
    check_groups("conv2d", options.groups, c, o)?;
    if c_per_group * options.groups != c {
        let groups = options.groups;
        let reason = format!("the weight takes {c_per_group} channels per group, the input has {c} in {groups} groups");
        return Err(Error::invalid("conv2d", reason));
    }
    let [oh, ow] = options.window([kh, kw]).output_size("conv2d", [h, w])?;
    let columns = [n, c, kh, kw, oh, ow].iter().try_fold(1usize, |total, &size| total.checked_mul(size));
    let columns = columns.ok_or_else(|| Error::invalid("conv2d", "the unfolded input has more elements than usize"))?;
    Ok(Conv2dGeometry { output: [n, o, oh, ow], weight: [o, c_per_group, kh, kw], columns })
}

/// `unfold2d`, then each group's filters times its columns.
pub fn conv2d<B: Backend>(
    input: &B::FloatTensor,
    weight: &B::FloatTensor,
    options: Conv2dOptions,
) -> Result<B::FloatTensor> {
    same_dtype::<B>("conv2d", input, weight)?;
    let geometry = conv2d_geometry(&B::shape(input), &B::shape(weight), &options)?;
    let ([n, o, oh, ow], [_, c_per_group, kh, kw]) = (geometry.output, geometry.weight);
    let window = options.window([kh, kw]);
    let columns = B::unfold2d(input, window, 0.0)?;
    let filters = B::reshape(weight, Shape::new([o, c_per_group * kh * kw]))?;
    let output = grouped_matmul::<B>(&filters, &columns, options.groups, n)?;
    B::reshape(&output, Shape::new([n, o, oh, ow]))
}

/// `conv2d` of a height-1 image: `[batch, channels, length]` by `[out, in / groups, kernel]`. Only the length side
/// of `options` applies (its second entries).
pub fn conv1d<B: Backend>(
    input: &B::FloatTensor,
    weight: &B::FloatTensor,
    options: Conv2dOptions,
) -> Result<B::FloatTensor> {
    same_dtype::<B>("conv1d", input, weight)?;
    let line = |side: [usize; 2], fill: usize| [fill, side[1]];
    let options = Conv2dOptions {
        stride: line(options.stride, 1),
        padding: line(options.padding, 0),
        dilation: line(options.dilation, 1),
        output_padding: line(options.output_padding, 0),
        groups: options.groups,
    };
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
    let [n, c, h, w] = dims4(op, "an input [batch, channels, height, width]", &B::shape(input))?;
    let [c_weight, o_per_group, kh, kw] = dims4(op, "a weight [in, out / groups, height, width]", &B::shape(weight))?;
    let o = o_per_group * options.groups;
    check_groups(op, options.groups, c, o)?;
    if c_weight != c {
        return Err(Error::invalid(op, format!("the weight takes {c_weight} input channels, the input has {c}")));
    }
    let mut size = [0; 2];
    for side in 0..2 {
        let (stride, padding, dilation) = (options.stride[side], options.padding[side], options.dilation[side]);
        if options.output_padding[side] >= stride.max(1) {
            return Err(Error::invalid(
                op,
                format!("output padding {:?} must be below the stride", options.output_padding),
            ));
        }
        let kernel = [kh, kw][side];
        let full = ([h, w][side].saturating_sub(1)) * stride + dilation * kernel.saturating_sub(1) + 1;
        size[side] = (full + options.output_padding[side])
            .checked_sub(2 * padding)
            .filter(|&size| size > 0)
            .ok_or_else(|| Error::invalid(op, format!("padding {:?} leaves no output", options.padding)))?;
    }
    let window = options.window([kh, kw]);
    // Each group's filters, [out / groups * kh * kw, in / groups], side by side along the rows.
    let c_per_group = c / options.groups;
    let mut filters = memory::try_vec(op, options.groups)?;
    for group in 0..options.groups {
        let group_weight = B::narrow(weight, 0, group * c_per_group, c_per_group)?;
        let group_weight = B::reshape(&group_weight, Shape::new([c_per_group, o_per_group * kh * kw]))?;
        filters.push(B::swap_dims(&group_weight, 0, 1)?);
    }
    let filters = if options.groups == 1 { filters.swap_remove(0) } else { B::cat(&filters, 0)? };
    let columns = grouped_matmul::<B>(&filters, &B::reshape(input, Shape::new([n, c, h * w]))?, options.groups, n)?;
    B::fold2d(&columns, size[0], size[1], window)
}

/// On the host, one pass over each window: its largest tap, `-inf` for a window of padding alone (a NaN tap
/// wins). In `f32` for an `F32` tensor, else in `f64`; no unfolded copy of the input (`kh * kw` times its size).
pub fn max_pool2d<B: Backend>(input: &B::FloatTensor, window: Window2d) -> Result<B::FloatTensor> {
    in_host_float!(input, |Element| {
        let (values, shape) = window_maxima::<B, Element, _>("max_pool2d", input, window, |_, best| {
            Ok(best.map_or(<Element as num_traits::Float>::neg_infinity(), |(_, value)| value))
        })?;
        Element::write::<B>(values, shape, input)
    })
}

/// On the host: for each window, the flat `row * width + column` of its first largest tap; a NaN tap wins (the
/// first one), padding taps never do.
pub fn max_pool2d_indices<B: Backend>(input: &B::FloatTensor, window: Window2d) -> Result<B::IntTensor> {
    let op = "max_pool2d_indices";
    in_host_float!(input, |Element| {
        let (indices, shape) = window_maxima::<B, Element, _>(op, input, window, |(y, x), best| {
            // A window of padding alone has no input to point at: its `max_pool2d` is `-inf`.
            let (at, _) = best.ok_or_else(|| {
                Error::invalid(op, format!("the window at ({y}, {x}) covers only padding: it has no maximum"))
            })?;
            Ok(at as i64)
        })?;
        B::int_from_vec(indices, shape, &B::device(input))
    })
}

/// `[n, c, oh, ow]` outputs, one per window: `output` of the window's position and its first largest tap (flat
/// index in its plane, and value), `None` if the window covers only padding.
fn window_maxima<B: Backend, T: HostFloat, O>(
    op: &'static str,
    input: &B::FloatTensor,
    window: Window2d,
    mut output: impl FnMut((usize, usize), Option<(usize, T)>) -> Result<O>,
) -> Result<(Vec<O>, Shape)> {
    let [n, c, h, w] = dims4(op, "an input [batch, channels, height, width]", &B::shape(input))?;
    let [oh, ow] = window.output_size(op, [h, w])?;
    let [kh, kw] = window.kernel;
    let output_shape = Shape::new([n, c, oh, ow]);
    output_shape.check_tensor_shape(op)?;
    let values = T::read::<B>(input)?;
    let mut outputs = memory::try_vec(op, output_shape.num_elements())?;
    // By index, not `chunks`: an empty plane (h or w 0, padded to a window) would make `chunks` panic.
    for plane in (0..n * c).map(|plane| &values[plane * h * w..][..h * w]) {
        for y in 0..oh {
            for x in 0..ow {
                let mut best: Option<(usize, T)> = None;
                for (i, j) in (0..kh).flat_map(|i| (0..kw).map(move |j| (i, j))) {
                    let Some((row, column)) = tap(&window, [h, w], (y, x), (i, j)) else { continue };
                    let (at, value) = (row * w + column, plane[row * w + column]);
                    let wins = match best {
                        None => true,
                        Some((_, max)) => !max.is_nan() && (value.is_nan() || value > max),
                    };
                    if wins {
                        best = Some((at, value));
                    }
                }
                outputs.push(output((y, x), best)?);
            }
        }
    }
    Ok((outputs, output_shape))
}

/// `unfold2d` with zeros in the padding, then the mean of each window (padding counted, as PyTorch's default).
pub fn avg_pool2d<B: Backend>(input: &B::FloatTensor, window: Window2d) -> Result<B::FloatTensor> {
    pool::<B>("avg_pool2d", input, window, 0.0, B::mean_dim)
}

fn pool<B: Backend>(
    op: &'static str,
    input: &B::FloatTensor,
    window: Window2d,
    pad_value: f64,
    reduce: fn(&B::FloatTensor, usize) -> Result<B::FloatTensor>,
) -> Result<B::FloatTensor> {
    let [n, c, h, w] = dims4(op, "an input [batch, channels, height, width]", &B::shape(input))?;
    let [oh, ow] = window.output_size(op, [h, w])?;
    let columns = B::unfold2d(input, window, pad_value)?;
    let taps = B::reshape(&columns, Shape::new([n, c, window.kernel[0] * window.kernel[1], oh * ow]))?;
    B::reshape(&reduce(&taps, 2)?, Shape::new([n, c, oh, ow]))
}

/// The `[output, input]` matrix averaging input cells `floor(i * input / output)..ceil((i + 1) * input / output)`
/// into output cell `i`.
fn averaging_matrix(op: &'static str, output: usize, input: usize) -> Result<Vec<f64>> {
    let mut matrix = memory::try_filled(op, output * input, 0.0)?;
    for cell in 0..output {
        let (start, end) = (cell * input / output, ((cell + 1) * input).div_ceil(output));
        for column in start..end {
            matrix[cell * input + column] = 1.0 / (end - start) as f64;
        }
    }
    Ok(matrix)
}

/// `rows · x · columnsᵀ` for each image and channel, the two averaging matrices applied with the backend's matmul.
pub fn adaptive_avg_pool2d<B: Backend>(input: &B::FloatTensor, output: [usize; 2]) -> Result<B::FloatTensor> {
    let op = "adaptive_avg_pool2d";
    let [n, c, h, w] = dims4(op, "an input [batch, channels, height, width]", &B::shape(input))?;
    let [oh, ow] = output;
    if oh == 0 || ow == 0 || h == 0 || w == 0 {
        return Err(Error::invalid(op, format!("needs a non-empty input and output, got {h}x{w} to {oh}x{ow}")));
    }
    let (dtype, device) = (B::dtype(input), B::device(input));
    let rows = B::from_f64_vec(averaging_matrix(op, oh, h)?, Shape::new([1, oh, h]), dtype, &device)?;
    let columns = B::from_f64_vec(averaging_matrix(op, ow, w)?, Shape::new([1, ow, w]), dtype, &device)?;
    let planes = B::reshape(input, Shape::new([n * c, h, w]))?;
    let rows = B::expand(&rows, Shape::new([n * c, oh, h]))?;
    let columns = B::expand(&B::swap_dims(&columns, 1, 2)?, Shape::new([n * c, w, ow]))?;
    let pooled = B::matmul(&B::matmul(&rows, &planes)?, &columns)?;
    B::reshape(&pooled, Shape::new([n, c, oh, ow]))
}
