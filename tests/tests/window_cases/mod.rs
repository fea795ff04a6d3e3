//! The calls of `window_sizes.rs`: one type per window op, holding its operands' dims and options, that runs the
//! op on any backend and knows what PyTorch answers (`reference`) and which values (`values`).

pub mod reference;
pub mod values;

use dispatch_core::backend::{Conv1dOptions, Conv2dOptions, Window2d};
use dispatch_core::{Backend, IntTensor, Result, Tensor};
use reference::Expected;

/// What a window op returns.
pub enum Output<B: Backend> {
    Float(Tensor<B>),
    Indices(IntTensor<B>),
}

/// One call of a window op, its expected outcome by PyTorch's rules, and its values by a direct loop.
pub trait WindowCall: std::fmt::Debug {
    /// The op's name, as its errors report it.
    fn op(&self) -> &'static str;
    /// The op that refuses the call for reason `why` (of `Expected::Refused`).
    fn refused_by(&self, _why: &str) -> &'static str {
        self.op()
    }
    /// The dims of each float operand.
    fn operands(&self) -> Vec<Vec<usize>>;
    fn call<B: Backend>(&self, operands: &[Tensor<B>]) -> Result<Output<B>>;
    fn expected(&self) -> Expected;
    /// The output's values (indices for `max_pool2d_indices`), given each operand's values and the output dims.
    fn reference(&self, operands: &[Vec<f32>], output: [usize; 4]) -> Vec<f64>;
    /// Whether the backward of a successful call is refused: only `max_pool2d` with a window of padding alone.
    fn backward_refused(&self) -> bool {
        false
    }
}

#[derive(Debug)]
pub struct Unfold {
    pub input: [usize; 4],
    pub window: Window2d,
}

impl WindowCall for Unfold {
    fn op(&self) -> &'static str {
        "unfold2d"
    }
    fn operands(&self) -> Vec<Vec<usize>> {
        vec![self.input.to_vec()]
    }
    fn call<B: Backend>(&self, operands: &[Tensor<B>]) -> Result<Output<B>> {
        operands[0].unfold2d(self.window, 0.5).map(Output::Float)
    }
    fn expected(&self) -> Expected {
        reference::unfold2d(self.input, &self.window)
    }
    fn reference(&self, operands: &[Vec<f32>], _: [usize; 4]) -> Vec<f64> {
        values::unfold2d_values(&operands[0], self.input, &self.window, 0.5)
    }
}

#[derive(Debug)]
pub struct Fold {
    pub input: [usize; 3],
    pub output: [usize; 2],
    pub window: Window2d,
}

impl WindowCall for Fold {
    fn op(&self) -> &'static str {
        "fold2d"
    }
    fn operands(&self) -> Vec<Vec<usize>> {
        vec![self.input.to_vec()]
    }
    fn call<B: Backend>(&self, operands: &[Tensor<B>]) -> Result<Output<B>> {
        operands[0].fold2d(self.output[0], self.output[1], self.window).map(Output::Float)
    }
    fn expected(&self) -> Expected {
        reference::fold2d(self.input, self.output, &self.window)
    }
    fn reference(&self, operands: &[Vec<f32>], _: [usize; 4]) -> Vec<f64> {
        values::fold2d_values(&operands[0], self.input, self.output, &self.window)
    }
}

#[derive(Debug)]
pub struct Conv2d {
    pub input: [usize; 4],
    pub weight: [usize; 4],
    pub options: Conv2dOptions,
}

impl WindowCall for Conv2d {
    fn op(&self) -> &'static str {
        "conv2d"
    }
    fn operands(&self) -> Vec<Vec<usize>> {
        vec![self.input.to_vec(), self.weight.to_vec()]
    }
    fn call<B: Backend>(&self, operands: &[Tensor<B>]) -> Result<Output<B>> {
        operands[0].conv2d(&operands[1], self.options).map(Output::Float)
    }
    fn expected(&self) -> Expected {
        reference::conv2d(self.input, self.weight, &self.options)
    }
    fn reference(&self, operands: &[Vec<f32>], _: [usize; 4]) -> Vec<f64> {
        values::conv2d_values(&operands[0], self.input, &operands[1], self.weight, &self.options)
    }
}

#[derive(Debug)]
pub struct Conv1d {
    pub input: [usize; 3],
    pub weight: [usize; 3],
    pub options: Conv1dOptions,
}

