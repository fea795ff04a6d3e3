//! `IntTensor<B>` and `BoolTensor<B>`: the handles of a backend's int (`i64`) and bool tensors, their ops, and their
//! conversions to float tensors.

use std::fmt;

use super::float::Tensor;
use crate::backend::Backend;
use crate::device::DeviceOf;
use crate::dtype::DType;
use crate::error::Result;
use crate::shape::Shape;

/// Declares a handle over one of a backend's tensor primitives, with what every kind has: from and to host values,
/// shape and device, moves.
macro_rules! tensor_handle {
    (
        $(#[$doc:meta])* $name:ident($primitive:ident, $element:ty),
        $from_vec:ident, $to_vec:ident, $shape:ident, $device:ident, $to_device:ident
    ) => {
        $(#[$doc])*
        pub struct $name<B: Backend> {
            primitive: B::$primitive,
        }

        impl<B: Backend> Clone for $name<B> {
            fn clone(&self) -> Self {
                Self { primitive: self.primitive.clone() }
            }
        }

        impl<B: Backend> fmt::Debug for $name<B> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.debug_struct(stringify!($name))
                    .field("backend", &B::name())
                    .field("shape", &self.shape())
                    .field("primitive", &self.primitive)
                    .finish()
            }
        }

        impl<B: Backend> $name<B> {
            /// Wraps a backend's own tensor.
            pub fn from_primitive(primitive: B::$primitive) -> Self {
                Self { primitive }
            }

            /// The backend's own tensor.
            pub fn primitive(&self) -> &B::$primitive {
                &self.primitive
            }

            /// Unwraps the backend's own tensor.
            pub fn into_primitive(self) -> B::$primitive {
                self.primitive
            }

            pub(crate) fn wrap(primitive: Result<B::$primitive>) -> Result<Self> {
                primitive.map(Self::from_primitive)
            }

            /// A tensor holding `data` (row-major) with the given shape.
            pub fn from_vec(
                data: Vec<$element>,
                shape: impl Into<Shape>,
                device: &(impl DeviceOf<B> + ?Sized),
            ) -> Result<Self> {
                Self::wrap(B::$from_vec(data, shape.into(), device.as_device()))
            }

            /// The elements in row-major order.
            pub fn to_vec(&self) -> Result<Vec<$element>> {
                B::$to_vec(&self.primitive)
            }

            /// The tensor's shape.
            pub fn shape(&self) -> Shape {
                B::$shape(&self.primitive)
            }

            /// The size of each dimension.
            pub fn dims(&self) -> Vec<usize> {
                self.shape().dims().to_vec()
            }

            /// The device the tensor lives on.
            pub fn device(&self) -> B::Device {
                B::$device(&self.primitive)
            }

            /// The same values on another device of `B`.
            pub fn to_device(&self, device: &(impl DeviceOf<B> + ?Sized)) -> Result<Self> {
                Self::wrap(B::$to_device(&self.primitive, device.as_device()))
            }
        }
    };
}

tensor_handle! {
    /// An int (`i64`) tensor of backend `B`: token ids, class labels, indices. Cloning is cheap. Arithmetic wraps
    /// on overflow; a division by zero is an `Err`.
    IntTensor(IntTensor, i64), int_from_vec, int_to_vec, int_shape, int_device, int_to_device
}

tensor_handle! {
    /// A bool tensor of backend `B`: masks and the results of comparisons. Cloning is cheap.
    BoolTensor(BoolTensor, bool), bool_from_vec, bool_to_vec, bool_shape, bool_device, bool_to_device
}

impl<B: Backend> IntTensor<B> {
    /// `start, start + 1, ..., end - 1` as a 1-D tensor; empty when `end <= start`.
    pub fn arange(start: i64, end: i64, device: &(impl DeviceOf<B> + ?Sized)) -> Result<Self> {
        Self::wrap(B::arange(start, end, device.as_device()))
    }

    /// `self + other`, element-wise, broadcasting.
    pub fn add(&self, other: &Self) -> Result<Self> {
        Self::wrap(B::int_add(&self.primitive, &other.primitive))
    }

    /// `self - other`, element-wise, broadcasting.
    pub fn sub(&self, other: &Self) -> Result<Self> {
        Self::wrap(B::int_sub(&self.primitive, &other.primitive))
    }

