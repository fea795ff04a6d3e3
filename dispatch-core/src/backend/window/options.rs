//! The options each window op takes, and the sizes a sliding window gives by PyTorch's rules.

use super::sizes::{check_positive, to_usize, wide};
use crate::error::{Error, Result};

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
    pub(super) fn reach(&self, side: usize) -> u128 {
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
