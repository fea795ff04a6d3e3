//! Gradients of `Autodiff<B>` on every base backend: each differentiable op against central finite differences of
//! its own forward, and gradients through devices and host ops. The graph's own behaviours are in
//! `autodiff_graph.rs`.

use std::sync::{Arc, Mutex};

use dispatch_core::DType;
use dispatch_core::backends::Autodiff;
use dispatch_core::{BaseBackend, Error, HostOp, HostTensor, Result, Tensor};
use dispatch_tests::{Precision, check_gradients_in};

type Ad<B> = Autodiff<B>;

/// One input of a checked op.
struct Input {
    shape: Vec<usize>,
    values: Values,
}

enum Values {
    /// Seeded uniform samples in `[low, high)`.
    Uniform(f32, f32),
    /// These exact values, e.g. to stay clear of a kink.
    Exact(Vec<f32>),
}

fn uniform(shape: &[usize], low: f32, high: f32) -> Input {
    Input { shape: shape.to_vec(), values: Values::Uniform(low, high) }
}

fn exact(shape: &[usize], values: &[f32]) -> Input {
    Input { shape: shape.to_vec(), values: Values::Exact(values.to_vec()) }
}

impl Input {
    fn data<B: BaseBackend>(&self, seed: u64, device: &B::Device) -> Result<Vec<f64>> {
        match &self.values {
            Values::Uniform(low, high) => Tensor::<B>::random_uniform(
                self.shape.as_slice(),
                (f64::from(*low), f64::from(*high)),
                seed,
                DType::F32,
                device,
            )?
            .to_f64_vec(),
            Values::Exact(values) => Ok(values.iter().map(|&value| f64::from(value)).collect()),
        }
    }
}

/// The inputs' values (seeded by their position), then the F64 gradient check of `dispatch_tests`.
fn check_gradients<B: BaseBackend>(
    device: &B::Device,
    label: &str,
    inputs: &[Input],
    op: impl Fn(&[Tensor<Ad<B>>]) -> Result<Tensor<Ad<B>>>,
) -> Result<()> {
    let data = inputs
        .iter()
        .enumerate()
        .map(|(k, input)| Ok((input.data::<B>(k as u64 + 1, device)?, input.shape.clone())))
        .collect::<Result<Vec<_>>>()?;
    check_gradients_in::<B>(Precision::F64, device, label, &data, op)
}

/// [`check_gradients`] labelled with the op's own source text, so a failure names the op.
macro_rules! check {
    ($device:expr, $inputs:expr, |$x:ident| $op:expr) => {
        check_gradients::<B>($device, stringify!($op), $inputs, |$x: &[Tensor<Ad<B>>]| $op)
    };
}

type BinaryOp<B> = fn(&Tensor<Ad<B>>, &Tensor<Ad<B>>) -> Result<Tensor<Ad<B>>>;

