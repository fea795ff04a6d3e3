//! The convolutions of CPU tensors: the ndarray backend's kernels (`kernels::window`), which
//! unfold one image at a time and multiply by matrixmultiply. candle's own CPU convolution unfolds the whole batch
//! and multiplies by `gemm`, whose threads slow a step on two cores (as for `matmul`); its weight's gradient went
//! through `unfold2d`'s index picks.

use candle_core::{DType, Layout, Tensor};

use crate::backends::candle::elementwise::{
    CpuFloat, CpuPairKernel, contiguous_slice, cpu_custom_ops, runs_cpu_kernels,
};
use crate::backends::candle::error::OrBackend;
use crate::backends::candle::memory::{check_output, check_output_like, through_f32};
use crate::error::Result;
use crate::kernels::window::Convolution;
use crate::shape::Shape;

/// Which of a convolution's three products to compute.
#[derive(Clone, Copy, Debug)]
pub(in crate::backends::candle) enum Product {
    /// `conv2d` of the images (left) by the weight (right).
    Forward,
    /// `conv_transpose2d` of the output planes (left) by the weight (right).
    Transposed,
    /// The weight's gradient from the images (left) and the output's gradient (right).
    WeightGradient,
}

/// `product` of `convolution` on `operands`, into a tensor of `output`; `None` unless they are CPU tensors. `f16`
/// and `bf16` ones go through `f32` (`through_f32`): matrixmultiply has no 16-bit product. Room for the output and
/// for the operands' copies is checked first.
pub(in crate::backends::candle) fn on_cpu(
    op: &'static str,
    operands: [&Tensor; 2],
    convolution: Convolution,
    product: Product,
    output: [usize; 4],
) -> Result<Option<Tensor>> {
    if !operands[0].device().is_cpu() {
        return Ok(None);
    }
    // An empty batch may come with a plane too large for a tensor: refused here, as the kernel would refuse it.
    Shape::new(output).check_tensor_shape(op)?;
    let kernel = CpuConvolution { op, convolution, product, output };
    if let Some(result) = through_f32(op, operands, &[DType::F16, DType::BF16], |widened| kernel.run(widened)) {
        return result.map(Some);
    }
    if !runs_cpu_kernels(operands[0]) {
        return Ok(None);
    }
    kernel.run(operands).map(Some)
}

struct CpuConvolution {
    op: &'static str,
    convolution: Convolution,
    product: Product,
    output: [usize; 4],
}

impl CpuConvolution {
    /// The product of CPU tensors of `f32` or `f64`, made contiguous.
    fn run(&self, operands: [&Tensor; 2]) -> Result<Tensor> {
        let elements = Shape::new(self.output).num_elements();
        check_output(self.op, operands[0].device(), elements, operands[0].dtype())?;
        let operand = |tensor: &Tensor| {
            check_output_like(self.op, tensor)?;
            tensor.contiguous().or_backend(self.op)
        };
        let (lhs, rhs) = (operand(operands[0])?, operand(operands[1])?);
        lhs.apply_op2_no_bwd(&rhs, self).or_backend(self.op)
    }
}

impl CpuPairKernel for CpuConvolution {
    fn op_name(&self) -> &'static str {
        self.op
    }

    fn output_shape(&self, _: &Layout) -> candle_core::Shape {
        self.output.to_vec().into()
    }

    fn outputs<E: CpuFloat>(&self, lhs: (&[E], &Layout), rhs: (&[E], &Layout)) -> candle_core::Result<Vec<E>> {
        let (lhs, rhs) = (contiguous_slice(self.op, lhs)?, contiguous_slice(self.op, rhs)?);
        let values = match self.product {
            Product::Forward => self.convolution.forward(self.op, lhs, rhs),
            Product::Transposed => self.convolution.transposed(self.op, lhs, rhs),
            Product::WeightGradient => self.convolution.weight_gradient(self.op, lhs, rhs),
        };
        values.map_err(candle_core::Error::wrap)
    }
}

cpu_custom_ops!(pair: CpuConvolution; triple:);
