//! The int and bool tensors of the ndarray backend: shared `i64` and `bool` arrays. The comparisons build bool
//! tensors natively; the other int and bool ops are the host defaults of the op list, which work on the row-major
//! values these give and take.

use ndarray::{ArcArrayD, ArrayD, IxDyn};

use super::tensor::{ndarray_error, row_major_values};
use crate::error::Result;
use crate::shape::Shape;

/// Declares the tensor of one element type: from and to row-major values, and its shape.
macro_rules! element_tensor {
    ($(#[$doc:meta])* $name:ident($element:ty), $from_vec:literal, $to_vec:literal) => {
        $(#[$doc])*
        #[derive(Clone, Debug)]
        pub struct $name {
            array: ArcArrayD<$element>,
        }

        impl $name {
            /// Wraps an array computed by an op.
            #[allow(dead_code)] // no native op builds an int tensor yet
            pub(super) fn new(array: ArrayD<$element>) -> Self {
                Self { array: array.into_shared() }
            }

            pub(super) fn from_vec(data: Vec<$element>, shape: &Shape) -> Result<Self> {
                shape.check_tensor_shape($from_vec)?;
                shape.check_data_len($from_vec, data.len())?;
                let array = ArrayD::from_shape_vec(IxDyn(shape.dims()), data)
                    .map_err(|error| ndarray_error($from_vec, error))?;
                Ok(Self { array: array.into_shared() })
            }

            /// The array, for the native ops that read it.
            #[allow(dead_code)] // no native op reads an int tensor yet
            pub(super) fn array(&self) -> &ArcArrayD<$element> {
                &self.array
            }

            /// The dimensions of the array, outermost first.
            pub fn shape(&self) -> Shape {
                Shape::new(self.array.shape())
            }

            /// The elements in row-major order; [`Error::OutOfMemory`](crate::Error::OutOfMemory) if the copy
            /// cannot be allocated.
            pub fn to_vec(&self) -> Result<Vec<$element>> {
                row_major_values($to_vec, &self.array)
            }
        }
    };
}

element_tensor! {
    /// An int (`i64`) tensor of the [`NdArray`](super::NdArray) backend.
    NdArrayIntTensor(i64), "int_from_vec", "int_to_vec"
}

element_tensor! {
    /// A bool tensor of the [`NdArray`](super::NdArray) backend.
    NdArrayBoolTensor(bool), "bool_from_vec", "bool_to_vec"
}