fn binary_ops<B: BaseBackend>() -> [(&'static str, BinaryOp<B>); 4] {
    [("add", Tensor::add), ("sub", Tensor::sub), ("mul", Tensor::mul), ("div", Tensor::div)]
}

// ---- element-wise ---------------------------------------------------------------------------------------------

fn binary_ops_match_finite_differences<B: BaseBackend>(device: &B::Device) -> Result<()> {
    for (name, op) in binary_ops::<B>() {
        // The right operand stays away from zero so `div` is smooth.
        let inputs = [uniform(&[2, 3], -2.0, 2.0), uniform(&[2, 3], 0.5, 2.0)];
        check_gradients::<B>(device, name, &inputs, |x| op(&x[0], &x[1]))?;
    }
    Ok(())
}

fn broadcast_operands_get_gradients_of_their_own_shape<B: BaseBackend>(device: &B::Device) -> Result<()> {
    let pairs: [(&[usize], &[usize]); 6] = [
        (&[2, 3], &[3]),
        (&[3], &[2, 3]),
        (&[2, 1], &[1, 3]),
        (&[2, 3, 4], &[3, 1]),
        (&[4], &[1]),
        (&[2, 1, 4], &[3, 1]),
    ];
    for (name, op) in binary_ops::<B>() {
        for (lhs, rhs) in pairs {
            check_gradients::<B>(device, name, &[uniform(lhs, -2.0, 2.0), uniform(rhs, 0.5, 2.0)], |x| {
                op(&x[0], &x[1])
            })?;
        }
    }
    Ok(())
}

fn scalar_ops_match_finite_differences<B: BaseBackend>(device: &B::Device) -> Result<()> {
    let x = || [uniform(&[2, 3], 0.5, 2.0)];
    check!(device, &x(), |x| x[0].add_scalar(0.7))?;
    check!(device, &x(), |x| x[0].sub_scalar(1.5))?;
    check!(device, &x(), |x| x[0].mul_scalar(-1.3))?;
    check!(device, &x(), |x| x[0].div_scalar(4.0))?;
    for exponent in [2.0, 3.0, 0.5, -1.5, 1.0] {
        check!(device, &x(), |x| x[0].powf_scalar(exponent))?;
    }
    check!(device, &x(), |x| x[0].sqrt())
}

fn powf_with_exponent_zero_has_a_zero_gradient_even_at_zero<B: BaseBackend>(device: &B::Device) -> Result<()> {
    let x = Tensor::<Ad<B>>::from_vec(vec![0.0, 1.5, -2.0], [3], device)?.require_grad()?;
    let gradients = x.powf_scalar(0.0)?.sum()?.backward()?;
    assert_eq!(x.grad(&gradients).unwrap().to_vec()?, vec![0.0; 3]);
    Ok(())
}

fn unary_ops_match_finite_differences<B: BaseBackend>(device: &B::Device) -> Result<()> {
    let wide = || [uniform(&[2, 3], -2.0, 2.0)];
    check!(device, &wide(), |x| x[0].neg())?;
    check!(device, &wide(), |x| x[0].exp())?;
    check!(device, &[uniform(&[2, 3], 0.5, 3.0)], |x| x[0].log())?;
    check!(device, &wide(), |x| x[0].sigmoid())?;
    check!(device, &wide(), |x| x[0].tanh())?;
    // Clear of the kink at 0 by more than the step.
    let signs = || [exact(&[2, 3], &[-1.5, -0.3, 0.2, 0.9, -0.7, 1.8])];
    check!(device, &signs(), |x| x[0].relu())?;
    check!(device, &signs(), |x| x[0].abs())?;
    check!(device, &[uniform(&[2, 3], 0.5, 3.0)], |x| x[0].sqrt())?;
    check!(device, &[uniform(&[2, 3], 0.5, 2.0)], |x| x[0].recip())?;
    check!(device, &wide(), |x| x[0].sin())?;
    check!(device, &wide(), |x| x[0].cos())?;
    check!(device, &wide(), |x| x[0].erf())?;
    check!(device, &wide(), |x| x[0].gelu())?;
    check!(device, &wide(), |x| x[0].silu())?;
    // Clear of both bounds by more than the step.
    check!(device, &signs(), |x| x[0].clamp(-1.0, 1.0))
}

fn maximum_and_minimum_send_the_gradient_to_the_picked_operand<B: BaseBackend>(device: &B::Device) -> Result<()> {
    // No ties, and no pair closer than the step, so each output moves with one operand only.
    let (lhs, rhs) = (&[-1.5, 0.4, 1.1, -0.2, 2.0, 0.7], &[0.3, -0.6, 1.9, -1.4, 0.9, 0.1]);
    for (name, op) in [("maximum", Tensor::maximum as BinaryOp<B>), ("minimum", Tensor::minimum)] {
        check_gradients::<B>(device, name, &[exact(&[2, 3], lhs), exact(&[2, 3], rhs)], |x| op(&x[0], &x[1]))?;
        check_gradients::<B>(device, name, &[exact(&[2, 3], lhs), exact(&[3], &rhs[..3])], |x| op(&x[0], &x[1]))?;
    }
    Ok(())
}

// ---- linear algebra and layout --------------------------------------------------------------------------------

fn matmul_matches_finite_differences<B: BaseBackend>(device: &B::Device) -> Result<()> {
    check!(device, &[uniform(&[3, 4], -1.0, 1.0), uniform(&[4, 2], -1.0, 1.0)], |x| x[0].matmul(&x[1]))?;
    check!(device, &[uniform(&[2, 3, 4], -1.0, 1.0), uniform(&[2, 4, 5], -1.0, 1.0)], |x| { x[0].matmul(&x[1]) })?;
    // Batches that broadcast: each operand's gradient is summed over what it was stretched along.
    check!(device, &[uniform(&[2, 3, 2, 4], -1.0, 1.0), uniform(&[4, 3], -1.0, 1.0)], |x| x[0].matmul(&x[1]))?;
    check!(device, &[uniform(&[2, 1, 2, 3], -1.0, 1.0), uniform(&[3, 3, 2], -1.0, 1.0)], |x| x[0].matmul(&x[1]))
}

fn matmul_with_one_tracked_operand_gives_only_its_gradient<B: BaseBackend>(device: &B::Device) -> Result<()> {
    let x = Tensor::<Ad<B>>::from_vec(vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0], [2, 3], device)?;
    let w = Tensor::<Ad<B>>::from_vec(vec![1.0, -1.0, 0.5, 2.0, 0.0, 1.0], [3, 2], device)?.require_grad()?;
    let gradients = x.matmul(&w)?.sum()?.backward()?;
    assert_eq!(x.id(), None);
    assert_eq!(gradients.len(), 1);
    // d(Σ x W)/dW[k, j] = Σ_i x[i, k]
    assert_eq!(w.grad(&gradients).unwrap().to_vec()?, vec![5.0, 5.0, 7.0, 7.0, 9.0, 9.0]);
    Ok(())
}

