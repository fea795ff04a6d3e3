//! Reductions, over everything and along each axis, then along an axis that is not there.

use dispatch_core::{Backend, Result};

use super::outputs::{Floats, Ints};
use crate::operands::Operands;

type Whole<B> = fn(&<B as Backend>::FloatTensor) -> Result<<B as Backend>::FloatTensor>;
type AlongAxis<B> = fn(&<B as Backend>::FloatTensor, usize) -> Result<<B as Backend>::FloatTensor>;

/// A reduction of everything, of `cube` and of `fine`.
fn whole<B: Backend>(o: &Operands<B>, op: Whole<B>) -> Floats<B> {
    vec![op(&o.cube), op(&o.fine)]
}

/// A reduction along each of `cube`'s axes, along `ties`' last axis (which holds ties), and along axis 3.
fn along_axis<B: Backend>(o: &Operands<B>, op: AlongAxis<B>) -> Floats<B> {
    vec![op(&o.cube, 0), op(&o.cube, 1), op(&o.cube, 2), op(&o.ties, 1), op(&o.cube, 3)]
}

pub fn sum<B: Backend>(o: &Operands<B>) -> Floats<B> {
    whole(o, B::sum)
}

pub fn mean<B: Backend>(o: &Operands<B>) -> Floats<B> {
    whole(o, B::mean)
}

pub fn max<B: Backend>(o: &Operands<B>) -> Floats<B> {
    whole(o, B::max)
}

pub fn min<B: Backend>(o: &Operands<B>) -> Floats<B> {
    whole(o, B::min)
}

/// `cube`'s 24 entries multiply to about 1e-6 (below F16's normal range); `pair`'s six to -0.055.
pub fn prod<B: Backend>(o: &Operands<B>) -> Floats<B> {
    vec![B::prod(&o.cube), B::prod(&o.pair)]
}

pub fn sum_dim<B: Backend>(o: &Operands<B>) -> Floats<B> {
    along_axis(o, B::sum_dim)
}

pub fn mean_dim<B: Backend>(o: &Operands<B>) -> Floats<B> {
    along_axis(o, B::mean_dim)
}

pub fn log_softmax<B: Backend>(o: &Operands<B>) -> Floats<B> {
    along_axis(o, B::log_softmax)
}

pub fn softmax<B: Backend>(o: &Operands<B>) -> Floats<B> {
    along_axis(o, B::softmax)
}

/// Rows of `matrix` against targets repeated and out of order, rows of `ties` against targets that tie; then a
/// target outside the classes, logits of rank 3, and targets for another number of rows.
pub fn cross_entropy<B: Backend>(o: &Operands<B>) -> Floats<B> {
    vec![
        B::cross_entropy(&o.matrix, &o.picks),
        B::cross_entropy(&o.ties, &o.bad_picks),
        // Target 3 of 3 classes.
        B::cross_entropy(&o.pair, &o.bad_picks),
        B::cross_entropy(&o.cube, &o.picks),
        B::cross_entropy(&o.matrix, &o.bad_picks),
    ]
}

pub fn max_dim<B: Backend>(o: &Operands<B>) -> Floats<B> {
    along_axis(o, B::max_dim)
}

pub fn min_dim<B: Backend>(o: &Operands<B>) -> Floats<B> {
    along_axis(o, B::min_dim)
}

pub fn prod_dim<B: Backend>(o: &Operands<B>) -> Floats<B> {
    along_axis(o, B::prod_dim)
}

pub fn var_dim<B: Backend>(o: &Operands<B>) -> Floats<B> {
    vec![
        B::var_dim(&o.cube, 2, 1),
        B::var_dim(&o.cube, 1, 0),
        B::var_dim(&o.cube, 0, 1),
        B::var_dim(&o.ties, 1, 1),
        B::var_dim(&o.cube, 3, 0),
    ]
}

