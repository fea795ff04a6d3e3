//! The int_bool family of the op list. Int (`i64`) and bool tensors: their primitives, arithmetic, comparisons, logic
//! and conversions.

/// The entries of the int_bool family, appended to the list the chain has gathered so far.
#[doc(hidden)]
#[macro_export]
macro_rules! __ops_int_bool {
    ($next:tt $callback:tt $context:tt $($entries:tt)*) => {
        $crate::__ops_chain! { $next $callback $context $($entries)*
            /// An int tensor holding `data` in row-major order. `data.len()` must equal the shape's element count.
            fn int_from_vec(data: (::std::vec::Vec<i64>), shape: Shape, device: Device) -> Int, forwarded;
            /// The elements of an int tensor in row-major order.
            fn int_to_vec(tensor: Int) -> (::std::vec::Vec<i64>), forwarded;
            /// The shape of an int tensor.
            fn int_shape(tensor: Int) -> [Shape], forwarded;
            /// The device an int tensor lives on.
            fn int_device(tensor: Int) -> [Device], forwarded;
            /// The same int values on another device of this backend (of a derived enum: of any of its variants).
            fn int_to_device(tensor: Int, device: Device) -> Int => int_to_device, forwarded;
            /// `start, start + 1, ..., end - 1` as a 1-D int tensor; empty when `end <= start`.
            fn arange(start: i64, end: i64, device: Device) -> Int = arange, forwarded;
            /// `lhs + rhs`, element-wise, broadcasting; wraps on overflow.
            fn int_add(lhs: Int, rhs: Int) -> Int = int_add, forwarded;
            /// `lhs - rhs`, element-wise, broadcasting; wraps on overflow.
            fn int_sub(lhs: Int, rhs: Int) -> Int = int_sub, forwarded;
            /// `lhs * rhs`, element-wise, broadcasting; wraps on overflow.
            fn int_mul(lhs: Int, rhs: Int) -> Int = int_mul, forwarded;
            /// `lhs / rhs`, element-wise, broadcasting, rounding toward zero. A zero divisor (or `i64::MIN / -1`)
            /// is an `Err`, not a panic.
            fn int_div(lhs: Int, rhs: Int) -> Int = int_div, forwarded;
            /// `tensor + scalar`, element-wise; wraps on overflow.
            fn int_add_scalar(tensor: Int, scalar: i64) -> Int = int_add_scalar, forwarded;
            /// `tensor * scalar`, element-wise; wraps on overflow.
            fn int_mul_scalar(tensor: Int, scalar: i64) -> Int = int_mul_scalar, forwarded;
            /// The sum of every element, as an int tensor of shape `[1]`; wraps on overflow.
            fn int_sum(tensor: Int) -> Int = int_sum, forwarded;
            /// `lhs == rhs`, element-wise, broadcasting.
            fn int_eq(lhs: Int, rhs: Int) -> Bool = int_eq, forwarded;
            /// `tensor == scalar`, element-wise.
            fn int_eq_scalar(tensor: Int, scalar: i64) -> Bool = int_eq_scalar, forwarded;
            /// `lhs < rhs`, element-wise, broadcasting.
            fn int_lt(lhs: Int, rhs: Int) -> Bool = int_lt, forwarded;
            /// `lhs <= rhs`, element-wise, broadcasting.
            fn int_le(lhs: Int, rhs: Int) -> Bool = int_le, forwarded;
            /// `lhs > rhs`, element-wise, broadcasting.
            fn int_gt(lhs: Int, rhs: Int) -> Bool = int_gt, forwarded;
            /// `lhs >= rhs`, element-wise, broadcasting.
            fn int_ge(lhs: Int, rhs: Int) -> Bool = int_ge, forwarded;
            /// The same elements under another shape with the same element count.
            fn int_reshape(tensor: Int, shape: Shape) -> Int = int_reshape, forwarded;
            /// The values as a float tensor of `dtype`, each rounded to the nearest value it holds (beyond 2^24 for
            /// `F32`, 2^53 for `F64`).
            fn int_to_float(tensor: Int, dtype: ($crate::DType)) -> Float = int_to_float, forwarded;
            /// A bool tensor holding `data` in row-major order. `data.len()` must equal the shape's element count.
            fn bool_from_vec(data: (::std::vec::Vec<bool>), shape: Shape, device: Device) -> Bool, forwarded;
            /// The elements of a bool tensor in row-major order.
            fn bool_to_vec(tensor: Bool) -> (::std::vec::Vec<bool>), forwarded;
            /// The shape of a bool tensor.
            fn bool_shape(tensor: Bool) -> [Shape], forwarded;
            /// The device a bool tensor lives on.
            fn bool_device(tensor: Bool) -> [Device], forwarded;
            /// The same bool values on another device of this backend (of a derived enum: of any of its variants).
            fn bool_to_device(tensor: Bool, device: Device) -> Bool => bool_to_device, forwarded;
            /// `lhs && rhs`, element-wise, broadcasting.
            fn bool_and(lhs: Bool, rhs: Bool) -> Bool = bool_and, forwarded;
            /// `lhs || rhs`, element-wise, broadcasting.
            fn bool_or(lhs: Bool, rhs: Bool) -> Bool = bool_or, forwarded;
            /// `!tensor`, element-wise.
            fn bool_not(tensor: Bool) -> Bool = bool_not, forwarded;
            /// Whether any element holds, as a bool tensor of shape `[1]` (false for no elements).
            fn bool_any(tensor: Bool) -> Bool = bool_any, forwarded;
            /// Whether every element holds, as a bool tensor of shape `[1]` (true for no elements).
            fn bool_all(tensor: Bool) -> Bool = bool_all, forwarded;
            /// 1 where the tensor holds, else 0, as an int tensor.
            fn bool_to_int(tensor: Bool) -> Int = bool_to_int, forwarded;
            /// 1.0 where the tensor holds, else 0.0, as a float tensor of `dtype`.
            fn bool_to_float(tensor: Bool, dtype: ($crate::DType)) -> Float = bool_to_float, forwarded;
        }
    };
}