fn layout_ops_match_finite_differences<B: BaseBackend>(device: &B::Device) -> Result<()> {
    let cube = || [uniform(&[2, 3, 4], -1.0, 1.0)];
    check!(device, &cube(), |x| x[0].swap_dims(0, 2))?;
    check!(device, &cube(), |x| x[0].transpose())?;
    check!(device, &cube(), |x| x[0].reshape([4, 6]))?;
    for (axis, start, len) in [(0, 1, 2), (1, 0, 2), (1, 3, 2), (1, 0, 5), (1, 2, 1)] {
        check!(device, &[uniform(&[4, 5], -1.0, 1.0)], |x| x[0].narrow(axis, start, len))?;
    }
    for axis in [0, 1] {
        let inputs = [uniform(&[2, 3], -1.0, 1.0), uniform(&[2, 3], -1.0, 1.0), uniform(&[2, 3], -1.0, 1.0)];
        check!(device, &inputs, |x| Tensor::cat(x, axis))?;
    }
    Ok(())
}

fn cat_with_an_untracked_input_gives_the_others_their_slices<B: BaseBackend>(device: &B::Device) -> Result<()> {
    let a = Tensor::<Ad<B>>::from_vec(vec![1.0, 2.0], [2, 1], device)?.require_grad()?;
    let constant = Tensor::<Ad<B>>::from_vec(vec![3.0, 4.0, 5.0, 6.0], [2, 2], device)?;
    let b = Tensor::<Ad<B>>::from_vec(vec![7.0, 8.0], [2, 1], device)?.require_grad()?;
    let joined = Tensor::cat(&[a.clone(), constant, b.clone()], 1)?;
    let weights = Tensor::<Ad<B>>::from_vec((1..=8).map(|v| v as f32).collect(), [2, 4], device)?;
    let gradients = joined.mul(&weights)?.sum()?.backward()?;
    assert_eq!(a.grad(&gradients).unwrap().to_vec()?, vec![1.0, 5.0]);
    assert_eq!(b.grad(&gradients).unwrap().to_vec()?, vec![4.0, 8.0]);
    assert_eq!(gradients.len(), 2);
    Ok(())
}

// ---- reductions -----------------------------------------------------------------------------------------------

