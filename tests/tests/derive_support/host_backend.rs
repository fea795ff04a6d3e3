//! `HostBackend`: a small third-party backend on plain `Vec<f32>`, written here against the public contract only,
//! to show that a derived enum takes a backend from outside dispatch-core next to candle and ndarray, and that
//! `Autodiff` wraps it once it opts into `BaseBackend`.

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use dispatch_core::device::BackendDevice;
use dispatch_core::{Backend, BaseBackend, DType, DeviceOf, Error, ParseDeviceError, Result, Shape};

#[derive(Clone, Copy, Debug, Default)]
pub struct HostBackend;

/// Host memory: the only device of `HostBackend`, written `memory`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HostDevice;

impl fmt::Display for HostDevice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("memory")
    }
}

impl FromStr for HostDevice {
    type Err = ParseDeviceError;

    fn from_str(name: &str) -> Result<Self, ParseDeviceError> {
        match name {
            "memory" => Ok(HostDevice),
            _ => Err(ParseDeviceError::unknown(name, &["memory"])),
        }
    }
}

impl BackendDevice for HostDevice {
    fn available() -> Vec<Self> {
        vec![HostDevice]
    }
}

impl<B: Backend<Device = HostDevice>> DeviceOf<B> for HostDevice {
    fn as_device(&self) -> &HostDevice {
        self
    }
}

/// The tensor of `HostBackend`: row-major values in a shared `Vec`, so that a clone copies no data.
#[derive(Clone, Debug)]
pub struct VecTensor {
    data: Arc<Vec<f32>>,
    shape: Shape,
}

impl VecTensor {
    fn new(data: Vec<f32>, shape: Shape) -> Self {
        Self { data: Arc::new(data), shape }
    }

    /// Where the values start in memory: a test's witness that an op wrote over them.
    pub fn values_address(&self) -> usize {
        self.data.as_ptr() as usize
    }

    fn map(&self, f: impl Fn(f32) -> f32) -> Result<Self> {
        Ok(Self::new(self.data.iter().map(|&x| f(x)).collect(), self.shape.clone()))
    }

    /// Sizes of the dimensions before `axis`, of `axis`, and after it.
    fn split_at_axis(&self, op: &'static str, axis: usize) -> Result<(usize, usize, usize)> {
        self.shape.check_axis(op, axis)?;
        let dims = self.shape.dims();
        Ok((dims[..axis].iter().product(), dims[axis], dims[axis + 1..].iter().product()))
    }

    /// Applies `f` to every line along `axis`, which it turns into `out_len` values.
    fn along_axis(
        &self,
        op: &'static str,
        axis: usize,
        out_len: usize,
        f: impl Fn(&[f32]) -> Vec<f32>,
    ) -> Result<Self> {
        let (outer, len, inner) = self.split_at_axis(op, axis)?;
        let mut out = vec![0.0; outer * out_len * inner];
        let mut line = vec![0.0; len];
        for o in 0..outer {
            for k in 0..inner {
                for (i, value) in line.iter_mut().enumerate() {
                    *value = self.data[(o * len + i) * inner + k];
                }
                for (i, value) in f(&line).into_iter().enumerate() {
                    out[(o * out_len + i) * inner + k] = value;
                }
            }
        }
        Ok(Self::new(out, self.shape.with_dim("reduce", axis, out_len)?))
    }
}

/// The index into a tensor of shape `dims` that broadcasts to the row-major `index` of `out`.
fn broadcast_source(mut index: usize, out: &[usize], dims: &[usize]) -> usize {
    let (mut source, mut stride) = (0, 1);
    for (position, &size) in out.iter().enumerate().rev() {
        let coordinate = index % size;
        index /= size;
        let offset = out.len() - dims.len();
        if position >= offset && dims[position - offset] != 1 {
            source += coordinate * stride;
        }
        if position >= offset {
            stride *= dims[position - offset];
        }
    }
    source
}

fn zip(op: &'static str, lhs: &VecTensor, rhs: &VecTensor, f: impl Fn(f32, f32) -> f32) -> Result<VecTensor> {
    let shape = Shape::broadcast(op, &lhs.shape, &rhs.shape)?;
    let out = shape.dims();
    let data = (0..shape.num_elements())
        .map(|i| {
            f(
                lhs.data[broadcast_source(i, out, lhs.shape.dims())],
                rhs.data[broadcast_source(i, out, rhs.shape.dims())],
            )
        })
        .collect();
    Ok(VecTensor::new(data, shape))
}

