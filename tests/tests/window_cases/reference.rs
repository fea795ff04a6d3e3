//! What PyTorch does with each window op, written here independently of dispatch: whether it refuses the
//! arguments, and the output's dims in `u128` (exact for any `usize` option). The rules are those PyTorch 2.x
//! applies, checked against it for the zero-size cases; where dispatch chose otherwise (documented on its ops) the
//! rule here says so.

use dispatch_core::backend::{Conv1dOptions, Conv2dOptions, Window2d};

/// The sizes up to which an op must succeed; past them, running out of room is a fair answer too.
pub const SMALL: u128 = 1 << 16;

/// What an op should answer.
#[derive(Clone, Debug, PartialEq)]
pub enum Expected {
    /// PyTorch refuses the arguments (why, for the failure message): an error of the op that names what it
    /// refuses (see `refusal_op` in `window_sizes.rs`), never one for the size of the result.
    Refused(&'static str),
    /// An output of `dims`. `big` when some size the op computes on the way (a padded input, an unfolded input,
    /// the output) exceeds [`SMALL`]: then an `Err` for the room it needs is acceptable too.
    Output { dims: Vec<u128>, big: bool },
}

impl Expected {
    fn output(dims: Vec<u128>, sizes: &[u128]) -> Self {
        let big = volume(&dims) > SMALL || sizes.iter().any(|&size| size > SMALL);
        Self::Output { dims, big }
    }
}

/// The product of the non-zero dims (what a tensor of those dims must be able to count), saturated.
pub fn volume(dims: &[u128]) -> u128 {
    dims.iter().filter(|&&dim| dim != 0).fold(1u128, |total, &dim| total.saturating_mul(dim))
}

pub fn wide(value: usize) -> u128 {
    value as u128
}

/// One side of a window over an input, in `u128`.
#[derive(Clone, Copy, Debug)]
pub struct Side {
    pub input: u128,
    pub kernel: u128,
    pub stride: u128,
    pub padding: u128,
    pub dilation: u128,
}

impl Side {
    pub fn of(window: &Window2d, input: [usize; 2], side: usize) -> Self {
        Side {
            input: wide(input[side]),
            kernel: wide(window.kernel[side]),
            stride: wide(window.stride[side]),
            padding: wide(window.padding[side]),
            dilation: wide(window.dilation[side]),
        }
    }

    pub fn padded(&self) -> u128 {
        self.input + 2 * self.padding
    }

    /// `floor((input + 2 * padding - dilation * (kernel - 1) - 1) / stride) + 1`; `None` where PyTorch refuses:
    /// a zero kernel, stride or dilation, or a result below 1.
    pub fn positions(&self) -> Option<u128> {
        if self.kernel == 0 || self.stride == 0 || self.dilation == 0 {
            return None;
        }
        let span = self.dilation * (self.kernel - 1) + 1;
        (span <= self.padded()).then(|| (self.padded() - span) / self.stride + 1)
    }

    /// The input cell that tap `tap` of the window at `position` reads, `None` in the padding.
    pub fn cell(&self, position: u128, tap: u128) -> Option<usize> {
        let padded_cell = position * self.stride + tap * self.dilation;
        let cell = padded_cell.checked_sub(self.padding)?;
        (cell < self.input).then_some(cell as usize)
    }