fn reductions_match_finite_differences<B: BaseBackend>(device: &B::Device) -> Result<()> {
    let cube = || [uniform(&[2, 3, 4], -1.0, 1.0)];
    check!(device, &cube(), |x| x[0].sum())?;
    check!(device, &cube(), |x| x[0].mean())?;
    for axis in 0..3 {
        check!(device, &cube(), |x| x[0].sum_dim(axis))?;
        check!(device, &cube(), |x| x[0].mean_dim(axis))?;
        check!(device, &[uniform(&[2, 3, 4], -3.0, 3.0)], |x| x[0].log_softmax(axis))?;
    }
    check!(device, &[uniform(&[3, 4], -3.0, 3.0)], |x| x[0].softmax(1))
}

// ---- devices and host ops -------------------------------------------------------------------------------------

fn to_device_sends_the_gradient_back<B: BaseBackend>(device: &B::Device) -> Result<()> {
    check!(device, &[uniform(&[2, 3], -1.0, 1.0)], |x| x[0].to_device(device)?.exp())?;
    let x = Tensor::<Ad<B>>::from_vec(vec![1.0, 2.0], [2], device)?.require_grad()?;
    let gradients = x.to_device(device)?.mul_scalar(3.0)?.sum()?.backward()?;
    let gradient = x.grad(&gradients).unwrap();
    assert_eq!(gradient.device(), x.device());
    assert_eq!(gradient.to_vec()?, vec![3.0, 3.0]);
    Ok(())
}

/// A real host op: multiplies by a constant (in `f64`, rounded to its values' element type), so its
/// vector-Jacobian product multiplies by it too. Notes the element type of every input it is given.
struct ScaleBy {
    factor: f64,
    element_types: Mutex<Vec<DType>>,
}

impl ScaleBy {
    fn new(factor: f64) -> Arc<Self> {
        Arc::new(Self { factor, element_types: Mutex::new(Vec::new()) })
    }

    fn element_types(&self) -> Vec<DType> {
        self.element_types.lock().unwrap().clone()
    }
}

impl HostOp for ScaleBy {
    fn name(&self) -> &'static str {
        "scale_by"
    }

    fn forward(&self, input: HostTensor) -> Result<HostTensor> {
        self.element_types.lock().unwrap().push(input.dtype());
        Ok(input.map(|value| value * self.factor))
    }

    fn backward(&self, grad_output: HostTensor) -> Result<HostTensor> {
        self.forward(grad_output)
    }
}

/// A host op whose backward breaks the contract: it returns a gradient of another shape.
struct WrongShapedBackward;

impl HostOp for WrongShapedBackward {
    fn name(&self) -> &'static str {
        "wrong_shaped_backward"
    }

    fn forward(&self, input: HostTensor) -> Result<HostTensor> {
        Ok(input)
    }

    fn backward(&self, _: HostTensor) -> Result<HostTensor> {
        Ok(HostTensor::new(vec![1.0f32], [1]))
    }
}

/// A host op that answers `f64` values whatever its input: its output is rounded once, from `f64`, to the
/// tensor's dtype.
struct FilledWithF64(f64);

impl HostOp for FilledWithF64 {
    fn name(&self) -> &'static str {
        "filled_with_f64"
    }

    fn forward(&self, input: HostTensor) -> Result<HostTensor> {
        Ok(HostTensor::new(vec![self.0; input.values.len()], input.shape))
    }

    fn backward(&self, grad_output: HostTensor) -> Result<HostTensor> {
        Ok(grad_output.map(|_| 0.0))
    }
}

