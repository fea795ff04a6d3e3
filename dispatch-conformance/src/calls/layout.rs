//! Linear algebra and layout: each moves entries somewhere else, so a wrong axis or order gives other values.

use dispatch_core::{Backend, Shape};

use super::outputs::Floats;
use crate::operands::Operands;

pub fn matmul<B: Backend>(o: &Operands<B>) -> Floats<B> {
    let calls = [
        B::matmul(&o.cube, &o.matrix),
        // A [2, 3] matrix times each of the batch's [3, 4] matrices.
        B::matmul(&o.pair, &o.cube),
        B::matmul(&o.cube, &o.cube),
    ];
    calls.into_iter().chain(o.mixing(|other| B::matmul(&o.pair, other))).collect()
}

pub fn swap_dims<B: Backend>(o: &Operands<B>) -> Floats<B> {
    vec![B::swap_dims(&o.cube, 0, 2), B::swap_dims(&o.cube, 2, 1), B::swap_dims(&o.cube, 0, 3)]
}

pub fn reshape<B: Backend>(o: &Operands<B>) -> Floats<B> {
    vec![B::reshape(&o.cube, Shape::new([4, 6])), B::reshape(&o.cube, Shape::new([5, 5]))]
}

pub fn narrow<B: Backend>(o: &Operands<B>) -> Floats<B> {
    vec![
        B::narrow(&o.cube, 2, 1, 2),
        B::narrow(&o.cube, 1, 2, 1),
        B::narrow(&o.cube, 0, 1, 1),
        B::narrow(&o.cube, 1, 2, 2),
        B::narrow(&o.cube, 3, 0, 1),
    ]
}

pub fn cat<B: Backend>(o: &Operands<B>) -> Floats<B> {
    let (cube, slab) = (o.cube.clone(), o.slab.clone());
    let calls = [
        B::cat(&[cube.clone(), slab.clone()], 1),
        B::cat(&[slab.clone(), cube.clone(), slab.clone()], 1),
        B::cat(&[cube.clone(), o.positive.clone()], 2),
        B::cat(&[cube.clone(), slab.clone()], 0),
        B::cat(&[], 0),
    ];
    calls.into_iter().chain(o.mixing(|other| B::cat(&[cube, other.clone()], 0))).collect()
}

pub fn permute<B: Backend>(o: &Operands<B>) -> Floats<B> {
    vec![
        B::permute(&o.cube, vec![2, 0, 1]),
        B::permute(&o.cube, vec![1, 2, 0]),
        B::permute(&o.cube, vec![0, 2, 1]),
        B::permute(&o.cube, vec![0, 0, 1]),
        B::permute(&o.cube, vec![0, 1]),
    ]
}

pub fn expand<B: Backend>(o: &Operands<B>) -> Floats<B> {
    vec![
        B::expand(&o.column, Shape::new([2, 3, 4])),
        B::expand(&o.thin, Shape::new([2, 4, 3])),
        B::expand(&o.column, Shape::new([2, 4, 4])),
    ]
}

pub fn flip<B: Backend>(o: &Operands<B>) -> Floats<B> {
    vec![
        B::flip(&o.cube, vec![0, 2]),
        B::flip(&o.cube, vec![1]),
        B::flip(&o.cube, vec![2, 1, 0]),
        B::flip(&o.cube, vec![3]),
    ]
}

pub fn slice_assign<B: Backend>(o: &Operands<B>) -> Floats<B> {
    vec![
        B::slice_assign(&o.cube, 1, 1, &o.slab),
        B::slice_assign(&o.cube, 1, 0, &o.slab),
        B::slice_assign(&o.cube, 1, 2, &o.slab),
        B::slice_assign(&o.cube, 0, 0, &o.slab),
    ]
}

pub fn repeat<B: Backend>(o: &Operands<B>) -> Floats<B> {
    vec![B::repeat(&o.cube, vec![2, 1, 3]), B::repeat(&o.pair, vec![3, 2]), B::repeat(&o.pair, vec![2])]
}

pub fn stack<B: Backend>(o: &Operands<B>) -> Floats<B> {
    let (cube, positive) = (o.cube.clone(), o.positive.clone());
    vec![
        B::stack(&[cube.clone(), positive.clone(), cube.clone()], 1),
        B::stack(&[cube.clone(), positive.clone()], 3),
        B::stack(&[cube.clone(), o.slab.clone()], 0),
        B::stack(&[cube, positive], 4),
    ]
}

pub fn unsqueeze<B: Backend>(o: &Operands<B>) -> Floats<B> {
    vec![B::unsqueeze(&o.cube, 1), B::unsqueeze(&o.cube, 3), B::unsqueeze(&o.cube, 4)]
}

pub fn squeeze<B: Backend>(o: &Operands<B>) -> Floats<B> {
    vec![B::squeeze(&o.thin, 1), B::squeeze(&o.thin, 0), B::squeeze(&o.thin, 3)]
}
