//! Every op of the op list, in every dtype, on every backend of the project (candle, ndarray, and `Autodiff` over
//! each): the conformance suite (`dispatch-conformance`), one line per backend. Each line expands to one test per
//! check group (`ndarray::values_in_f16`, `candle::error_kinds`, `candle::gradients`, ...): every call of every op
//! against the reference in values, dtypes and error kinds, and every differentiable op's gradient against central
//! finite differences. The random programs of `cross_backend.rs` test the ops in depth; this test leaves none out.

use dispatch_core::backends::{Autodiff, Candle, CandleDevice, NdArray, NdArrayDevice};

dispatch_conformance::conformance_tests!(mod ndarray, NdArray, NdArrayDevice);
dispatch_conformance::conformance_tests!(mod candle, Candle, CandleDevice::cpu());
// `Autodiff<B>`'s gradients are what the runs of `B` above check.
dispatch_conformance::conformance_tests!(mod autodiff_ndarray, Autodiff<NdArray>, NdArrayDevice, without gradients);
dispatch_conformance::conformance_tests!(mod autodiff_candle, Autodiff<Candle>, CandleDevice::cpu(), without gradients);
