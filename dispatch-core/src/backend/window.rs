//! The shapes of convolution and pooling: the options each op takes, and PyTorch's rules that decide its output
//! size or refuse its arguments.
//!
//! Sizes are `usize`, but the arithmetic between them runs in `u128`, where `input + 2 * padding` and
//! `dilation * (kernel - 1) + 1` are exact for any `usize` operands: an absurd option is judged by the same rule as
//! an ordinary one, never by a wrapped value. Each op first checks its arguments against the rules (an
//! [`Error::InvalidValue`], [`Error::WindowTooLarge`], [`Error::UnexpectedRank`] or [`Error::UnexpectedShape`]), then
//! that the sizes it computes fit back in `usize` ([`Error::SizeOverflow`]). One
//! of those is the padded input, which bounds every tap position the ops compute: their `usize` arithmetic on
//! positions cannot overflow once it fits.

mod sliding;

pub(crate) use self::sliding::{
    adaptive_cells, adaptive_pool2d_geometry, fold2d_geometry, pool2d_geometry, unfold2d_geometry,
};
use crate::error::{Error, RankRule, Result};
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

    /// The output size over an input of `[height, width]`: on each side `(input + 2 * padding - dilation *
    /// (kernel - 1) - 1) / stride + 1` positions. [`Error::InvalidValue`] if a kernel, stride or dilation is 0,
    /// [`Error::WindowTooLarge`] if the window spans more than the padded input; [`Error::SizeOverflow`] if the
    /// padded input does not fit in `usize`.
    pub fn output_size(&self, op: &'static str, input: [usize; 2]) -> Result<[usize; 2]> {
        let positions = self.positions(op, input)?;
        self.check_padded_fits(op, input)?;
        let [height, width] = positions;
        Ok([to_usize(op, "the output height", height)?, to_usize(op, "the output width", width)?])
    }

    /// The positions on each side, exactly, or why the window is refused; nothing here can overflow.
    pub(crate) fn positions(&self, op: &'static str, input: [usize; 2]) -> Result<[u128; 2]> {
        for (parameter, sizes) in [("kernel", self.kernel), ("stride", self.stride), ("dilation", self.dilation)] {
            check_positive(op, parameter, sizes)?;
        }
        let mut positions = [0; 2];
        for side in 0..2 {
            let (padded, reach) = (self.padded(side, input[side]), self.reach(side));
            if reach > padded {
                return Err(Error::WindowTooLarge { op, span: reach, input: input[side], padded });
            }
            positions[side] = (padded - reach) / wide(self.stride[side]) + 1;
        }
        Ok(positions)
    }

    /// Checks that the input padded on both sides fits in `usize`, and with it every tap position (each is below).
    pub(crate) fn check_padded_fits(&self, op: &'static str, input: [usize; 2]) -> Result<()> {
        to_usize(op, "the padded input height", self.padded(0, input[0]))?;
        to_usize(op, "the padded input width", self.padded(1, input[1]))?;
        Ok(())
    }

    /// PyTorch's rule for a pooling window: padding at most half the kernel on each side.
    pub(crate) fn check_pool_padding(&self, op: &'static str) -> Result<()> {
        if (0..2).any(|side| self.padding[side] > self.kernel[side] / 2) {
            return Err(Error::invalid_value(op, "padding", self.padding, "at most half the kernel on each side"));
        }
        Ok(())
    }

    /// `input + 2 * padding`, exactly.
    fn padded(&self, side: usize, input: usize) -> u128 {
        wide(input) + 2 * wide(self.padding[side])
    }

    /// `dilation * (kernel - 1) + 1`, exactly: the cells one window spans.
    fn reach(&self, side: usize) -> u128 {
        wide(self.dilation[side]) * wide(self.kernel[side]).saturating_sub(1) + 1
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
    pub(crate) fn window(&self, kernel: [usize; 2]) -> Window2d {
        Window2d { kernel, stride: self.stride, padding: self.padding, dilation: self.dilation }
    }
}

/// Stride, padding, dilation and groups of a 1-D convolution, along its one spatial axis.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Conv1dOptions {
    /// How far the kernel moves between outputs.
    pub stride: usize,
    /// Cells added at each end of the input.
    pub padding: usize,
    /// The spacing between the kernel's taps (1: adjacent).
    pub dilation: usize,
    /// See [`Conv2dOptions::groups`].
    pub groups: usize,
}