    /// The tap of the window at `position` that reads input cell `cell`, if one does.
    pub fn tap_reading(&self, position: u128, cell: usize) -> Option<u128> {
        let offset = (wide(cell) + self.padding).checked_sub(position * self.stride)?;
        (offset % self.dilation == 0 && offset / self.dilation < self.kernel).then(|| offset / self.dilation)
    }
}

/// Both sides' positions, or `None` if either is refused.
pub fn both_positions(sides: &[Side; 2]) -> Option<[u128; 2]> {
    Some([sides[0].positions()?, sides[1].positions()?])
}

pub fn sides(window: &Window2d, input: [usize; 2]) -> [Side; 2] {
    [Side::of(window, input, 0), Side::of(window, input, 1)]
}

pub fn unfold2d([n, c, h, w]: [usize; 4], window: &Window2d) -> Expected {
    let sides = sides(window, [h, w]);
    if c == 0 || h == 0 || w == 0 {
        return Expected::Refused("channels and the plane may not be empty");
    }
    let Some([oh, ow]) = both_positions(&sides) else { return Expected::Refused("the window does not fit") };
    let [kh, kw] = window.kernel.map(wide);
    let rows = wide(c).saturating_mul(kh).saturating_mul(kw);
    Expected::output(vec![wide(n), rows, oh.saturating_mul(ow)], &[sides[0].padded(), sides[1].padded()])
}

pub fn fold2d([n, rows, columns]: [usize; 3], [height, width]: [usize; 2], window: &Window2d) -> Expected {
    let sides = sides(window, [height, width]);
    if rows == 0 || columns == 0 || height == 0 || width == 0 {
        return Expected::Refused("rows, positions and the output plane may not be empty");
    }
    let Some([oh, ow]) = both_positions(&sides) else { return Expected::Refused("the window does not fit") };
    let taps = wide(window.kernel[0]) * wide(window.kernel[1]);
    if !wide(rows).is_multiple_of(taps) || oh.checked_mul(ow) != Some(wide(columns)) {
        return Expected::Refused("the columns do not come from this window");
    }
    let dims = vec![wide(n), wide(rows) / taps, wide(height), wide(width)];
    Expected::output(dims, &[sides[0].padded(), sides[1].padded()])
}

pub fn conv2d([n, c, h, w]: [usize; 4], [o, cg, kh, kw]: [usize; 4], options: &Conv2dOptions) -> Expected {
    let groups = options.groups;
    if groups == 0 || o % groups != 0 || wide(cg) * wide(groups) != wide(c) {
        return Expected::Refused("the groups do not split the channels");
    }
    if o == 0 {
        return Expected::Refused("the weight has no output channels");
    }
    if n > 0 && c > 0 && (h == 0 || w == 0) {
        return Expected::Refused("only an empty batch or no channels may have an empty plane");
    }
    let window =
        Window2d { kernel: [kh, kw], stride: options.stride, padding: options.padding, dilation: options.dilation };
    let sides = sides(&window, [h, w]);
    let Some([oh, ow]) = both_positions(&sides) else { return Expected::Refused("the window does not fit") };
    // No input channels: zeros of the weight's output channels (PyTorch answers `[n, 0, oh, ow]` there).
    let unfolded = volume(&[wide(n), wide(c), wide(kh), wide(kw), oh, ow]);
    Expected::output(vec![wide(n), wide(o), oh, ow], &[sides[0].padded(), sides[1].padded(), unfolded])
}

pub fn conv1d([n, c, length]: [usize; 3], [o, cg, kernel]: [usize; 3], options: &Conv1dOptions) -> Expected {
    let options = Conv2dOptions {
        stride: [1, options.stride],
        padding: [0, options.padding],
        dilation: [1, options.dilation],
        groups: options.groups,
        output_padding: [0, 0],
    };
    match conv2d([n, c, 1, length], [o, cg, 1, kernel], &options) {
        Expected::Output { dims, big } => Expected::Output { dims: vec![dims[0], dims[1], dims[3]], big },
        refused => refused,
    }
}

/// The cases' input and weight dims are small tensor dims, so `i128` holds every size here exactly.
pub fn conv_transpose2d([n, c, h, w]: [usize; 4], [cw, og, kh, kw]: [usize; 4], options: &Conv2dOptions) -> Expected {
    if [cw, og, kh, kw].contains(&0) {
        return Expected::Refused("the weight may not be empty");
    }
    let groups = options.groups;
    if groups == 0 || cw % groups != 0 || cw != c {
        return Expected::Refused("the groups do not split the channels");
    }
    if options.stride.contains(&0) || options.dilation.contains(&0) {
        return Expected::Refused("a zero stride or dilation");
    }
    // dispatch's one departure: PyTorch also accepts an output padding below the dilation.
    if (0..2).any(|side| options.output_padding[side] >= options.stride[side]) {
        return Expected::Refused("an output padding of the stride or more");
    }
    if n > 0 && (h == 0 || w == 0) {
        return Expected::Refused("only an empty batch may have an empty plane");
    }
    let mut sizes = [0u128; 2];
    let mut padded = [0u128; 2];
    for side in 0..2 {
        let [input, kernel] = [[h, w][side], [kh, kw][side]].map(|size| size as i128);
        let [stride, padding, dilation, extra] =
            [options.stride, options.padding, options.dilation, options.output_padding].map(|pair| pair[side] as i128);
        let full = (input - 1) * stride + dilation * (kernel - 1) + extra + 1;
        let size = full - 2 * padding;
        if size < i128::from(n > 0) {
            return Expected::Refused("the padding leaves no output");
        }
        (sizes[side], padded[side]) = (size as u128, full as u128);
    }
    let dims = vec![wide(n), wide(og) * wide(groups), sizes[0], sizes[1]];
    Expected::output(dims, &padded)
}

/// Why `max_pool2d_indices` refuses a window of padding alone.
pub const ONLY_PADDING: &str = "a window covers only padding: it has no maximum to point at";

/// `max_pool2d`, its indices (`indices`) or `avg_pool2d`.
pub fn pool([n, c, h, w]: [usize; 4], window: &Window2d, indices: bool) -> Expected {
    let sides = sides(window, [h, w]);
    if c == 0 || h == 0 || w == 0 {
        return Expected::Refused("channels and the plane may not be empty");
    }
    if (0..2).any(|side| window.padding[side] > window.kernel[side] / 2) {
        return Expected::Refused("padding of more than half the kernel");
    }
    let Some([oh, ow]) = both_positions(&sides) else { return Expected::Refused("the window does not fit") };
    let unfolded = volume(&[wide(n), wide(c), wide(window.kernel[0]), wide(window.kernel[1]), oh, ow]);
    let expected = Expected::output(vec![wide(n), wide(c), oh, ow], &[sides[0].padded(), sides[1].padded(), unfolded]);
    if indices && n > 0 && matches!(expected, Expected::Output { big: false, .. }) && some_window_is_padding(&sides) {
        return Expected::Refused(ONLY_PADDING);
    }
    expected
}

/// Whether a window at some position reads no input cell on one side (and so none at all).
pub fn some_window_is_padding(sides: &[Side; 2]) -> bool {
    sides.iter().any(|side| {
        let positions = side.positions().unwrap_or(0);
        (0..positions).any(|position| (0..side.input as usize).all(|cell| side.tap_reading(position, cell).is_none()))
    })
}

pub fn adaptive_avg_pool2d([n, c, h, w]: [usize; 4], [oh, ow]: [usize; 2]) -> Expected {
    if h == 0 || w == 0 {
        return Expected::Refused("the plane may not be empty");
    }
    Expected::output(vec![wide(n), wide(c), wide(oh), wide(ow)], &[wide(oh) * wide(h), wide(ow) * wide(w)])
}
