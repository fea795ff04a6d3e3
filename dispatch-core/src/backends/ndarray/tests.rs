//! Internals of the ndarray backend: layout ops share storage instead of copying, and the device's names.

use ndarray::ArrayD;

use super::{NdArray, NdArrayDevice, NdArrayTensor};
use crate::backend::Backend;
use crate::error::{Error, RankRule};
use crate::shape::Shape;

fn matrix() -> NdArrayTensor {
    NdArray::from_vec((0..6).map(|i| i as f32).collect(), Shape::new([2, 3]), &NdArrayDevice).unwrap()
}

#[test]
fn swap_dims_narrow_and_row_major_reshape_share_storage() {
    let x = matrix();
    let base = x.view().unwrap().as_ptr();
    assert_eq!(NdArray::swap_dims(&x, 0, 1).unwrap().view().unwrap().as_ptr(), base);
    assert_eq!(NdArray::reshape(&x, Shape::new([3, 2])).unwrap().view().unwrap().as_ptr(), base);
    // Row 1 starts three elements into the same buffer.
    assert_eq!(NdArray::narrow(&x, 0, 1, 1).unwrap().view().unwrap().as_ptr(), base.wrapping_add(3));
}

#[test]
fn reshape_of_a_transposed_tensor_copies_into_row_major_order() {
    let transposed = NdArray::swap_dims(&matrix(), 0, 1).unwrap();
    assert!(!transposed.view().unwrap().is_standard_layout());
    let flat = NdArray::reshape(&transposed, Shape::new([6])).unwrap();
    assert!(flat.view().unwrap().is_standard_layout());
    assert_eq!(flat.to_vec().unwrap(), [0.0, 3.0, 1.0, 4.0, 2.0, 5.0]);
}

#[test]
fn flip_is_a_view_that_every_reader_takes() {
    let x = matrix();
    let flipped = NdArray::flip(&x, vec![0, 1, 1]).unwrap();
    // Axis 1 named twice is reversed once; the last element of the buffer comes first.
    assert_eq!(flipped.view().unwrap().as_ptr(), x.view().unwrap().as_ptr().wrapping_add(5));
    assert_eq!(flipped.to_vec().unwrap(), [5.0, 4.0, 3.0, 2.0, 1.0, 0.0]);
    // Negative strides through matrixmultiply: [[5, 4, 3], [2, 1, 0]] times its transpose.
    let product = NdArray::matmul(&flipped, &NdArray::swap_dims(&flipped, 0, 1).unwrap()).unwrap();
    assert_eq!(product.to_vec().unwrap(), [50.0, 14.0, 14.0, 5.0]);
    let flat = NdArray::reshape(&NdArray::flip(&x, vec![1]).unwrap(), Shape::new([6])).unwrap();
    assert_eq!(flat.to_vec().unwrap(), [2.0, 1.0, 0.0, 5.0, 4.0, 3.0]);
}

#[test]
fn from_array_rejects_rank_zero() {
    let scalar = NdArrayTensor::from_array(ArrayD::zeros(ndarray::IxDyn(&[])));
    assert!(matches!(scalar, Err(Error::UnexpectedRank { expected: RankRule::AtLeast(1), .. })), "{scalar:?}");
    let tensor = NdArrayTensor::from_array(ArrayD::zeros(ndarray::IxDyn(&[2, 1]))).unwrap();
    assert_eq!(tensor.shape(), Shape::new([2, 1]));
}

#[test]
fn the_device_is_named_cpu() {
    assert_eq!(NdArrayDevice.to_string(), "cpu");
    assert_eq!("cpu".parse::<NdArrayDevice>().unwrap(), NdArrayDevice);
    let error = "gpu".parse::<NdArrayDevice>().unwrap_err();
    assert_eq!(error.choices(), ["cpu"]);
    assert_eq!(NdArray::name(), "ndarray");
}
