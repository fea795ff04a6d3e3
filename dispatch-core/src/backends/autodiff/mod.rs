//! `Autodiff<B>`: reverse-mode automatic differentiation over any base backend `B`.
//!
//! Most ops run `B`'s op on the inner tensors, so their values are `B`'s. The convolutions and the average pools
//! are the exception: they are the defaults composed over `unfold2d`, `matmul` and `fold2d` (whose backward rules
//! are known) rather than a kernel `B` may have (candle's `conv2d`), so they agree with `B` to rounding, not bit for
//! bit. When an input depends on a tensor marked with `require_grad`, an op also records a graph node holding its
//! backward rule and what that rule needs. `backward` walks the nodes the loss depends on in reverse topological
//! order.

mod broadcast;
mod graph;
mod ops;
mod tensor;

use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;

pub use tensor::AutodiffTensor;

use crate::backend::{AutodiffBackend, Backend, BaseBackend, HostOp, Window2d};
use crate::dtype::DType;
use crate::error::{Error, Result};
use crate::gradients::{Gradients, TensorId};
use crate::shape::Shape;

/// A backend that records gradients, on the devices of the base backend `B` it wraps.
///
/// `Autodiff<B>` is not itself a [`BaseBackend`], so it cannot be wrapped again:
///
/// ```compile_fail,E0277
/// use dispatch_core::BaseBackend;
/// use dispatch_core::backends::Autodiff;
///
/// // error: `Autodiff<B>` cannot be wrapped in `Autodiff`: it is not a base backend
/// fn twice<B: BaseBackend>() -> Autodiff<Autodiff<B>> {
///     Autodiff::default()
/// }
/// ```
pub struct Autodiff<B: BaseBackend> {
    // `fn() -> B`: the marker owns no `B`, so it is Send, Sync, Copy whatever `B` is.
    backend: PhantomData<fn() -> B>,
}

// Written by hand: derives would ask more of `B` than `BaseBackend` does.
impl<B: BaseBackend> Clone for Autodiff<B> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<B: BaseBackend> Copy for Autodiff<B> {}

impl<B: BaseBackend> Default for Autodiff<B> {
    fn default() -> Self {
        Self { backend: PhantomData }
    }
}

impl<B: BaseBackend> fmt::Debug for Autodiff<B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Autodiff<{}>", B::name())
    }
}

impl<B: BaseBackend> Backend for Autodiff<B> {
    type Device = B::Device;
    type FloatTensor = AutodiffTensor<B>;
    // Int and bool tensors record no graph: they are `B`'s own.
    type IntTensor = B::IntTensor;
    type BoolTensor = B::BoolTensor;

    fn name() -> String {
        format!("autodiff<{}>", B::name())
    }

    // ---- creation and inspection: new tensors are untracked leaves ---------------------------------------------

    fn from_vec(data: Vec<f32>, shape: Shape, device: &Self::Device) -> Result<Self::FloatTensor> {
        B::from_vec(data, shape, device).map(AutodiffTensor::detached)
    }

    fn from_f64_vec(data: Vec<f64>, shape: Shape, dtype: DType, device: &Self::Device) -> Result<Self::FloatTensor> {
        B::from_f64_vec(data, shape, dtype, device).map(AutodiffTensor::detached)
    }

    fn full(shape: Shape, value: f64, dtype: DType, device: &Self::Device) -> Result<Self::FloatTensor> {
        B::full(shape, value, dtype, device).map(AutodiffTensor::detached)
    }

    fn to_vec(tensor: &Self::FloatTensor) -> Result<Vec<f32>> {
        B::to_vec(tensor.primitive())
    }

    fn to_f64_vec(tensor: &Self::FloatTensor) -> Result<Vec<f64>> {
        B::to_f64_vec(tensor.primitive())
    }

    fn dtype(tensor: &Self::FloatTensor) -> DType {
        B::dtype(tensor.primitive())
    }

    fn cast(tensor: &Self::FloatTensor, dtype: DType) -> Result<Self::FloatTensor> {
        ops::transfer::cast(tensor, dtype)
    }

    fn shape(tensor: &Self::FloatTensor) -> Shape {
        B::shape(tensor.primitive())
    }