    /// `self * other`, element-wise, broadcasting.
    pub fn mul(&self, other: &Self) -> Result<Self> {
        Self::wrap(B::int_mul(&self.primitive, &other.primitive))
    }

    /// `self / other`, element-wise, broadcasting, rounding toward zero; a zero divisor is an `Err`.
    pub fn div(&self, other: &Self) -> Result<Self> {
        Self::wrap(B::int_div(&self.primitive, &other.primitive))
    }

    /// `self + scalar`, element-wise.
    pub fn add_scalar(&self, scalar: i64) -> Result<Self> {
        Self::wrap(B::int_add_scalar(&self.primitive, scalar))
    }

    /// `self * scalar`, element-wise.
    pub fn mul_scalar(&self, scalar: i64) -> Result<Self> {
        Self::wrap(B::int_mul_scalar(&self.primitive, scalar))
    }

    /// The sum of every element, shape `[1]`.
    pub fn sum(&self) -> Result<Self> {
        Self::wrap(B::int_sum(&self.primitive))
    }

    /// `self == other`, element-wise, broadcasting.
    pub fn eq(&self, other: &Self) -> Result<BoolTensor<B>> {
        BoolTensor::wrap(B::int_eq(&self.primitive, &other.primitive))
    }

    /// `self == scalar`, element-wise.
    pub fn eq_scalar(&self, scalar: i64) -> Result<BoolTensor<B>> {
        BoolTensor::wrap(B::int_eq_scalar(&self.primitive, scalar))
    }

    /// `self < other`, element-wise, broadcasting.
    pub fn lt(&self, other: &Self) -> Result<BoolTensor<B>> {
        BoolTensor::wrap(B::int_lt(&self.primitive, &other.primitive))
    }

    /// `self <= other`, element-wise, broadcasting.
    pub fn le(&self, other: &Self) -> Result<BoolTensor<B>> {
        BoolTensor::wrap(B::int_le(&self.primitive, &other.primitive))
    }

    /// `self > other`, element-wise, broadcasting.
    pub fn gt(&self, other: &Self) -> Result<BoolTensor<B>> {
        BoolTensor::wrap(B::int_gt(&self.primitive, &other.primitive))
    }

    /// `self >= other`, element-wise, broadcasting.
    pub fn ge(&self, other: &Self) -> Result<BoolTensor<B>> {
        BoolTensor::wrap(B::int_ge(&self.primitive, &other.primitive))
    }

    /// The same elements under another shape with the same element count.
    pub fn reshape(&self, shape: impl Into<Shape>) -> Result<Self> {
        Self::wrap(B::int_reshape(&self.primitive, shape.into()))
    }

    /// The values as a float tensor of `dtype`, each rounded to the nearest value it holds.
    pub fn float(&self, dtype: DType) -> Result<Tensor<B>> {
        Tensor::wrap(B::int_to_float(&self.primitive, dtype))
    }
}

impl<B: Backend> BoolTensor<B> {
    /// `self && other`, element-wise, broadcasting.
    pub fn and(&self, other: &Self) -> Result<Self> {
        Self::wrap(B::bool_and(&self.primitive, &other.primitive))
    }

    /// `self || other`, element-wise, broadcasting.
    pub fn or(&self, other: &Self) -> Result<Self> {
        Self::wrap(B::bool_or(&self.primitive, &other.primitive))
    }

    /// `!self`, element-wise.
    #[allow(clippy::should_implement_trait)] // fallible, so not `std::ops::Not`
    pub fn not(&self) -> Result<Self> {
        Self::wrap(B::bool_not(&self.primitive))
    }

    /// Whether any element holds, shape `[1]`.
    pub fn any(&self) -> Result<Self> {
        Self::wrap(B::bool_any(&self.primitive))
    }

    /// Whether every element holds, shape `[1]`.
    pub fn all(&self) -> Result<Self> {
        Self::wrap(B::bool_all(&self.primitive))
    }

    /// 1 where the tensor holds, else 0.
    pub fn int(&self) -> Result<IntTensor<B>> {
        IntTensor::wrap(B::bool_to_int(&self.primitive))
    }

    /// 1.0 where the tensor holds, else 0.0, as a float tensor of `dtype`.
    pub fn float(&self, dtype: DType) -> Result<Tensor<B>> {
        Tensor::wrap(B::bool_to_float(&self.primitive, dtype))
    }
}
