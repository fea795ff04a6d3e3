//! The ndarray tensor primitive: a shared, possibly strided array, so clones, transposes and narrows copy nothing.

use ndarray::{ArcArrayD, ArrayD, ArrayViewD, IxDyn, ShapeError};

use crate::error::{Error, Result};
use crate::memory;
use crate::shape::Shape;

/// A float tensor of the [`NdArray`](super::NdArray) backend.
///
/// It holds a reference-counted `ndarray` array of rank 1 or more. Layout ops (`swap_dims`, `narrow`) only change
/// strides and offsets, so the array is not always in standard (row-major) layout; every reader copes with that.
/// A narrowed tensor keeps its source's whole buffer alive.
#[derive(Clone, Debug)]
pub struct NdArrayTensor {
    array: ArcArrayD<f32>,
}

impl NdArrayTensor {
    /// Wraps an array computed by an op; ops only build arrays of rank 1 or more.
    pub(super) fn new(array: ArrayD<f32>) -> Self {
        Self { array: array.into_shared() }
    }

    pub(super) fn from_shared(array: ArcArrayD<f32>) -> Self {
        Self { array }
    }

    pub(super) fn from_vec(data: Vec<f32>, shape: &Shape) -> Result<Self> {
        shape.check_tensor_shape("from_vec")?;
        shape.check_data_len("from_vec", data.len())?;
        let array =
            ArrayD::from_shape_vec(IxDyn(shape.dims()), data).map_err(|error| ndarray_error("from_vec", error))?;
        Ok(Self::new(array))
    }

    pub(super) fn full(shape: &Shape, value: f32) -> Result<Self> {
        shape.check_tensor_shape("full")?;
        let data = memory::try_filled("full", shape.num_elements(), value)?;
        let array = ArrayD::from_shape_vec(IxDyn(shape.dims()), data).map_err(|error| ndarray_error("full", error))?;
        Ok(Self::new(array))
    }

    /// Wraps an `ndarray` array; arrays of rank 0 are rejected, since a scalar tensor has shape `[1]`.
    pub fn from_array(array: ArrayD<f32>) -> Result<Self> {
        if array.ndim() == 0 {
            return Err(Error::invalid("NdArrayTensor::from_array", "the array has no dimensions; a scalar is `[1]`"));
        }
        Ok(Self::new(array))
    }

    /// A read-only view of the elements, in whatever layout the tensor has.
    pub fn view(&self) -> ArrayViewD<'_, f32> {
        self.array.view()
    }

    pub(super) fn shared(&self) -> &ArcArrayD<f32> {
        &self.array
    }

    /// The dimensions of the array, outermost first.
    pub fn shape(&self) -> Shape {
        Shape::new(self.array.shape())
    }

    /// The elements in row-major order; [`Error::OutOfMemory`] if the copy cannot be allocated.
    pub fn to_vec(&self) -> Result<Vec<f32>> {
        row_major_values("to_vec", &self.array)
    }
}

/// The elements of any array in row-major order, copied fallibly: in one piece when the array is row-major already.
pub(super) fn row_major_values<T: Copy>(op: &'static str, array: &ArcArrayD<T>) -> Result<Vec<T>> {
    if let Some(row_major) = array.as_slice() {
        return memory::try_copy(op, row_major);
    }
    let mut values = memory::try_vec(op, array.len())?;
    values.extend(array.iter().copied());
    Ok(values)
}

/// Checks that an op's output of `elements` values can be allocated, before ndarray allocates it (and would abort
/// the process if it could not).
pub(super) fn check_output(op: &'static str, elements: usize) -> Result<()> {
    memory::check_room(op, elements, size_of::<f32>())
}

/// An error `ndarray` reported although our own checks passed.
pub(super) fn ndarray_error(op: &'static str, error: ShapeError) -> Error {
    Error::backend("ndarray", op, error)
}