fn gradients_flow_through_a_host_op<B: BaseBackend>(device: &B::Device) -> Result<()> {
    // The F64 check at 1e-6 like every other op's: each perturbed input (a step of 1e-4 from an f32 value) is a
    // value only f64 holds, so a host op that saw it rounded to f32 would be off by about 6e-5 of the gradient.
    let op = ScaleBy::new(2.5);
    let host_op: Arc<dyn HostOp> = op.clone();
    check_gradients::<B>(device, "host_op", &[uniform(&[2, 3], -2.0, 2.0)], |x| {
        x[0].host_op(host_op.clone())?.sin()?.mul(&x[0])
    })?;
    let element_types = op.element_types();
    assert!(!element_types.is_empty() && element_types.iter().all(|&dtype| dtype == DType::F64), "{element_types:?}");

    let x = Tensor::<Ad<B>>::from_vec(vec![1.0, -2.0, 3.0], [3], device)?.require_grad()?;
    let y = x.host_op(ScaleBy::new(2.5))?;
    assert_eq!(y.to_vec()?, vec![2.5, -5.0, 7.5]);
    assert!(y.id().is_some(), "a host op keeps the graph");
    let gradients = y.mul(&x)?.sum()?.backward()?;
    // d(Σ 2.5 x²)/dx = 5 x: 2.5 x through the host op plus 2.5 x directly.
    assert_eq!(x.grad(&gradients).unwrap().to_vec()?, vec![5.0, -10.0, 15.0]);
    Ok(())
}

fn an_f64_host_op_keeps_f64_forward_and_backward<B: BaseBackend>(device: &B::Device) -> Result<()> {
    // Values f32 does not hold, and a factor whose products with them f32 would round.
    let values = vec![1.0 + 2f64.powi(-40), 0.1, -3.7];
    let weights = vec![1.0 / 3.0, 2.0 - 2f64.powi(-35), 0.7];
    let op = ScaleBy::new(0.1);
    let x = Tensor::<Ad<B>>::from_f64_vec(values.clone(), [3], DType::F64, device)?.require_grad()?;
    let y = x.host_op(op.clone())?;
    assert_eq!(y.dtype(), DType::F64);
    assert_eq!(y.to_f64_vec()?, values.iter().map(|value| value * 0.1).collect::<Vec<_>>());
    let w = Tensor::<Ad<B>>::from_f64_vec(weights.clone(), [3], DType::F64, device)?;
    let gradients = y.mul(&w)?.sum()?.backward()?;
    let gradient = x.grad(&gradients).unwrap();
    assert_eq!(gradient.dtype(), DType::F64);
    assert_eq!(gradient.to_f64_vec()?, weights.iter().map(|weight| weight * 0.1).collect::<Vec<_>>());
    assert_eq!(op.element_types(), vec![DType::F64, DType::F64], "forward, then backward");
    // Every other dtype reaches the op as f32, which holds it exactly, and comes back in its own dtype.
    for dtype in [DType::F32, DType::F16, DType::BF16] {
        let op = ScaleBy::new(2.0);
        let x = Tensor::<Ad<B>>::from_f64_vec(vec![1.5, -0.25], [2], dtype, device)?.require_grad()?;
        let y = x.host_op(op.clone())?;
        assert_eq!((y.dtype(), y.to_f64_vec()?), (dtype, vec![3.0, -0.5]));
        let gradient = x.grad(&y.sum()?.backward()?).unwrap();
        assert_eq!((gradient.dtype(), gradient.to_f64_vec()?), (dtype, vec![2.0, 2.0]));
        assert_eq!(op.element_types(), vec![DType::F32, DType::F32], "{dtype}");
    }
    Ok(())
}

fn a_host_op_output_is_rounded_once_to_the_tensor_dtype<B: BaseBackend>(device: &B::Device) -> Result<()> {
    // Just above a tie of the half type, by less than f32 holds: rounded once it goes up, rounded through f32
    // (which drops the excess and leaves the tie, broken to even) it would go down.
    for (dtype, above_tie) in [(DType::F16, 1.0 + 2f64.powi(-11)), (DType::BF16, 1.0 + 2f64.powi(-8))] {
        let value = above_tie + 2f64.powi(-40);
        let once = dtype.round(value);
        assert_ne!(once, dtype.round(f64::from(value as f32)), "{dtype}: the check cannot tell the roundings apart");
        let x = Tensor::<Ad<B>>::from_f64_vec(vec![0.0; 2], [2], dtype, device)?;
        let y = x.host_op(Arc::new(FilledWithF64(value)))?;
        assert_eq!((y.dtype(), y.to_f64_vec()?), (dtype, vec![once; 2]));
    }
    Ok(())
}

