//! Indexing by int tensors. `index_select` and `gather` each pick entries, and `select_add` and `scatter_add` each
//! add entries back where the matching pick took them from: each op's backward is its partner, so one rule serves
//! both pairs.

use crate::backend::Backend;
use crate::backends::BaseBackend;
use crate::backends::autodiff::tensor::{AutodiffTensor, gradient_if};
use crate::error::Result;

/// A pick along an axis by int indices: `B::index_select` or `B::gather`.
type Pick<B> =
    fn(&<B as Backend>::FloatTensor, usize, &<B as Backend>::IntTensor) -> Result<<B as Backend>::FloatTensor>;

/// The adjoint of a [`Pick`]: `source` added into `tensor` where the pick takes from, `B::select_add` or
/// `B::scatter_add`.
type PutBack<B> = fn(
    &<B as Backend>::FloatTensor,
    usize,
    &<B as Backend>::IntTensor,
    &<B as Backend>::FloatTensor,
) -> Result<<B as Backend>::FloatTensor>;

/// d/d(tensor): the gradient put back, into zeros, where each entry was picked from; added up where an index repeats.
fn picked<B: BaseBackend>(
    op: &'static str,
    (pick, put_back): (Pick<B>, PutBack<B>),
    input: &AutodiffTensor<B>,
    axis: usize,
    indices: &B::IntTensor,
) -> Result<AutodiffTensor<B>> {
    let output = pick(input.primitive(), axis, indices)?;
    Ok(AutodiffTensor::unary(op, input, output, |_| {
        let (indices, shape, device) = (indices.clone(), B::shape(input.primitive()), B::device(input.primitive()));
        move |gradient| put_back(&B::full(shape.clone(), 0.0, B::dtype(&gradient), &device)?, axis, &indices, &gradient)
    }))
}

/// d/d(tensor) = the gradient; d/d(source) = the gradient picked at the indices.
fn added_back<B: BaseBackend>(
    op: &'static str,
    (pick, put_back): (Pick<B>, PutBack<B>),
    tensor: &AutodiffTensor<B>,
    axis: usize,
    indices: &B::IntTensor,
    source: &AutodiffTensor<B>,
) -> Result<AutodiffTensor<B>> {
    let output = put_back(tensor.primitive(), axis, indices, source.primitive())?;
    Ok(AutodiffTensor::binary(op, [tensor, source], output, |[tensor_tracked, source_tracked], _| {
        let indices = indices.clone();
        move |gradient| {
            Ok([
                gradient_if(tensor_tracked, || Ok(gradient.clone()))?,
                gradient_if(source_tracked, || pick(&gradient, axis, &indices))?,
            ])
        }
    }))
}

/// The gradient added back, into zeros, at the indices it was picked from.
pub fn index_select<B: BaseBackend>(
    tensor: &AutodiffTensor<B>,
    axis: usize,
    indices: &B::IntTensor,
) -> Result<AutodiffTensor<B>> {
    picked("index_select", (B::index_select, B::select_add), tensor, axis, indices)
}

/// The gradient to `tensor`, and picked at the indices for `source`.
pub fn select_add<B: BaseBackend>(
    tensor: &AutodiffTensor<B>,
    axis: usize,
    indices: &B::IntTensor,
    source: &AutodiffTensor<B>,
) -> Result<AutodiffTensor<B>> {
    added_back("select_add", (B::index_select, B::select_add), tensor, axis, indices, source)
}

/// The gradient scattered back, into zeros, where each entry was gathered from.
pub fn gather<B: BaseBackend>(
    tensor: &AutodiffTensor<B>,
    axis: usize,
    indices: &B::IntTensor,
) -> Result<AutodiffTensor<B>> {
    picked("gather", (B::gather, B::scatter_add), tensor, axis, indices)
}

/// The gradient to `tensor`, and gathered at the indices for `source`.
pub fn scatter_add<B: BaseBackend>(
    tensor: &AutodiffTensor<B>,
    axis: usize,
    indices: &B::IntTensor,
    source: &AutodiffTensor<B>,
) -> Result<AutodiffTensor<B>> {
    added_back("scatter_add", (B::gather, B::scatter_add), tensor, axis, indices, source)
}