impl WindowCall for Conv1d {
    fn op(&self) -> &'static str {
        "conv1d"
    }
    fn operands(&self) -> Vec<Vec<usize>> {
        vec![self.input.to_vec(), self.weight.to_vec()]
    }
    fn call<B: Backend>(&self, operands: &[Tensor<B>]) -> Result<Output<B>> {
        operands[0].conv1d(&operands[1], self.options).map(Output::Float)
    }
    fn expected(&self) -> Expected {
        reference::conv1d(self.input, self.weight, &self.options)
    }
    fn reference(&self, operands: &[Vec<f32>], _: [usize; 4]) -> Vec<f64> {
        let ([n, c, length], [o, cg, kernel], options) = (self.input, self.weight, self.options);
        let options = Conv2dOptions {
            stride: [1, options.stride],
            padding: [0, options.padding],
            dilation: [1, options.dilation],
            groups: options.groups,
            output_padding: [0, 0],
        };
        values::conv2d_values(&operands[0], [n, c, 1, length], &operands[1], [o, cg, 1, kernel], &options)
    }
}

#[derive(Debug)]
pub struct ConvTranspose2d {
    pub input: [usize; 4],
    pub weight: [usize; 4],
    pub options: Conv2dOptions,
}

impl WindowCall for ConvTranspose2d {
    fn op(&self) -> &'static str {
        "conv_transpose2d"
    }
    fn operands(&self) -> Vec<Vec<usize>> {
        vec![self.input.to_vec(), self.weight.to_vec()]
    }
    fn call<B: Backend>(&self, operands: &[Tensor<B>]) -> Result<Output<B>> {
        operands[0].conv_transpose2d(&operands[1], self.options).map(Output::Float)
    }
    fn expected(&self) -> Expected {
        reference::conv_transpose2d(self.input, self.weight, &self.options)
    }
    fn reference(&self, operands: &[Vec<f32>], output: [usize; 4]) -> Vec<f64> {
        let (input, weight) = (&operands[0], &operands[1]);
        values::conv_transpose2d_values(input, self.input, weight, self.weight, &self.options, output)
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Pooling {
    Max,
    MaxIndices,
    Average,
}

#[derive(Debug)]
pub struct Pool {
    pub pooling: Pooling,
    pub input: [usize; 4],
    pub window: Window2d,
}

impl WindowCall for Pool {
    fn op(&self) -> &'static str {
        match self.pooling {
            Pooling::Max => "max_pool2d",
            Pooling::MaxIndices => "max_pool2d_indices",
            Pooling::Average => "avg_pool2d",
        }
    }
    /// `max_pool2d_with_indices` pools first: only a window without a maximum is refused by the indices.
    fn refused_by(&self, why: &str) -> &'static str {
        match self.pooling {
            Pooling::MaxIndices if why != reference::ONLY_PADDING => "max_pool2d",
            _ => self.op(),
        }
    }
    fn operands(&self) -> Vec<Vec<usize>> {
        vec![self.input.to_vec()]
    }
    fn call<B: Backend>(&self, operands: &[Tensor<B>]) -> Result<Output<B>> {
        match self.pooling {
            Pooling::Max => operands[0].max_pool2d(self.window).map(Output::Float),
            Pooling::MaxIndices => operands[0].max_pool2d_with_indices(self.window).map(|(_, at)| Output::Indices(at)),
            Pooling::Average => operands[0].avg_pool2d(self.window).map(Output::Float),
        }
    }
    fn expected(&self) -> Expected {
        reference::pool(self.input, &self.window, self.pooling == Pooling::MaxIndices)
    }
    fn reference(&self, operands: &[Vec<f32>], _: [usize; 4]) -> Vec<f64> {
        let maxima = || values::max_pool_values(&operands[0], self.input, &self.window).into_iter();
        match self.pooling {
            Pooling::Max => maxima().map(|(value, _)| value).collect(),
            Pooling::MaxIndices => maxima().map(|(_, at)| at.expect("refused if any window has none") as f64).collect(),
            Pooling::Average => values::avg_pool_values(&operands[0], self.input, &self.window),
        }
    }
    fn backward_refused(&self) -> bool {
        let [n, c, h, w] = self.input;
        let sides = [0, 1].map(|side| reference::Side::of(&self.window, [h, w], side));
        self.pooling == Pooling::Max && n * c > 0 && reference::some_window_is_padding(&sides)
    }
}

#[derive(Debug)]
pub struct AdaptiveAvgPool {
    pub input: [usize; 4],
    pub output: [usize; 2],
}

impl WindowCall for AdaptiveAvgPool {
    fn op(&self) -> &'static str {
        "adaptive_avg_pool2d"
    }
    fn operands(&self) -> Vec<Vec<usize>> {
        vec![self.input.to_vec()]
    }
    fn call<B: Backend>(&self, operands: &[Tensor<B>]) -> Result<Output<B>> {
        operands[0].adaptive_avg_pool2d(self.output).map(Output::Float)
    }
    fn expected(&self) -> Expected {
        reference::adaptive_avg_pool2d(self.input, self.output)
    }
    fn reference(&self, operands: &[Vec<f32>], _: [usize; 4]) -> Vec<f64> {
        values::adaptive_values(&operands[0], self.input, self.output)
    }
}