    fn device(tensor: &Self::FloatTensor) -> Self::Device {
        B::device(tensor.primitive())
    }

    fn to_device(tensor: &Self::FloatTensor, device: &Self::Device) -> Result<Self::FloatTensor> {
        ops::transfer::to_device(tensor, device)
    }

    // Forwarded rather than left to the defaults, in case `B` overrides them.
    fn random_uniform(
        shape: Shape,
        low: f64,
        high: f64,
        seed: u64,
        dtype: DType,
        device: &Self::Device,
    ) -> Result<Self::FloatTensor> {
        B::random_uniform(shape, low, high, seed, dtype, device).map(AutodiffTensor::detached)
    }

    fn random_normal(
        shape: Shape,
        mean: f64,
        std: f64,
        seed: u64,
        dtype: DType,
        device: &Self::Device,
    ) -> Result<Self::FloatTensor> {
        B::random_normal(shape, mean, std, seed, dtype, device).map(AutodiffTensor::detached)
    }

    // ---- element-wise -------------------------------------------------------------------------------------------

    fn add(lhs: &Self::FloatTensor, rhs: &Self::FloatTensor) -> Result<Self::FloatTensor> {
        ops::binary::add(lhs, rhs)
    }

    fn sub(lhs: &Self::FloatTensor, rhs: &Self::FloatTensor) -> Result<Self::FloatTensor> {
        ops::binary::sub(lhs, rhs)
    }

    fn mul(lhs: &Self::FloatTensor, rhs: &Self::FloatTensor) -> Result<Self::FloatTensor> {
        ops::binary::mul(lhs, rhs)
    }

    fn div(lhs: &Self::FloatTensor, rhs: &Self::FloatTensor) -> Result<Self::FloatTensor> {
        ops::binary::div(lhs, rhs)
    }

    fn add_scalar(tensor: &Self::FloatTensor, scalar: f64) -> Result<Self::FloatTensor> {
        ops::scalar::add_scalar(tensor, scalar)
    }

    fn mul_scalar(tensor: &Self::FloatTensor, scalar: f64) -> Result<Self::FloatTensor> {
        ops::scalar::mul_scalar(tensor, scalar)
    }

    fn powf_scalar(tensor: &Self::FloatTensor, exponent: f64) -> Result<Self::FloatTensor> {
        ops::scalar::powf_scalar(tensor, exponent)
    }

    /// A step function: its gradient is zero almost everywhere, so the output records no graph.
    fn greater_scalar(tensor: &Self::FloatTensor, threshold: f64) -> Result<Self::FloatTensor> {
        B::greater_scalar(tensor.primitive(), threshold).map(AutodiffTensor::detached)
    }

    fn neg(tensor: &Self::FloatTensor) -> Result<Self::FloatTensor> {
        ops::unary::neg(tensor)
    }

    fn exp(tensor: &Self::FloatTensor) -> Result<Self::FloatTensor> {
        ops::unary::exp(tensor)
    }

    fn log(tensor: &Self::FloatTensor) -> Result<Self::FloatTensor> {
        ops::unary::log(tensor)
    }

    fn relu(tensor: &Self::FloatTensor) -> Result<Self::FloatTensor> {
        ops::unary::relu(tensor)
    }

    fn sigmoid(tensor: &Self::FloatTensor) -> Result<Self::FloatTensor> {
        ops::unary::sigmoid(tensor)
    }

    fn tanh(tensor: &Self::FloatTensor) -> Result<Self::FloatTensor> {
        ops::unary::tanh(tensor)
    }

    fn sqrt(tensor: &Self::FloatTensor) -> Result<Self::FloatTensor> {
        ops::unary::sqrt(tensor)
    }

    fn recip(tensor: &Self::FloatTensor) -> Result<Self::FloatTensor> {
        ops::unary::recip(tensor)
    }

    fn abs(tensor: &Self::FloatTensor) -> Result<Self::FloatTensor> {
        ops::unary::abs(tensor)
    }

    fn sin(tensor: &Self::FloatTensor) -> Result<Self::FloatTensor> {
        ops::unary::sin(tensor)
    }