fn a_host_op_backward_of_the_wrong_shape_is_an_error<B: BaseBackend>(device: &B::Device) -> Result<()> {
    let x = Tensor::<Ad<B>>::from_vec(vec![1.0, 2.0, 3.0], [3], device)?.require_grad()?;
    let error = x.host_op(Arc::new(WrongShapedBackward))?.sum()?.backward().unwrap_err();
    let mismatch = matches!(&error, Error::ShapeMismatch { op: "host_op backward", lhs, rhs }
        if lhs.dims() == [3] && rhs.dims() == [1]);
    assert!(mismatch, "{error}");
    Ok(())
}

// ---- the graph's sums ------------------------------------------------------------------------------------------

fn a_tensor_used_twice_accumulates_both_gradients<B: BaseBackend>(device: &B::Device) -> Result<()> {
    let x = Tensor::<Ad<B>>::from_vec(vec![-1.0, 0.5, 2.0], [3], device)?.require_grad()?;
    let gradients = x.mul(&x)?.add(&x)?.sum()?.backward()?;
    // d(x² + x)/dx = 2x + 1
    assert_eq!(x.grad(&gradients).unwrap().to_vec()?, vec![-1.0, 2.0, 5.0]);
    check!(device, &[uniform(&[2, 3], -1.0, 1.0)], |x| {
        let shared = x[0].exp()?;
        shared.mul(&shared)?.add(&shared)
    })
}

fn a_bias_broadcast_over_the_batch_gets_the_summed_gradient<B: BaseBackend>(device: &B::Device) -> Result<()> {
    let x = Tensor::<Ad<B>>::from_vec(vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0], [3, 2], device)?;
    let w = Tensor::<Ad<B>>::from_vec(vec![0.5, -1.0, 2.0, 1.0], [2, 2], device)?.require_grad()?;
    let bias = Tensor::<Ad<B>>::from_vec(vec![0.1, -0.2], [2], device)?.require_grad()?;
    let upstream = Tensor::<Ad<B>>::from_vec(vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0], [3, 2], device)?;
    let gradients = x.matmul(&w)?.add(&bias)?.mul(&upstream)?.sum()?.backward()?;
    // The bias gradient is the upstream gradient summed over the batch; its shape is the bias's own.
    let bias_gradient = bias.grad(&gradients).unwrap();
    assert_eq!(bias_gradient.dims(), vec![2]);
    assert_eq!(bias_gradient.to_vec()?, vec![9.0, 12.0]);
    check!(device, &[uniform(&[3, 2], -1.0, 1.0), uniform(&[2, 4], -1.0, 1.0), uniform(&[4], -1.0, 1.0)], |x| {
        x[0].matmul(&x[1])?.add(&x[2])?.tanh()
    })
}

// ---- every check on every base backend -----------------------------------------------------------------------

dispatch_tests::tests_on_every_base_backend!(
    a_bias_broadcast_over_the_batch_gets_the_summed_gradient,
    a_tensor_used_twice_accumulates_both_gradients,
    binary_ops_match_finite_differences,
    broadcast_operands_get_gradients_of_their_own_shape,
    scalar_ops_match_finite_differences,
    powf_with_exponent_zero_has_a_zero_gradient_even_at_zero,
    unary_ops_match_finite_differences,
    maximum_and_minimum_send_the_gradient_to_the_picked_operand,
    matmul_matches_finite_differences,
    matmul_with_one_tracked_operand_gives_only_its_gradient,
    layout_ops_match_finite_differences,
    cat_with_an_untracked_input_gives_the_others_their_slices,
    reductions_match_finite_differences,
    to_device_sends_the_gradient_back,
    gradients_flow_through_a_host_op,
    an_f64_host_op_keeps_f64_forward_and_backward,
    a_host_op_output_is_rounded_once_to_the_tensor_dtype,
    a_host_op_backward_of_the_wrong_shape_is_an_error,
);
