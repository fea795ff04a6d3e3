//! Candidate convolution and pooling steps: windows that mostly fit the current `[n, c, h, w]` (or `[n, c, l]`),
//! with strides, padding, dilation and groups; a fault asks for a window or channel count that does not fit.

use super::{Draw, pick, scalar};
use crate::support::program::Step;
use dispatch_core::backend::{Conv1dOptions, Conv2dOptions, Window2d};

/// One side of a window over `size` entries: `(kernel, stride, padding, dilation)`, shrunk until it fits unless the
/// draw asks for a fault in the window (a kernel of 0, or one too large). The padding is at most half the kernel;
/// for a transposed convolution, below half (which keeps its output non-empty), and never a fault: it has no window
/// to fit.
fn side(size: usize, choice: usize, draw: &Draw, transposed: bool) -> (usize, usize, usize, usize) {
    let mut kernel = 1 + choice % 3;
    let stride = 1 + (choice / 3) % 2;
    let mut dilation = 1 + (choice / 6) % 2;
    let padding_cap = if transposed { (kernel - 1) / 2 } else { kernel / 2 };
    let padding = (choice / 12) % (padding_cap + 1);
    if window_fault(draw) && !transposed {
        return (if choice.is_multiple_of(2) { 0 } else { size + 2 * padding + 1 }, stride, padding, dilation);
    }
    if dilation * (kernel - 1) + 1 > size + 2 * padding {
        dilation = 1;
        kernel = kernel.min(size + 2 * padding).max(1);
    }
    (kernel, stride, padding, dilation)
}

fn window(height: usize, width: usize, draw: &Draw, transposed: bool) -> Window2d {
    let (kh, sh, ph, dh) = side(height, draw.b, draw, transposed);
    let (kw, sw, pw, dw) = side(width, draw.c / 3, draw, transposed);
    Window2d { kernel: [kh, kw], stride: [sh, sw], padding: [ph, pw], dilation: [dh, dw] }
}

/// A fault drawn for a window goes to the window half the time, and to the channels (or output padding) the
/// other half: one unfit argument per step.
fn window_fault(draw: &Draw) -> bool {
    draw.argument_fault() && draw.variant % 2 == 1
}

/// A group count that divides `channels`: one, all of them (depthwise), or two.
fn groups(channels: usize, choice: usize) -> usize {
    match choice % 3 {
        1 if channels > 0 => channels,
        2 if channels.is_multiple_of(2) && channels > 0 => 2,
        _ => 1,
    }
}

pub fn window_step(dims: &[usize], draw: &Draw) -> Step {
    match dims[..] {
        [n, c, h, w] => planar_step([n, c, h, w], draw),
        [_, c, length] => {
            if draw.a.is_multiple_of(2) || length == 0 {
                let options = conv_options(1, length, draw, false);
                let groups = groups(c, draw.a / 2);
                let per_group = c / groups + usize::from(draw.argument_fault() && !window_fault(draw));
                let weight = [groups * (1 + draw.b % 2), per_group, options.1];
                let options = Conv1dOptions {
                    stride: options.0.stride[1],
                    padding: options.0.padding[1],
                    dilation: options.0.dilation[1],
                    groups: options.0.groups,
                };
                Step::Conv1d { weight: draw.operand(weight.to_vec(), 41), options }
            } else {
                fold_step(dims, draw)
            }
        }
        _ if draw.argument_fault() => Step::MaxPool2d(Window2d::new([1, 1])),
        _ => Step::Unsqueeze(0),
    }
}

/// Convolution options over `[height, width]` and the kernel they go with.
fn conv_options(height: usize, width: usize, draw: &Draw, transposed: bool) -> (Conv2dOptions, usize, usize) {
    let window = window(height, width, draw, transposed);
    let options = Conv2dOptions {
        stride: window.stride,
        padding: window.padding,
        dilation: window.dilation,
        groups: 1,
        output_padding: [0, 0],
    };
    (options, window.kernel[0], window.kernel[1])
}

