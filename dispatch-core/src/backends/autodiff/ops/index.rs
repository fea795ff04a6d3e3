//! Indexing by int tensors: what `index_select` picked gets the gradient back, added up where an index repeats.

use crate::backend::BaseBackend;
use crate::backends::autodiff::tensor::{AutodiffTensor, gradient_if};
use crate::error::Result;

/// d/d(tensor): the gradient's slices added back at the indices they were picked from.
pub(crate) fn index_select<B: BaseBackend>(
    input: &AutodiffTensor<B>,
    axis: usize,
    indices: &B::IntTensor,
) -> Result<AutodiffTensor<B>> {
    let output = B::index_select(input.primitive(), axis, indices)?;
    Ok(AutodiffTensor::unary("index_select", input, output, |_| {
        let (indices, shape, device) = (indices.clone(), B::shape(input.primitive()), B::device(input.primitive()));
        move |gradient| B::select_add(&B::full(shape.clone(), 0.0, &device)?, axis, &indices, &gradient)
    }))
}

/// d/d(tensor) = the gradient; d/d(source) = the gradient's slices at the indices.
pub(crate) fn select_add<B: BaseBackend>(
    tensor: &AutodiffTensor<B>,
    axis: usize,
    indices: &B::IntTensor,
    source: &AutodiffTensor<B>,
) -> Result<AutodiffTensor<B>> {
    let output = B::select_add(tensor.primitive(), axis, indices, source.primitive())?;
    Ok(AutodiffTensor::binary("select_add", [tensor, source], output, |[tensor_tracked, source_tracked], _| {
        let indices = indices.clone();
        move |gradient| {
            Ok([
                gradient_if(tensor_tracked, || Ok(gradient.clone()))?,
                gradient_if(source_tracked, || B::index_select(&gradient, axis, &indices))?,
            ])
        }
    }))
}

/// d/d(tensor): the gradient added back where each entry was gathered from.
pub(crate) fn gather<B: BaseBackend>(
    input: &AutodiffTensor<B>,
    axis: usize,
    indices: &B::IntTensor,
) -> Result<AutodiffTensor<B>> {
    let output = B::gather(input.primitive(), axis, indices)?;
    Ok(AutodiffTensor::unary("gather", input, output, |_| {
        let (indices, shape, device) = (indices.clone(), B::shape(input.primitive()), B::device(input.primitive()));
        move |gradient| B::scatter_add(&B::full(shape.clone(), 0.0, &device)?, axis, &indices, &gradient)
    }))
}

/// d/d(tensor) = the gradient; d/d(source) = the gradient gathered at the indices.
pub(crate) fn scatter_add<B: BaseBackend>(
    tensor: &AutodiffTensor<B>,
    axis: usize,
    indices: &B::IntTensor,
    source: &AutodiffTensor<B>,
) -> Result<AutodiffTensor<B>> {
    let output = B::scatter_add(tensor.primitive(), axis, indices, source.primitive())?;
    Ok(AutodiffTensor::binary("scatter_add", [tensor, source], output, |[tensor_tracked, source_tracked], _| {
        let indices = indices.clone();
        move |gradient| {
            Ok([
                gradient_if(tensor_tracked, || Ok(gradient.clone()))?,
                gradient_if(source_tracked, || B::gather(&gradient, axis, &indices))?,
            ])
        }
    }))
}