/// `HostBackend` stores `f32` only: another dtype is an `Err`, as a backend that lacks one should answer.
fn only_f32(op: &'static str, dtype: DType) -> Result<()> {
    if dtype == DType::F32 {
        Ok(())
    } else {
        Err(Error::invalid(op, format!("the host backend stores f32, not {dtype}")))
    }
}

/// The int and bool tensors of `HostBackend`: row-major values and their shape. Their ops are dispatch-core's
/// host defaults.
#[derive(Clone, Debug)]
pub struct HostValues<T> {
    data: Arc<Vec<T>>,
    shape: Shape,
}

impl<T: Clone> HostValues<T> {
    fn new(op: &'static str, data: Vec<T>, shape: Shape) -> Result<Self> {
        shape.check_non_empty(op)?;
        shape.check_data_len(op, data.len())?;
        Ok(Self { data: Arc::new(data), shape })
    }
}

impl Backend for HostBackend {
    type Device = HostDevice;
    type FloatTensor = VecTensor;
    type IntTensor = HostValues<i64>;
    type BoolTensor = HostValues<bool>;

    fn name() -> String {
        "host".to_owned()
    }

    fn from_vec(data: Vec<f32>, shape: Shape, _: &HostDevice) -> Result<VecTensor> {
        shape.check_tensor_shape("from_vec")?;
        shape.check_data_len("from_vec", data.len())?;
        Ok(VecTensor::new(data, shape))
    }

    fn from_f64_vec(data: Vec<f64>, shape: Shape, dtype: DType, device: &HostDevice) -> Result<VecTensor> {
        only_f32("from_f64_vec", dtype)?;
        shape.check_tensor_shape("from_f64_vec")?;
        shape.check_data_len("from_f64_vec", data.len())?;
        Self::from_vec(data.into_iter().map(|x| x as f32).collect(), shape, device)
    }

    fn full(shape: Shape, value: f64, dtype: DType, _: &HostDevice) -> Result<VecTensor> {
        only_f32("full", dtype)?;
        shape.check_tensor_shape("full")?;
        let data = dispatch_core::memory::try_filled("full", shape.num_elements(), value as f32)?;
        Ok(VecTensor::new(data, shape))
    }

    fn to_vec(tensor: &VecTensor) -> Result<Vec<f32>> {
        Ok(tensor.data.to_vec())
    }

    fn to_f64_vec(tensor: &VecTensor) -> Result<Vec<f64>> {
        Ok(tensor.data.iter().map(|&x| f64::from(x)).collect())
    }

    fn dtype(_: &VecTensor) -> DType {
        DType::F32
    }

    fn cast(tensor: &VecTensor, dtype: DType) -> Result<VecTensor> {
        only_f32("cast", dtype)?;
        Ok(tensor.clone())
    }

    fn shape(tensor: &VecTensor) -> Shape {
        tensor.shape.clone()
    }

    fn device(_: &VecTensor) -> HostDevice {
        HostDevice
    }

    fn to_device(tensor: &VecTensor, _: &HostDevice) -> Result<VecTensor> {
        Ok(tensor.clone())
    }

    fn add(lhs: &VecTensor, rhs: &VecTensor) -> Result<VecTensor> {
        zip("add", lhs, rhs, |a, b| a + b)
    }

    /// The sums written over `lhs`'s values when nothing else holds them and `rhs` broadcasts into its shape: how
    /// a third-party backend takes up the op's offer.
    fn add_into(mut lhs: VecTensor, rhs: &VecTensor) -> Result<VecTensor> {
        let fits = Shape::broadcast("add", &lhs.shape, &rhs.shape)? == lhs.shape;
        let out = lhs.shape.dims().to_vec();
        match Arc::get_mut(&mut lhs.data) {
            Some(values) if fits => {
                for (index, value) in values.iter_mut().enumerate() {
                    *value += rhs.data[broadcast_source(index, &out, rhs.shape.dims())];
                }
                Ok(lhs)
            }
            _ => Self::add(&lhs, rhs),
        }
    }

    fn sub(lhs: &VecTensor, rhs: &VecTensor) -> Result<VecTensor> {
        zip("sub", lhs, rhs, |a, b| a - b)
    }

    fn mul(lhs: &VecTensor, rhs: &VecTensor) -> Result<VecTensor> {
        zip("mul", lhs, rhs, |a, b| a * b)
    }