pub fn argmax<B: Backend>(o: &Operands<B>) -> Ints<B> {
    vec![
        B::argmax(&o.cube, 0),
        B::argmax(&o.cube, 1),
        B::argmax(&o.cube, 2),
        B::argmax(&o.ties, 1),
        B::argmax(&o.cube, 3),
    ]
}

pub fn argmin<B: Backend>(o: &Operands<B>) -> Ints<B> {
    vec![
        B::argmin(&o.cube, 0),
        B::argmin(&o.cube, 1),
        B::argmin(&o.cube, 2),
        B::argmin(&o.ties, 1),
        B::argmin(&o.cube, 3),
    ]
}

/// The gradient of a softmax along each of `positive`'s axes (any values stand for its output), given `fine` as the
/// gradient of that output; an axis that is not there, and a gradient of another shape, are errors.
pub fn softmax_backward<B: Backend>(o: &Operands<B>) -> Floats<B> {
    vec![
        B::softmax_backward(&o.positive, &o.fine, 0),
        B::softmax_backward(&o.positive, &o.fine, 1),
        B::softmax_backward(&o.positive, &o.fine, 2),
        B::softmax_backward(&o.positive, &o.fine, 3),
        B::softmax_backward(&o.positive, &o.row, 2),
    ]
}

/// The attention weights of `cube`'s queries over the keys of `fine` and of `slab` (fewer keys than queries), with and
/// without the causal mask, and over `positive` scaled by 2; a key of rank 1 and one whose leading dims differ are
/// errors.
pub fn attention_weights<B: Backend>(o: &Operands<B>) -> Floats<B> {
    vec![
        B::attention_weights(&o.cube, &o.fine, 0.5, false),
        B::attention_weights(&o.cube, &o.fine, 0.5, true),
        B::attention_weights(&o.cube, &o.slab, 0.5, true),
        B::attention_weights(&o.slab, &o.positive, 2.0, true),
        B::attention_weights(&o.cube, &o.row, 0.5, false),
        B::attention_weights(&o.cube, &o.partner, 0.5, true),
    ]
}

/// The gradient of `layer_norm` by `cube` and by `fine`, scaled by `row`, given the other as the output's gradient;
/// `[3, 1]` parameters and a gradient of another shape are errors.
pub fn layer_norm_backward<B: Backend>(o: &Operands<B>) -> Floats<B> {
    vec![
        B::layer_norm_backward(&o.cube, &o.row, &o.fine, 1e-5),
        B::layer_norm_backward(&o.fine, &o.row, &o.cube, 0.5),
        B::layer_norm_backward(&o.cube, &o.column, &o.fine, 1e-5),
        B::layer_norm_backward(&o.cube, &o.row, &o.row, 1e-5),
    ]
}

/// The gradients of `layer_norm` by its parameters at `cube` and at `fine`, given the other as the output's gradient;
/// a gradient of another shape is an error.
pub fn layer_norm_parameter_gradients<B: Backend>(o: &Operands<B>) -> Floats<B> {
    vec![
        B::layer_norm_parameter_gradients(&o.cube, &o.fine, 1e-5),
        B::layer_norm_parameter_gradients(&o.fine, &o.cube, 0.5),
        B::layer_norm_parameter_gradients(&o.cube, &o.row, 1e-5),
    ]
}

/// Over the last axis (4) of `cube` and of `fine`, scaled and shifted by `row`; parameters of another length than
/// the last axis are an error.
pub fn layer_norm<B: Backend>(o: &Operands<B>) -> Floats<B> {
    vec![
        B::layer_norm(&o.cube, &o.row, &o.row, 1e-5),
        B::layer_norm(&o.fine, &o.row, &o.row, 0.5),
        // `[3, 1]` parameters.
        B::layer_norm(&o.cube, &o.column, &o.row, 1e-5),
        // A last axis of 3.
        B::layer_norm(&o.pair, &o.row, &o.row, 1e-5),
    ]
}