impl Default for Conv1dOptions {
    /// Stride 1, no padding, no dilation, one group.
    fn default() -> Self {
        Self { stride: 1, padding: 0, dilation: 1, groups: 1 }
    }
}

impl Conv1dOptions {
    /// The same convolution of a height-1 image: these options along the width, a plain 1-row kernel down it.
    pub(crate) fn as_2d(&self) -> Conv2dOptions {
        Conv2dOptions {
            stride: [1, self.stride],
            padding: [0, self.padding],
            dilation: [1, self.dilation],
            groups: self.groups,
            output_padding: [0, 0],
        }
    }
}

/// `value` in `u128`, where sums and products of two sizes are exact; lossless, as `usize` has at most 64 bits on
/// every target.
pub(crate) fn wide(value: usize) -> u128 {
    value as u128
}

/// `value` back in `usize`, or [`Error::SizeOverflow`] naming it `what`.
fn to_usize(op: &'static str, what: &'static str, value: u128) -> Result<usize> {
    usize::try_from(value).map_err(|_| Error::SizeOverflow { op, what })
}

/// The product of `sizes` (0 if any is 0), or [`Error::SizeOverflow`] naming it `what`.
pub(crate) fn product(op: &'static str, what: &'static str, sizes: &[usize]) -> Result<usize> {
    if sizes.contains(&0) {
        return Ok(0);
    }
    sizes.iter().try_fold(1usize, |total, &size| total.checked_mul(size)).ok_or(Error::SizeOverflow { op, what })
}

/// The dimensions of a rank-4 shape, or why it is not one.
pub(crate) fn dims4(op: &'static str, what: &'static str, shape: &Shape) -> Result<[usize; 4]> {
    <[usize; 4]>::try_from(shape.dims()).map_err(|_| Error::unexpected_rank(op, what, RankRule::Exactly(4), shape))
}

/// The dimensions of a rank-3 shape, or why it is not one.
pub(crate) fn dims3(op: &'static str, what: &'static str, shape: &Shape) -> Result<[usize; 3]> {
    <[usize; 3]>::try_from(shape.dims()).map_err(|_| Error::unexpected_rank(op, what, RankRule::Exactly(3), shape))
}

/// `sizes` of 1 or more on each side, or an [`Error::InvalidValue`] naming `parameter`.
fn check_positive(op: &'static str, parameter: &'static str, sizes: [usize; 2]) -> Result<()> {
    if sizes.contains(&0) {
        return Err(Error::invalid_value(op, parameter, sizes, "1 or more on each side"));
    }
    Ok(())
}

/// PyTorch's rule for pooling and unfolding: the batch may be empty, the channels and the plane may not.
pub(crate) fn check_planes(op: &'static str, shape: &Shape) -> Result<[usize; 4]> {
    let dims = dims4(op, "an input [batch, channels, height, width]", shape)?;
    if dims[1..].contains(&0) {
        let expected = "an input with channels, rows and columns (only the batch may be empty)";
        return Err(Error::unexpected_shape(op, expected, shape));
    }
    Ok(dims)
}

