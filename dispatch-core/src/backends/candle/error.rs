//! Turning candle's failures into our typed errors.

use candle_core::Tensor;

use crate::dtype::DType;
use crate::error::{Error, Result};

/// A failure candle reported although our own checks passed.
///
/// With `RUST_BACKTRACE` set, candle wraps every error in `WithBacktrace`; the backtrace points into candle, not at
/// the caller, so it is dropped and the error itself becomes the source.
pub(super) fn candle_error(op: &'static str, error: candle_core::Error) -> Error {
    Error::backend("candle", op, without_backtrace(error))
}

fn without_backtrace(error: candle_core::Error) -> candle_core::Error {
    match error {
        candle_core::Error::WithBacktrace { inner, .. } => without_backtrace(*inner),
        other => other,
    }
}

/// `.or_backend(op)?` on a candle result.
pub(super) trait OrBackend<T> {
    fn or_backend(self, op: &'static str) -> Result<T>;
}

impl<T> OrBackend<T> for candle_core::Result<T> {
    fn or_backend(self, op: &'static str) -> Result<T> {
        self.map_err(|error| candle_error(op, error))
    }
}

/// The dtype of a float tensor, or an [`Error::UnsupportedDType`] naming a candle dtype that dispatch does not model
/// (a tensor handed in through `Tensor::from_primitive`, an int or bool tensor where a float one belongs).
pub(super) fn float_dtype(op: &'static str, tensor: &Tensor) -> Result<DType> {
    match tensor.dtype() {
        candle_core::DType::F32 => Ok(DType::F32),
        candle_core::DType::F64 => Ok(DType::F64),
        candle_core::DType::F16 => Ok(DType::F16),
        candle_core::DType::BF16 => Ok(DType::BF16),
        // candle's `DType` is non-exhaustive: every other dtype, today's integers and f8/f6/f4 formats and any that
        // a later candle adds, is an error that names it, never a float dtype by default.
        other => Err(Error::UnsupportedDType { op, backend: "candle", dtype: other.as_str() }),
    }
}

/// The dtype of a float tensor, for the infallible `Backend::dtype`: a tensor of a dtype dispatch does not model
/// reports `F32` here, and every op on it is the [`float_dtype`] error.
pub(super) fn dtype_of(tensor: &Tensor) -> DType {
    float_dtype("dtype", tensor).unwrap_or(DType::F32)
}

/// The candle dtype of `dtype`.
pub(super) fn candle_dtype(dtype: DType) -> candle_core::DType {
    match dtype {
        DType::F32 => candle_core::DType::F32,
        DType::F64 => candle_core::DType::F64,
        DType::F16 => candle_core::DType::F16,
        DType::BF16 => candle_core::DType::BF16,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn candle_failures_become_backend_errors_without_the_backtrace_wrapper() {
        let vector = Tensor::new(&[1f32, 2.0], &candle_core::Device::Cpu).unwrap();
        let wrapped = candle_core::Error::WithBacktrace {
            inner: Box::new(vector.matmul(&vector).unwrap_err()),
            backtrace: Box::new(std::backtrace::Backtrace::force_capture()),
        };
        let error = candle_error("matmul", wrapped);
        let Error::Backend { backend, op, source } = &error else { panic!("not a backend error: {error}") };
        assert_eq!((backend.as_str(), *op), ("candle", "matmul"));
        let source = source.downcast_ref::<candle_core::Error>().unwrap();
        assert!(!matches!(source, candle_core::Error::WithBacktrace { .. }), "{source:?}");
        assert!(source.to_string().starts_with("shape mismatch in matmul"), "{source}");
    }
}
