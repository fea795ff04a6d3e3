//! `Autodiff`'s impl is written from the op list: every op marked `tracked` calls its rule, so an impl over rules
//! that lack one (here `exp`'s) does not compile, where a hand-written impl would have left `exp` to a default that
//! records no graph.
use dispatch_core::backends::{AutodiffTensor, NdArray, NdArrayDevice};
use dispatch_core::Backend;

/// Every backward rule of dispatch's `Autodiff` but `exp`'s.
mod rules {
    pub use dispatch_core::__private01::autodiff_rules::{
        cast, to_device, add, sub, mul, div, add_scalar, mul_scalar, powf_scalar, neg, log, relu,
        sigmoid, tanh, sqrt, recip, abs, sin, cos, erf, gelu, silu, clamp, maximum, minimum, matmul,
        swap_dims, reshape, narrow, cat, permute, flip, index_select, select_add, gather,
        scatter_add, sum, mean, sum_dim, mean_dim, log_softmax, softmax, cross_entropy, layer_norm,
        max_dim, min_dim, prod_dim, mask_where, mask_fill, unfold2d, fold2d, conv2d, conv2d_weight_gradient,
        conv_transpose2d, max_pool2d, avg_pool2d, host_op
    };
}

#[derive(Clone, Copy, Debug, Default)]
pub struct Traced;

impl Backend for Traced {
    type Device = NdArrayDevice;
    type FloatTensor = AutodiffTensor<NdArray>;
    type IntTensor = <NdArray as Backend>::IntTensor;
    type BoolTensor = <NdArray as Backend>::BoolTensor;

    fn name() -> String {
        "traced".to_owned()
    }

    dispatch_core::for_each_op! { __autodiff_methods { NdArray, [crate::rules] } }
}

fn main() {}