    fn cos(tensor: &Self::FloatTensor) -> Result<Self::FloatTensor> {
        ops::unary::cos(tensor)
    }

    fn erf(tensor: &Self::FloatTensor) -> Result<Self::FloatTensor> {
        ops::unary::erf(tensor)
    }

    fn gelu(tensor: &Self::FloatTensor) -> Result<Self::FloatTensor> {
        ops::unary::gelu(tensor)
    }

    fn silu(tensor: &Self::FloatTensor) -> Result<Self::FloatTensor> {
        ops::unary::silu(tensor)
    }

    fn clamp(tensor: &Self::FloatTensor, min: f64, max: f64) -> Result<Self::FloatTensor> {
        ops::unary::clamp(tensor, min, max)
    }

    fn maximum(lhs: &Self::FloatTensor, rhs: &Self::FloatTensor) -> Result<Self::FloatTensor> {
        ops::binary::maximum(lhs, rhs)
    }

    fn minimum(lhs: &Self::FloatTensor, rhs: &Self::FloatTensor) -> Result<Self::FloatTensor> {
        ops::binary::minimum(lhs, rhs)
    }

    // ---- linear algebra and layout ------------------------------------------------------------------------------

    fn matmul(lhs: &Self::FloatTensor, rhs: &Self::FloatTensor) -> Result<Self::FloatTensor> {
        ops::matmul::matmul(lhs, rhs)
    }

    fn swap_dims(tensor: &Self::FloatTensor, dim0: usize, dim1: usize) -> Result<Self::FloatTensor> {
        ops::layout::swap_dims(tensor, dim0, dim1)
    }

    fn reshape(tensor: &Self::FloatTensor, shape: Shape) -> Result<Self::FloatTensor> {
        ops::layout::reshape(tensor, shape)
    }

    fn narrow(tensor: &Self::FloatTensor, axis: usize, start: usize, len: usize) -> Result<Self::FloatTensor> {
        ops::layout::narrow(tensor, axis, start, len)
    }

    fn cat(tensors: &[Self::FloatTensor], axis: usize) -> Result<Self::FloatTensor> {
        ops::layout::cat(tensors, axis)
    }

    fn permute(tensor: &Self::FloatTensor, axes: Vec<usize>) -> Result<Self::FloatTensor> {
        ops::layout::permute(tensor, axes)
    }

    fn unfold2d(tensor: &Self::FloatTensor, window: Window2d, pad_value: f64) -> Result<Self::FloatTensor> {
        ops::window::unfold2d(tensor, window, pad_value)
    }

    fn fold2d(tensor: &Self::FloatTensor, height: usize, width: usize, window: Window2d) -> Result<Self::FloatTensor> {
        ops::window::fold2d(tensor, height, width, window)
    }

    fn max_pool2d(input: &Self::FloatTensor, window: Window2d) -> Result<Self::FloatTensor> {
        ops::window::max_pool2d(input, window)
    }

    // Forwarded rather than left to the default, in case `B` overrides it.
    fn max_pool2d_indices(input: &Self::FloatTensor, window: Window2d) -> Result<B::IntTensor> {
        B::max_pool2d_indices(input.primitive(), window)
    }

    fn flip(tensor: &Self::FloatTensor, axes: Vec<usize>) -> Result<Self::FloatTensor> {
        ops::layout::flip(tensor, axes)
    }

    fn prod_dim(tensor: &Self::FloatTensor, axis: usize) -> Result<Self::FloatTensor> {
        ops::reduce::prod_dim(tensor, axis)
    }

    fn max_dim(tensor: &Self::FloatTensor, axis: usize) -> Result<Self::FloatTensor> {
        ops::reduce::max_dim(tensor, axis)
    }

    fn min_dim(tensor: &Self::FloatTensor, axis: usize) -> Result<Self::FloatTensor> {
        ops::reduce::min_dim(tensor, axis)
    }

    fn gather(tensor: &Self::FloatTensor, axis: usize, indices: &B::IntTensor) -> Result<Self::FloatTensor> {
        ops::index::picked("gather", (B::gather, B::scatter_add), tensor, axis, indices)
    }

