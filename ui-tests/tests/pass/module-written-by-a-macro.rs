//! A module written by a `macro_rules!`, its name, fields and types passed in: the code generated at those tokens
//! (to report a field that is not a module there) still reaches `self` and its own arguments, which macro hygiene
//! would hide. Items named like what the expansion uses (`Result`, `Ok`, `str`, constants `name` and `mapper`)
//! change nothing: it reaches everything through `::dispatch_nn::__private01`, and its arguments have names no user
//! item has.

#![allow(non_upper_case_globals, dead_code)]

use dispatch_core::backends::{NdArray, NdArrayDevice};
use dispatch_core::{Backend, DType, Tensor};
use dispatch_nn::layers::LayerNorm;
use dispatch_nn::{Module, ModuleExt};

type Result = ();
struct Ok;
#[allow(non_camel_case_types)]
struct str;
const name: u8 = 0;
const mapper: u8 = 1;

macro_rules! module {
    ($model:ident, $norm:ident: $norm_type:ty, $width:ident: $width_type:ty) => {
        #[derive(Clone, Module)]
        pub struct $model<B: Backend> {
            $norm: $norm_type,
            #[module(skip)]
            $width: $width_type,
        }
    };
}

module!(Normed, norm: LayerNorm<B>, width: usize);

fn main() {
    let model = Normed::<NdArray> { norm: LayerNorm::new(3, DType::F32, &NdArrayDevice).unwrap(), width: 3 };
    let names: Vec<String> = model.params().unwrap().into_iter().map(|(param, _)| param).collect();
    assert_eq!(names, ["norm.gamma", "norm.beta"]);
    let _: Tensor<NdArray> = model.norm.gamma;
}