    fn div(lhs: &VecTensor, rhs: &VecTensor) -> Result<VecTensor> {
        zip("div", lhs, rhs, |a, b| a / b)
    }

    // Scalars are rounded once to f32, the one dtype this backend holds.
    fn add_scalar(tensor: &VecTensor, scalar: f64) -> Result<VecTensor> {
        let scalar = scalar as f32;
        tensor.map(|x| x + scalar)
    }

    fn mul_scalar(tensor: &VecTensor, scalar: f64) -> Result<VecTensor> {
        let scalar = scalar as f32;
        tensor.map(|x| x * scalar)
    }

    fn powf_scalar(tensor: &VecTensor, exponent: f64) -> Result<VecTensor> {
        let exponent = exponent as f32;
        tensor.map(|x| x.powf(exponent))
    }

    fn neg(tensor: &VecTensor) -> Result<VecTensor> {
        tensor.map(|x| -x)
    }

    fn exp(tensor: &VecTensor) -> Result<VecTensor> {
        tensor.map(f32::exp)
    }

    fn log(tensor: &VecTensor) -> Result<VecTensor> {
        tensor.map(f32::ln)
    }

    fn relu(tensor: &VecTensor) -> Result<VecTensor> {
        tensor.map(|x| x.max(0.0))
    }

    fn sigmoid(tensor: &VecTensor) -> Result<VecTensor> {
        tensor.map(|x| 1.0 / (1.0 + (-x).exp()))
    }

    fn tanh(tensor: &VecTensor) -> Result<VecTensor> {
        tensor.map(f32::tanh)
    }

    fn matmul(lhs: &VecTensor, rhs: &VecTensor) -> Result<VecTensor> {
        let shape = Shape::matmul(&lhs.shape, &rhs.shape)?;
        let (l, r, out) = (lhs.shape.dims(), rhs.shape.dims(), shape.dims());
        let (m, k, n) = (l[l.len() - 2], l[l.len() - 1], r[r.len() - 1]);
        let batch = &out[..out.len() - 2];
        let mut data = dispatch_core::memory::try_filled("matmul", shape.num_elements(), 0.0)?;
        for b in 0..batch.iter().product() {
            // Each operand's own batch, numpy's broadcasting of the dimensions in front.
            let (lb, rb) = (broadcast_batch(b, batch, &l[..l.len() - 2]), broadcast_batch(b, batch, &r[..r.len() - 2]));
            for i in 0..m {
                for j in 0..n {
                    data[(b * m + i) * n + j] =
                        (0..k).map(|p| lhs.data[(lb * m + i) * k + p] * rhs.data[(rb * k + p) * n + j]).sum();
                }
            }
        }
        Ok(VecTensor::new(data, shape))
    }

    fn swap_dims(tensor: &VecTensor, dim0: usize, dim1: usize) -> Result<VecTensor> {
        let shape = tensor.shape.swap_dims("swap_dims", dim0, dim1)?;
        let (dims, out_dims) = (tensor.shape.dims(), shape.dims());
        let mut strides = vec![1; dims.len()];
        for axis in (0..dims.len().saturating_sub(1)).rev() {
            strides[axis] = strides[axis + 1] * dims[axis + 1];
        }
        strides.swap(dim0, dim1);
        let data = (0..shape.num_elements())
            .map(|mut index| {
                let mut source = 0;
                for axis in (0..out_dims.len()).rev() {
                    source += (index % out_dims[axis]) * strides[axis];
                    index /= out_dims[axis];
                }
                tensor.data[source]
            })
            .collect();
        Ok(VecTensor::new(data, shape))
    }

    fn reshape(tensor: &VecTensor, shape: Shape) -> Result<VecTensor> {
        tensor.shape.check_reshape(&shape)?;
        Ok(VecTensor { data: Arc::clone(&tensor.data), shape })
    }

    fn narrow(tensor: &VecTensor, axis: usize, start: usize, len: usize) -> Result<VecTensor> {
        tensor.shape.check_narrow(axis, start, len)?;
        tensor.along_axis("narrow", axis, len, |line| line[start..start + len].to_vec())
    }

