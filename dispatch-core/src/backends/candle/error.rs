//! Turning candle's failures into our typed errors.

use candle_core::Tensor;

use super::CandleDevice;
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

/// Checks that every tensor lives on the device of the first, which candle would otherwise report as a string.
pub(super) fn check_same_device<'a>(op: &'static str, tensors: impl IntoIterator<Item = &'a Tensor>) -> Result<()> {
    let mut tensors = tensors.into_iter();
    let Some(first) = tensors.next() else { return Ok(()) };
    match tensors.find(|tensor| !tensor.device().same_device(first.device())) {
        None => Ok(()),
        Some(other) => Err(Error::device_mismatch(
            op,
            CandleDevice::from_candle(first.device().clone()),
            CandleDevice::from_candle(other.device().clone()),
        )),
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
