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

mod options;
mod sizes;
mod sliding;

pub use self::options::{Conv1dOptions, Conv2dOptions, Window2d};
use self::sizes::{check_positive, to_usize};
pub(crate) use self::sizes::{dims3, dims4, product, wide};
pub(crate) use self::sliding::{
    adaptive_cells, adaptive_pool2d_geometry, fold2d_geometry, pool2d_geometry, unfold2d_geometry,
};
use crate::error::{Error, Result};
use crate::shape::Shape;

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

/// The sizes of `conv2d_weight_gradient`: those of the convolution of `input` by a weight of `kernel` whose output
/// is `gradient`'s shape. The weight has the gradient's channels and the input's per group; every rule of `conv2d`
/// holds, and the convolution's output must be the gradient's shape.
pub(crate) fn conv2d_weight_geometry(
    input: &Shape,
    gradient: &Shape,
    [kh, kw]: [usize; 2],
    options: &Conv2dOptions,
) -> Result<Conv2dGeometry> {
    let op = "conv2d_weight_gradient";
    let [_, c, _, _] = dims4(op, "an input [batch, channels, height, width]", input)?;
    let [_, o, _, _] = dims4(op, "a gradient [batch, out channels, height, width]", gradient)?;
    if kh == 0 || kw == 0 {
        return Err(Error::invalid_value(op, "kernel", [kh, kw], "1 or more on each side"));
    }
    check_groups(op, options.groups, c, o)?;
    let weight = Shape::new([o, c / options.groups, kh, kw]);
    let geometry = conv2d_geometry(op, input, &weight, options)?;
    if geometry.output != gradient.dims() {
        return Err(Error::shape_mismatch(op, &Shape::new(geometry.output), gradient));
    }
    Ok(geometry)
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