    fn scatter_add(
        tensor: &Self::FloatTensor,
        axis: usize,
        indices: &B::IntTensor,
        source: &Self::FloatTensor,
    ) -> Result<Self::FloatTensor> {
        ops::index::added_back("scatter_add", (B::gather, B::scatter_add), tensor, axis, indices, source)
    }

    fn index_select(tensor: &Self::FloatTensor, axis: usize, indices: &B::IntTensor) -> Result<Self::FloatTensor> {
        ops::index::picked("index_select", (B::index_select, B::select_add), tensor, axis, indices)
    }

    fn select_add(
        tensor: &Self::FloatTensor,
        axis: usize,
        indices: &B::IntTensor,
        source: &Self::FloatTensor,
    ) -> Result<Self::FloatTensor> {
        ops::index::added_back("select_add", (B::index_select, B::select_add), tensor, axis, indices, source)
    }

    /// The float tensor is a new untracked leaf: indices carry no gradient.
    fn one_hot(indices: &B::IntTensor, classes: usize, dtype: DType) -> Result<Self::FloatTensor> {
        B::one_hot(indices, classes, dtype).map(AutodiffTensor::detached)
    }

    // ---- reductions ---------------------------------------------------------------------------------------------

    fn sum(tensor: &Self::FloatTensor) -> Result<Self::FloatTensor> {
        ops::reduce::sum(tensor)
    }

    fn mean(tensor: &Self::FloatTensor) -> Result<Self::FloatTensor> {
        ops::reduce::mean(tensor)
    }

    fn sum_dim(tensor: &Self::FloatTensor, axis: usize) -> Result<Self::FloatTensor> {
        ops::reduce::sum_dim(tensor, axis)
    }

    fn mean_dim(tensor: &Self::FloatTensor, axis: usize) -> Result<Self::FloatTensor> {
        ops::reduce::mean_dim(tensor, axis)
    }

    fn log_softmax(tensor: &Self::FloatTensor, axis: usize) -> Result<Self::FloatTensor> {
        ops::reduce::log_softmax(tensor, axis)
    }

    /// An index is not differentiable: the output records no graph.
    fn argmax(tensor: &Self::FloatTensor, axis: usize) -> Result<B::IntTensor> {
        B::argmax(tensor.primitive(), axis)
    }

    /// An index is not differentiable: the output is an int tensor.
    fn argmin(tensor: &Self::FloatTensor, axis: usize) -> Result<B::IntTensor> {
        B::argmin(tensor.primitive(), axis)
    }

    // ---- comparisons and masks: the outputs are bool tensors, which record no graph -----------------------

    fn eq(lhs: &Self::FloatTensor, rhs: &Self::FloatTensor) -> Result<B::BoolTensor> {
        B::eq(lhs.primitive(), rhs.primitive())
    }

    fn ne(lhs: &Self::FloatTensor, rhs: &Self::FloatTensor) -> Result<B::BoolTensor> {
        B::ne(lhs.primitive(), rhs.primitive())
    }

    fn lt(lhs: &Self::FloatTensor, rhs: &Self::FloatTensor) -> Result<B::BoolTensor> {
        B::lt(lhs.primitive(), rhs.primitive())
    }

    fn le(lhs: &Self::FloatTensor, rhs: &Self::FloatTensor) -> Result<B::BoolTensor> {
        B::le(lhs.primitive(), rhs.primitive())
    }

    fn gt(lhs: &Self::FloatTensor, rhs: &Self::FloatTensor) -> Result<B::BoolTensor> {
        B::gt(lhs.primitive(), rhs.primitive())
    }

    fn ge(lhs: &Self::FloatTensor, rhs: &Self::FloatTensor) -> Result<B::BoolTensor> {
        B::ge(lhs.primitive(), rhs.primitive())
    }

    fn eq_scalar(tensor: &Self::FloatTensor, scalar: f64) -> Result<B::BoolTensor> {
        B::eq_scalar(tensor.primitive(), scalar)
    }

    fn ne_scalar(tensor: &Self::FloatTensor, scalar: f64) -> Result<B::BoolTensor> {
        B::ne_scalar(tensor.primitive(), scalar)
    }

    fn lt_scalar(tensor: &Self::FloatTensor, scalar: f64) -> Result<B::BoolTensor> {
        B::lt_scalar(tensor.primitive(), scalar)
    }