fn planar_step([n, c, h, w]: [usize; 4], draw: &Draw) -> Step {
    match draw.a % 8 {
        1 if draw.b % 3 == 2 => {
            let (mut options, kh, kw) = conv_options(h, w, draw, false);
            options.groups = groups(c, draw.a / 8);
            // The gradient of the convolution's output: its shape, or (a fault) one row more.
            let window = Window2d {
                kernel: [kh, kw],
                stride: options.stride,
                padding: options.padding,
                dilation: options.dilation,
            };
            let [oh, ow] = window.output_size("draw", [h, w]).unwrap_or([1, 1]);
            let extra = usize::from(draw.argument_fault() && !window_fault(draw));
            let gradient = vec![n, options.groups * (1 + draw.c % 2), oh + extra, ow];
            Step::Conv2dWeightGradient { gradient: draw.operand(gradient, 44), kernel: [kh, kw], options }
        }
        0 | 1 => {
            let (mut options, kh, kw) = conv_options(h, w, draw, false);
            options.groups = groups(c, draw.a / 8);
            let per_group = c / options.groups + usize::from(draw.argument_fault() && !window_fault(draw));
            let weight = vec![options.groups * (1 + draw.b % 2), per_group, kh, kw];
            Step::Conv2d { weight: draw.operand(weight, 42), options }
        }
        // FINDING (reported to the lead): conv_transpose2d of an input with an empty height or width fails in
        // fold2d (InvalidArgument naming `fold2d`, "columns ... do not come from a window") on every backend, where
        // (h - 1) * stride + dilation * (k - 1) + output_padding + 1 - 2 * padding is a positive output size and
        // the output is all zeros. Until the lead decides, no such input is drawn.
        2 if h == 0 || w == 0 => Step::MaxPool2d(window(h, w, draw, false)),
        2 => {
            let (mut options, kh, kw) = conv_options(h, w, draw, true);
            options.groups = groups(c, draw.a / 8);
            let extra = usize::from(draw.argument_fault() && !window_fault(draw));
            options.output_padding = [(draw.b / 5) % options.stride[0] + extra, (draw.c / 5) % options.stride[1]];
            let weight = vec![c, 1 + draw.b % 2, kh, kw];
            Step::ConvTranspose2d { weight: draw.operand(weight, 43), options }
        }
        3 => Step::MaxPool2d(window(h, w, draw, false)),
        4 => Step::MaxPool2dIndices(window(h, w, draw, false)),
        5 => Step::AvgPool2d(window(h, w, draw, false)),
        6 => {
            let size = [1 + draw.b % 3, 1 + draw.c % 3];
            Step::AdaptiveAvgPool2d(if draw.argument_fault() { [0, size[1]] } else { size })
        }
        _ => Step::Unfold2d { window: window(h, w, draw, false), pad: scalar(draw.c) },
    }
}

/// `fold2d` of `[n, rows, positions]` columns: a kernel whose taps divide the rows, and an image size whose
/// output grid (stride 1, no padding) has exactly `positions` cells.
fn fold_step(dims: &[usize], draw: &Draw) -> Step {
    let (rows, positions) = (dims[1], dims[2]);
    let kernels: Vec<[usize; 2]> =
        [[1, 1], [1, 2], [2, 1], [2, 2]].into_iter().filter(|[kh, kw]| rows % (kh * kw) == 0).collect();
    let kernel = pick(&kernels, draw.b);
    let divisors: Vec<usize> = (1..=positions).filter(|d| positions % d == 0).collect();
    let grid_rows = pick(&divisors, draw.c);
    let size = [grid_rows + kernel[0] - 1, positions / grid_rows + kernel[1] - 1];
    let size = if draw.argument_fault() { [size[0] + 1, size[1]] } else { size };
    Step::Fold2d { size, window: Window2d::new(kernel) }
}