/// Checks that `groups` splits the input channels `in_channels` (the weight's first or second dimension times the
/// groups) and the output channels.
fn check_groups(op: &'static str, groups: usize, in_channels: usize, out_channels: usize) -> Result<()> {
    if groups == 0 || !in_channels.is_multiple_of(groups) || !out_channels.is_multiple_of(groups) {
        return Err(Error::invalid_value(op, "groups", groups, "a divisor of the input and the output channels"));
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
    /// The rows of the unfolded input, `in channels * kh * kw`.
    pub(crate) rows: usize,
    /// The elements of the unfolded input, `batch * rows * out height * out width`. Read by candle, whose kernel
    /// allocates the columns itself.
    #[cfg_attr(not(feature = "candle"), allow(dead_code))]
    pub(crate) columns: usize,
}

/// Checks a 2-D convolution's operands against each other and its options (PyTorch's rules, under the name `op`).
/// The weight needs output channels; the input may have an empty batch or no channels, and only then an empty
/// plane (padded to fit the kernel). No input channels give zeros, the sum over none: PyTorch returns `[batch, 0,
/// ..]` there instead.
pub(crate) fn conv2d_geometry(
    op: &'static str,
    input: &Shape,
    weight: &Shape,
    options: &Conv2dOptions,
) -> Result<Conv2dGeometry> {
    let [n, c, h, w] = dims4(op, "an input [batch, channels, height, width]", input)?;
    let [o, c_per_group, kh, kw] = dims4(op, "a weight [out, in / groups, height, width]", weight)?;
    let groups = options.groups;
    check_groups(op, groups, c, o)?;
    // The weight's channels per group, times the groups, are the input's channels.
    if c_per_group.checked_mul(groups) != Some(c) {
        return Err(Error::shape_mismatch(op, input, weight));
    }
    if o == 0 {
        return Err(Error::unexpected_shape(op, "a weight with output channels", weight));
    }
    if n > 0 && c > 0 && (h == 0 || w == 0) {
        let expected = "an input with rows and columns, unless its batch or channels are empty";
        return Err(Error::unexpected_shape(op, expected, input));
    }
    let [oh, ow] = options.window([kh, kw]).output_size(op, [h, w])?;
    let rows = product(op, "the unfolded input's rows", &[c, kh, kw])?;
    let columns = product(op, "the unfolded input", &[n, rows, oh, ow])?;
    Ok(Conv2dGeometry { output: [n, o, oh, ow], weight: [o, c_per_group, kh, kw], rows, columns })
}

/// The output `[batch, out channels, height, width]` of a transposed 2-D convolution, by PyTorch's rules but for
/// one: the output padding must be below the stride (PyTorch also accepts one below the dilation). An empty batch
/// may have an empty plane, and then an empty output.
pub(crate) fn conv_transpose2d_geometry(input: &Shape, weight: &Shape, options: &Conv2dOptions) -> Result<[usize; 4]> {
    let op = "conv_transpose2d";
    let [n, c, h, w] = dims4(op, "an input [batch, channels, height, width]", input)?;
    let [c_weight, o_per_group, kh, kw] = dims4(op, "a weight [in, out / groups, height, width]", weight)?;
    if [c_weight, o_per_group, kh, kw].contains(&0) {
        return Err(Error::unexpected_shape(op, "a weight without empty dimensions", weight));
    }
    check_groups(op, options.groups, c_weight, o_per_group.saturating_mul(options.groups))?;
    // The weight's first dimension is the input's channels.
    if c_weight != c {
        return Err(Error::shape_mismatch(op, input, weight));
    }
    check_positive(op, "stride", options.stride)?;
    check_positive(op, "dilation", options.dilation)?;
    if (0..2).any(|side| options.output_padding[side] >= options.stride[side]) {
        return Err(Error::invalid_value(
            op,
            "output_padding",
            options.output_padding,
            "below the stride on each side",
        ));
    }
    if n > 0 && (h == 0 || w == 0) {
        return Err(Error::unexpected_shape(op, "an input with rows and columns, unless its batch is empty", input));
    }
    let window = options.window([kh, kw]);
    let no_output = || Error::invalid_value(op, "padding", options.padding, "small enough to leave an output");
    let (mut full, mut size) = ([0; 2], [0; 2]);
    for side in 0..2 {
        // The output before the padding is cut from each side: `(input - 1) * stride + reach + output padding`,
        // saturated (a saturated size is beyond `usize` either way); negative for an empty input whose stride
        // exceeds the rest, which PyTorch refuses.
        let stride = wide(options.stride[side]);
        let rest = window.reach(side) + wide(options.output_padding[side]);
        full[side] = match [h, w][side].checked_sub(1) {
            Some(last) => (wide(last) * stride).saturating_add(rest),
            None => rest.checked_sub(stride).ok_or_else(no_output)?,
        };
        // Only an empty batch may have an empty output.
        let least = u128::from(n > 0);
        let cut = 2 * wide(options.padding[side]);
        size[side] = full[side].checked_sub(cut).filter(|&size| size >= least).ok_or_else(no_output)?;
    }
    // What `fold2d` pads the output to, whose size bounds its tap positions.
    to_usize(op, "the padded output height", full[0])?;
    to_usize(op, "the padded output width", full[1])?;
    let o = o_per_group.checked_mul(options.groups).ok_or(Error::SizeOverflow { op, what: "the output channels" })?;
    Ok([n, o, to_usize(op, "the output height", size[0])?, to_usize(op, "the output width", size[1])?])
}