    fn le_scalar(tensor: &Self::FloatTensor, scalar: f64) -> Result<B::BoolTensor> {
        B::le_scalar(tensor.primitive(), scalar)
    }

    fn gt_scalar(tensor: &Self::FloatTensor, scalar: f64) -> Result<B::BoolTensor> {
        B::gt_scalar(tensor.primitive(), scalar)
    }

    fn ge_scalar(tensor: &Self::FloatTensor, scalar: f64) -> Result<B::BoolTensor> {
        B::ge_scalar(tensor.primitive(), scalar)
    }

    fn mask_where(
        mask: &B::BoolTensor,
        on_true: &Self::FloatTensor,
        on_false: &Self::FloatTensor,
    ) -> Result<Self::FloatTensor> {
        ops::mask::mask_where(mask, on_true, on_false)
    }

    fn mask_fill(tensor: &Self::FloatTensor, mask: &B::BoolTensor, value: f64) -> Result<Self::FloatTensor> {
        ops::mask::mask_fill(tensor, mask, value)
    }

    // ---- int and bool tensors: `B`'s, forwarded so that its kernels run ----------------------------------------

    fn int_from_vec(data: Vec<i64>, shape: Shape, device: &Self::Device) -> Result<B::IntTensor> {
        B::int_from_vec(data, shape, device)
    }

    fn int_to_vec(tensor: &B::IntTensor) -> Result<Vec<i64>> {
        B::int_to_vec(tensor)
    }

    fn int_shape(tensor: &B::IntTensor) -> Shape {
        B::int_shape(tensor)
    }

    fn int_device(tensor: &B::IntTensor) -> Self::Device {
        B::int_device(tensor)
    }

    fn int_to_device(tensor: &B::IntTensor, device: &Self::Device) -> Result<B::IntTensor> {
        B::int_to_device(tensor, device)
    }

    fn arange(start: i64, end: i64, device: &Self::Device) -> Result<B::IntTensor> {
        B::arange(start, end, device)
    }

    fn int_add(lhs: &B::IntTensor, rhs: &B::IntTensor) -> Result<B::IntTensor> {
        B::int_add(lhs, rhs)
    }

    fn int_sub(lhs: &B::IntTensor, rhs: &B::IntTensor) -> Result<B::IntTensor> {
        B::int_sub(lhs, rhs)
    }

    fn int_mul(lhs: &B::IntTensor, rhs: &B::IntTensor) -> Result<B::IntTensor> {
        B::int_mul(lhs, rhs)
    }

    fn int_div(lhs: &B::IntTensor, rhs: &B::IntTensor) -> Result<B::IntTensor> {
        B::int_div(lhs, rhs)
    }

    fn int_add_scalar(tensor: &B::IntTensor, scalar: i64) -> Result<B::IntTensor> {
        B::int_add_scalar(tensor, scalar)
    }

    fn int_mul_scalar(tensor: &B::IntTensor, scalar: i64) -> Result<B::IntTensor> {
        B::int_mul_scalar(tensor, scalar)
    }

    fn int_sum(tensor: &B::IntTensor) -> Result<B::IntTensor> {
        B::int_sum(tensor)
    }

    fn int_eq(lhs: &B::IntTensor, rhs: &B::IntTensor) -> Result<B::BoolTensor> {
        B::int_eq(lhs, rhs)
    }

    fn int_eq_scalar(tensor: &B::IntTensor, scalar: i64) -> Result<B::BoolTensor> {
        B::int_eq_scalar(tensor, scalar)
    }

    fn int_lt(lhs: &B::IntTensor, rhs: &B::IntTensor) -> Result<B::BoolTensor> {
        B::int_lt(lhs, rhs)
    }

    fn int_le(lhs: &B::IntTensor, rhs: &B::IntTensor) -> Result<B::BoolTensor> {
        B::int_le(lhs, rhs)
    }

    fn int_gt(lhs: &B::IntTensor, rhs: &B::IntTensor) -> Result<B::BoolTensor> {
        B::int_gt(lhs, rhs)
    }

