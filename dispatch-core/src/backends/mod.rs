//! The real backends, and the `Autodiff` decorator over any of them.
//!
//! Zero-sized dimensions behave the same on every backend: a dimension of 0 is allowed in a non-empty shape (`[0]`,
//! `[2, 0]`), and ops follow the usual math on the empty set. Element-wise ops, layout ops and `log_softmax` return
//! empty tensors; broadcasting treats 0 like any size other than 1 (it meets only 0 or 1); `matmul` with an inner
//! size of 0 gives zeros; `sum` of nothing is 0, `mean` of nothing is NaN (0 / 0); `argmax` along an empty axis is
//! an `UnexpectedShape`, since there is no index to return.

mod autodiff;
#[cfg(feature = "candle")]
mod candle;
#[cfg(feature = "ndarray")]
mod ndarray;

pub use self::autodiff::{Autodiff, AutodiffTensor, BaseBackend};
// For `__private01` only: the rules `Autodiff`'s impl is written over.
#[doc(hidden)]
pub use self::autodiff::rules as __autodiff_rules;
#[cfg(feature = "candle")]
pub use self::candle::{Candle, CandleDevice};
#[cfg(feature = "ndarray")]
pub use self::ndarray::{NdArray, NdArrayBoolTensor, NdArrayDevice, NdArrayIntTensor, NdArrayTensor};
