//! `#[derive(Module)]` on a tuple struct, a struct generic over its parts as well as its backend (declared in a
//! where clause, after another parameter), and a struct nesting both: every parameter visited, in order, under
//! its field's name or index.

use dispatch_core::backends::{NdArray, NdArrayDevice};
use dispatch_core::{Backend, DType, Tensor};
use dispatch_nn::layers::Linear;
use dispatch_nn::{Module, ModuleExt};

#[derive(Clone, Module)]
pub struct Pair<B: Backend>(Tensor<B>, #[module(skip)] usize, Tensor<B>);

#[derive(Clone, Module)]
pub struct Stack<M, B>
where
    B: Backend,
{
    parts: Vec<M>,
    head: Option<Linear<B>>,
}

#[derive(Clone, Module)]
pub struct Model<'a, B: Backend, const N: usize> {
    #[module(skip)]
    label: &'a str,
    #[module(skip)]
    sizes: [usize; N],
    pair: Pair<B>,
    stack: Stack<Pair<B>, B>,
}

fn main() {
    let device = NdArrayDevice;
    let tensor = |value: f64| Tensor::<NdArray>::full([2], value, DType::F32, &device).unwrap();
    let model = Model::<NdArray, 2> {
        label: "model",
        sizes: [2, 2],
        pair: Pair(tensor(1.0), 7, tensor(2.0)),
        stack: Stack {
            parts: vec![Pair(tensor(3.0), 8, tensor(4.0))],
            head: Some(Linear::new(2, 1, false, 0, DType::F32, &device).unwrap()),
        },
    };
    let names: Vec<String> = model.params().unwrap().into_iter().map(|(name, _)| name).collect();
    assert_eq!(names, ["pair.0", "pair.2", "stack.parts.0.0", "stack.parts.0.2", "stack.head.weight"]);
    let model = model.cast_to(DType::F64).unwrap();
    assert_eq!((model.label, model.sizes, model.pair.1, model.stack.parts[0].1), ("model", [2, 2], 7, 8));
    assert_eq!(model.stack.parts[0].2.to_f64_vec().unwrap(), [4.0, 4.0]);
}