    fn int_ge(lhs: &B::IntTensor, rhs: &B::IntTensor) -> Result<B::BoolTensor> {
        B::int_ge(lhs, rhs)
    }

    fn int_reshape(tensor: &B::IntTensor, shape: Shape) -> Result<B::IntTensor> {
        B::int_reshape(tensor, shape)
    }

    /// The float tensor is a new untracked leaf: ints carry no gradient.
    fn int_to_float(tensor: &B::IntTensor, dtype: DType) -> Result<Self::FloatTensor> {
        B::int_to_float(tensor, dtype).map(AutodiffTensor::detached)
    }

    fn bool_from_vec(data: Vec<bool>, shape: Shape, device: &Self::Device) -> Result<B::BoolTensor> {
        B::bool_from_vec(data, shape, device)
    }

    fn bool_to_vec(tensor: &B::BoolTensor) -> Result<Vec<bool>> {
        B::bool_to_vec(tensor)
    }

    fn bool_shape(tensor: &B::BoolTensor) -> Shape {
        B::bool_shape(tensor)
    }

    fn bool_device(tensor: &B::BoolTensor) -> Self::Device {
        B::bool_device(tensor)
    }

    fn bool_to_device(tensor: &B::BoolTensor, device: &Self::Device) -> Result<B::BoolTensor> {
        B::bool_to_device(tensor, device)
    }

    fn bool_and(lhs: &B::BoolTensor, rhs: &B::BoolTensor) -> Result<B::BoolTensor> {
        B::bool_and(lhs, rhs)
    }

    fn bool_or(lhs: &B::BoolTensor, rhs: &B::BoolTensor) -> Result<B::BoolTensor> {
        B::bool_or(lhs, rhs)
    }

    fn bool_not(tensor: &B::BoolTensor) -> Result<B::BoolTensor> {
        B::bool_not(tensor)
    }

    fn bool_any(tensor: &B::BoolTensor) -> Result<B::BoolTensor> {
        B::bool_any(tensor)
    }

    fn bool_all(tensor: &B::BoolTensor) -> Result<B::BoolTensor> {
        B::bool_all(tensor)
    }

    fn bool_to_int(tensor: &B::BoolTensor) -> Result<B::IntTensor> {
        B::bool_to_int(tensor)
    }

    /// The float tensor is a new untracked leaf: bools carry no gradient.
    fn bool_to_float(tensor: &B::BoolTensor, dtype: DType) -> Result<Self::FloatTensor> {
        B::bool_to_float(tensor, dtype).map(AutodiffTensor::detached)
    }

    // ---- host ops -----------------------------------------------------------------------------------------------

    /// Records `op.backward`; the trait's default would run the op on the values and silently cut the graph.
    fn host_op(tensor: &Self::FloatTensor, op: Arc<dyn HostOp>) -> Result<Self::FloatTensor> {
        ops::transfer::host_op(tensor, op)
    }
}

impl<B: BaseBackend> AutodiffBackend for Autodiff<B> {
    fn require_grad(tensor: &Self::FloatTensor) -> Result<Self::FloatTensor> {
        Ok(tensor.to_leaf())
    }

    fn detach(tensor: &Self::FloatTensor) -> Result<Self::FloatTensor> {
        Ok(AutodiffTensor::detached(tensor.primitive().clone()))
    }

    fn tensor_id(tensor: &Self::FloatTensor) -> Option<TensorId> {
        tensor.id()
    }

    /// A loss that records no graph depends on no tracked leaf: its gradients are empty.
    fn backward(loss: &Self::FloatTensor) -> Result<Gradients<Self>> {
        let shape = B::shape(loss.primitive());
        if shape.num_elements() != 1 {
            return Err(Error::invalid(
                "backward",
                format!("needs a one-element loss, got shape {shape} ({} elements)", shape.num_elements()),
            ));
        }
        let mut gradients = Gradients::new();
        if let Some(root) = loss.node() {
            let seed = B::full(shape, 1.0, B::dtype(loss.primitive()), &B::device(loss.primitive()))?;
            for (id, gradient) in graph::backward(root, seed)? {
                gradients.insert(id, AutodiffTensor::detached(gradient));
            }
        }
        Ok(gradients)
    }
}