    fn cat(tensors: &[VecTensor], axis: usize) -> Result<VecTensor> {
        let shapes: Vec<Shape> = tensors.iter().map(|tensor| tensor.shape.clone()).collect();
        let shape = Shape::concat(&shapes, axis)?;
        let outer: usize = shape.dims()[..axis].iter().product();
        let mut data = Vec::with_capacity(shape.num_elements());
        for o in 0..outer {
            for tensor in tensors {
                let block = tensor.data.len() / outer;
                data.extend_from_slice(&tensor.data[o * block..(o + 1) * block]);
            }
        }
        Ok(VecTensor::new(data, shape))
    }

    fn sum(tensor: &VecTensor) -> Result<VecTensor> {
        Ok(VecTensor::new(vec![tensor.data.iter().sum()], Shape::new([1])))
    }

    fn mean(tensor: &VecTensor) -> Result<VecTensor> {
        Ok(VecTensor::new(vec![tensor.data.iter().sum::<f32>() / tensor.data.len() as f32], Shape::new([1])))
    }

    fn sum_dim(tensor: &VecTensor, axis: usize) -> Result<VecTensor> {
        tensor.along_axis("sum_dim", axis, 1, |line| vec![line.iter().sum()])
    }

    fn mean_dim(tensor: &VecTensor, axis: usize) -> Result<VecTensor> {
        tensor.along_axis("mean_dim", axis, 1, |line| vec![line.iter().sum::<f32>() / line.len() as f32])
    }

    fn log_softmax(tensor: &VecTensor, axis: usize) -> Result<VecTensor> {
        let len = tensor.shape.dims().get(axis).copied().unwrap_or(0);
        tensor.along_axis("log_softmax", axis, len, |line| {
            let max = line.iter().copied().fold(f32::NEG_INFINITY, f32::max);
            let log_sum = line.iter().map(|&x| (x - max).exp()).sum::<f32>().ln() + max;
            line.iter().map(|&x| x - log_sum).collect()
        })
    }

    fn argmax(tensor: &VecTensor, axis: usize) -> Result<HostValues<i64>> {
        let indices = tensor.along_axis("argmax", axis, 1, |line| {
            let mut best = 0;
            for (i, &x) in line.iter().enumerate() {
                if x > line[best] {
                    best = i;
                }
            }
            vec![best as f32]
        })?;
        HostValues::new("argmax", indices.data.iter().map(|&index| index as i64).collect(), indices.shape)
    }

    fn int_from_vec(data: Vec<i64>, shape: Shape, _: &HostDevice) -> Result<HostValues<i64>> {
        HostValues::new("int_from_vec", data, shape)
    }

    fn int_to_vec(tensor: &HostValues<i64>) -> Result<Vec<i64>> {
        Ok(tensor.data.to_vec())
    }

    fn int_shape(tensor: &HostValues<i64>) -> Shape {
        tensor.shape.clone()
    }

    fn int_device(_: &HostValues<i64>) -> HostDevice {
        HostDevice
    }

    fn int_to_device(tensor: &HostValues<i64>, _: &HostDevice) -> Result<HostValues<i64>> {
        Ok(tensor.clone())
    }

    fn bool_from_vec(data: Vec<bool>, shape: Shape, _: &HostDevice) -> Result<HostValues<bool>> {
        HostValues::new("bool_from_vec", data, shape)
    }

    fn bool_to_vec(tensor: &HostValues<bool>) -> Result<Vec<bool>> {
        Ok(tensor.data.to_vec())
    }

    fn bool_shape(tensor: &HostValues<bool>) -> Shape {
        tensor.shape.clone()
    }

    fn bool_device(_: &HostValues<bool>) -> HostDevice {
        HostDevice
    }

    fn bool_to_device(tensor: &HostValues<bool>, _: &HostDevice) -> Result<HostValues<bool>> {
        Ok(tensor.clone())
    }
}

/// Opting in: `Autodiff<HostBackend>` records gradients on top of it.
impl BaseBackend for HostBackend {}

/// The batch of an operand with batch dimensions `own` that output batch `index` (of `batch`) reads: dimensions
/// of size 1 stretch, missing ones are added in front.
fn broadcast_batch(mut index: usize, batch: &[usize], own: &[usize]) -> usize {
    let offset = batch.len() - own.len();
    let (mut source, mut stride) = (0, 1);
    for (position, &size) in batch.iter().enumerate().rev() {
        let coordinate = index % size.max(1);
        index /= size.max(1);
        if position >= offset {
            let dim = own[position - offset];
            if dim != 1 {
                source += coordinate * stride;
            }
            stride *= dim;
        }
    }
    source
}
