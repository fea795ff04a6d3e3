//! The creation family of the op list. Creation and inspection: float tensors from and to host values, their dtype,
//! shape and device, and moves between devices.

/// The entries of the creation family, appended to the list the chain has gathered so far.
#[doc(hidden)]
#[macro_export]
macro_rules! __ops_creation {
    ($next:tt $callback:tt $context:tt $($entries:tt)*) => {
        $crate::__ops_chain! { $next $callback $context $($entries)*
            /// An `F32` tensor holding `data` in row-major order. `data.len()` must equal the shape's element
            /// count. By default `from_f64_vec`.
            fn from_vec(data: (::std::vec::Vec<f32>), shape: Shape, device: Device) -> Float = from_vec, forwarded;
            /// A tensor of `dtype` holding `data` in row-major order, each value rounded to `dtype`.
            /// `data.len()` must equal the shape's element count.
            fn from_f64_vec(data: (::std::vec::Vec<f64>), shape: Shape, dtype: ($crate::DType), device: Device) -> Float, forwarded;
            /// A tensor of `dtype` filled with `value` (rounded to `dtype`).
            fn full(shape: Shape, value: f64, dtype: ($crate::DType), device: Device) -> Float, forwarded;
            /// Uniform samples in `[low, high)` of `dtype` from a seeded generator: the same seed gives the same
            /// values on every backend.
            fn random_uniform(shape: Shape, low: f64, high: f64, seed: u64, dtype: ($crate::DType), device: Device) -> Float = random_uniform, forwarded;
            /// Normal samples of `dtype` with the given mean and standard deviation, seeded like
            /// [`Backend::random_uniform`](crate::Backend::random_uniform).
            fn random_normal(shape: Shape, mean: f64, std: f64, seed: u64, dtype: ($crate::DType), device: Device) -> Float = random_normal, forwarded;
            /// The elements of an `F32` tensor in row-major order; a tensor of another dtype is an
            /// `Err(UnexpectedDType)`, never silently rounded (read any dtype exactly with `to_f64_vec`). By
            /// default `to_f64_vec`.
            fn to_vec(tensor: Float) -> (::std::vec::Vec<f32>) = to_vec, forwarded;
            /// The elements in row-major order, as `f64`: exact for every dtype.
            fn to_f64_vec(tensor: Float) -> (::std::vec::Vec<f64>), forwarded;
            /// The element type of the tensor.
            fn dtype(tensor: Float) -> [$crate::DType], forwarded;
            /// The values converted to `dtype`, each rounded to the nearest value it holds. Differentiable: the
            /// gradient is cast back to the input's dtype.
            fn cast(tensor: Float, dtype: ($crate::DType)) -> Float, tracked;
            /// The tensor's shape.
            fn shape(tensor: Float) -> [Shape], forwarded;
            /// The device the tensor lives on.
            fn device(tensor: Float) -> [Device], forwarded;
            /// The same values on another device of this backend. A derived enum's backend also moves tensors
            /// between its variants, through host memory.
            fn to_device(tensor: Float, device: Device) -> Float => to_device, tracked;
        }
    };
}
