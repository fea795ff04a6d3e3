//! Moves of a float tensor: to another device or another dtype; the gradient goes back the other way.

use crate::backends::BaseBackend;
use crate::backends::autodiff::tensor::AutodiffTensor;
use crate::dtype::DType;
use crate::error::Result;

/// The gradient goes back to the device the input lives on.
pub fn to_device<B: BaseBackend>(input: &AutodiffTensor<B>, device: &B::Device) -> Result<AutodiffTensor<B>> {
    let output = B::to_device(input.primitive(), device)?;
    Ok(AutodiffTensor::unary("to_device", input, output, |_| {
        let source = B::device(input.primitive());
        move |gradient| B::to_device(&gradient, &source)
    }))
}

/// The gradient is cast back to the input's dtype.
pub fn cast<B: BaseBackend>(input: &AutodiffTensor<B>, dtype: DType) -> Result<AutodiffTensor<B>> {
    let output = B::cast(input.primitive(), dtype)?;
    Ok(AutodiffTensor::unary("cast", input, output, |_| {
        let source = B::dtype(input.primitive());
        move |gradient| B::cast(&gradient, source)
    }))
}
