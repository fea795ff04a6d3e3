//! Window ops: candle's own convolution kernel where it takes the options, the composed default elsewhere.

use candle_core::Tensor;

use super::Candle;
use super::error::{OrBackend, check_operands};
use super::layout::shape_of;
use super::matmul::bf16_through_f32;
use super::memory::check_output;
use crate::backend::Conv2dOptions;
use crate::backend::defaults;
use crate::backend::window::{conv2d_geometry, dims4, product};
use crate::error::Result;

/// candle's own kernel where stride, padding and dilation are the same on both sides (as it takes them), else the
/// default: also for an empty input (an empty batch, no channels), and where candle's kernel would overflow. The
/// sizes are checked first: the padded input fits in `usize` (so candle's own size arithmetic cannot overflow), and
/// there is room for candle's unfolded input and the output.
pub(super) fn conv2d(input: &Tensor, weight: &Tensor, options: Conv2dOptions) -> Result<Tensor> {
    // Devices and dtypes first, as the default checks them: operands that mix dtypes and do not fit are the same
    // error on every backend.
    check_operands("conv2d", [input, weight])?;
    let geometry = conv2d_geometry("conv2d", &shape_of(input), &shape_of(weight), &options)?;
    let same = |pair: [usize; 2]| (pair[0] == pair[1]).then_some(pair[0]);
    let (Some(stride), Some(padding), Some(dilation)) =
        (same(options.stride), same(options.padding), same(options.dilation))
    else {
        return defaults::conv2d::<Candle>(input, weight, options);
    };
    // candle's kernel counts cell positions in `isize`, which a padded input past `isize::MAX` overflows (its size
    // fits in `usize`: the geometry checked it). (candle 0.9.2's CPU kernel also misread inputs whose channels,
    // height and width are equal, huggingface/candle#3404; 0.11 computes them right, and tests/tests/convolution.rs
    // keeps such cases.)
    let [_, _, h, w] = dims4("conv2d", "an input", &shape_of(input))?;
    let beyond_isize = [h, w].iter().any(|&side| side + 2 * padding > isize::MAX as usize);
    if input.elem_count() == 0 || beyond_isize {
        return defaults::conv2d::<Candle>(input, weight, options);
    }
    if let Some(output) = bf16_through_f32("conv2d", [input, weight], |[input, weight]| conv2d(input, weight, options))
    {
        return output;
    }
    check_output("conv2d", input.device(), geometry.columns, input.dtype())?;
    check_output("conv2d", input.device(), product("conv2d", "the output", &geometry.output)?, input.dtype())?;
    input.conv2d(weight, padding, stride, dilation, options.groups).or_backend("conv2d")
}
