//! The layers and losses of dispatch-nn: each one's gradients, by its input and by its own parameters, against
//! finite differences in F64; what they compute, by hand; their bad input as typed errors.

use dispatch_core::backend::{Conv2dOptions, Window2d};
use dispatch_core::backends::Autodiff;
use dispatch_core::{ArgumentValue, Backend, BaseBackend, DType, Error, IntTensor, RankRule, Result, Tensor};
use dispatch_nn::layers::{AvgPool2d, CausalSelfAttention, Conv2d, Dropout, Embedding, LayerNorm, Linear, MaxPool2d};
use dispatch_nn::loss::{cross_entropy, mse};
use dispatch_tests::{check_gradients, ints};

/// Seeded values in `[-1, 1)`, the inputs of a gradient check.
fn values<B: Backend>(dims: &[usize], seed: u64, device: &B::Device) -> (Vec<f64>, Vec<usize>) {
    let tensor = Tensor::<B>::random_uniform(dims, (-1.0, 1.0), seed, DType::F32, device).unwrap();
    (tensor.to_f64_vec().unwrap(), dims.to_vec())
}

fn linear_and_conv_gradients<B: BaseBackend>(device: &B::Device) -> Result<()> {
    let inputs = [values::<B>(&[2, 3, 4], 1, device), values::<B>(&[4, 5], 2, device), values::<B>(&[5], 3, device)];
    check_gradients::<B>(device, "Linear", &inputs, |x| {
        Linear { weight: x[1].clone(), bias: Some(x[2].clone()) }.forward(&x[0])?.tanh()
    })?;
    check_gradients::<B>(device, "Linear::forward_outputs", &inputs, |x| {
        Linear { weight: x[1].clone(), bias: Some(x[2].clone()) }.forward_outputs(&x[0], 1, 3)?.tanh()
    })?;
    let options = Conv2dOptions { padding: [1, 0], stride: [1, 2], ..Default::default() };
    let inputs =
        [values::<B>(&[2, 2, 4, 5], 4, device), values::<B>(&[3, 2, 3, 2], 5, device), values::<B>(&[3], 6, device)];
    check_gradients::<B>(device, "Conv2d", &inputs, |x| {
        Conv2d { weight: x[1].clone(), bias: Some(x[2].clone()), options }.forward(&x[0])?.tanh()
    })
}

fn normalisation_embedding_and_attention_gradients<B: BaseBackend>(device: &B::Device) -> Result<()> {
    let inputs = [values::<B>(&[3, 4], 7, device), values::<B>(&[4], 8, device), values::<B>(&[4], 9, device)];
    check_gradients::<B>(device, "LayerNorm", &inputs, |x| {
        LayerNorm { gamma: x[1].clone(), beta: x[2].clone(), eps: 1e-5 }.forward(&x[0])?.tanh()
    })?;
    let ids = ints::<Autodiff<B>>(&[2, 0, 2, 1], &[2, 2], device);
    check_gradients::<B>(device, "Embedding", &[values::<B>(&[3, 4], 10, device)], |x| {
        Embedding { weight: x[0].clone() }.forward(&ids)?.tanh()
    })?;
    let (width, heads) = (4, 2);
    let inputs = [
        values::<B>(&[2, 3, width], 11, device),
        values::<B>(&[width, 3 * width], 12, device),
        values::<B>(&[3 * width], 13, device),
        values::<B>(&[width, width], 14, device),
        values::<B>(&[width], 15, device),
    ];
    check_gradients::<B>(device, "CausalSelfAttention", &inputs, |x| {
        let attention = CausalSelfAttention {
            qkv: Linear { weight: x[1].clone(), bias: Some(x[2].clone()) },
            proj: Linear { weight: x[3].clone(), bias: Some(x[4].clone()) },
            heads,
        };
        attention.forward(&x[0])?.tanh()
    })
}

fn loss_gradients<B: BaseBackend>(device: &B::Device) -> Result<()> {
    let targets = ints::<Autodiff<B>>(&[2, 0, 1], &[3], device);
    check_gradients::<B>(device, "cross_entropy", &[values::<B>(&[3, 4], 16, device)], |x| {
        cross_entropy(&x[0], &targets)
    })?;
    let inputs = [values::<B>(&[2, 3], 17, device), values::<B>(&[2, 3], 18, device)];
    check_gradients::<B>(device, "mse", &inputs, |x| mse(&x[0], &x[1]))
}

/// What the layers compute, against values worked out by hand.
fn layers_compute_what_they_say<B: Backend>(device: &B::Device) {
    let f64s =
        |data: &[f64], dims: &[usize]| Tensor::<B>::from_f64_vec(data.to_vec(), dims, DType::F64, device).unwrap();
    let linear = Linear { weight: f64s(&[1.0, 2.0, 3.0, 4.0], &[2, 2]), bias: Some(f64s(&[0.5, -0.5], &[2])) };
    assert_eq!(linear.forward(&f64s(&[1.0, 1.0], &[1, 2])).unwrap().to_f64_vec().unwrap(), [4.5, 5.5]);
    assert_eq!(linear.forward_outputs(&f64s(&[1.0, 1.0], &[1, 2]), 1, 1).unwrap().to_f64_vec().unwrap(), [5.5]);
    assert!(linear.forward_outputs(&f64s(&[1.0, 1.0], &[1, 2]), 1, 2).is_err(), "outputs past the layer's");
    let norm = LayerNorm::<B>::new(2, DType::F64, device).unwrap();
    let normed = norm.forward(&f64s(&[1.0, 3.0], &[1, 2])).unwrap().to_f64_vec().unwrap();
    // mean 2, variance 1: (x - 2) / sqrt(1 + 1e-5).
    let scale = 1.0 / (1.0f64 + 1e-5).sqrt();
    assert!((normed[0] + scale).abs() < 1e-7 && (normed[1] - scale).abs() < 1e-7, "{normed:?}");
    // Uniform logits: the cross-entropy is log(classes).
    let loss = cross_entropy(&f64s(&[0.0; 8], &[2, 4]), &ints(&[1, 3], &[2], device)).unwrap();
    assert!((loss.to_f64_vec().unwrap()[0] - 4f64.ln()).abs() < 1e-12);
    assert_eq!(mse(&f64s(&[1.0, 2.0], &[2]), &f64s(&[0.0, 0.0], &[2])).unwrap().to_f64_vec().unwrap(), [2.5]);
    let image = f64s(&(0..16).map(f64::from).collect::<Vec<_>>(), &[1, 1, 4, 4]);
    let window = Window2d::new([2, 2]).stride([2, 2]);
    assert_eq!(MaxPool2d { window }.forward(&image).unwrap().to_f64_vec().unwrap(), [5.0, 7.0, 13.0, 15.0]);
    assert_eq!(AvgPool2d { window }.forward(&image).unwrap().to_f64_vec().unwrap(), [2.5, 4.5, 10.5, 12.5]);

    // Causal: the first position attends to itself alone, so its output does not depend on what follows.
    let attention = CausalSelfAttention::<B>::new(4, 2, 3, DType::F64, device).unwrap();
    let x =
        Tensor::<B>::random_uniform([1, 3, 4], (-1.0, 1.0), 4, DType::F32, device).unwrap().cast(DType::F64).unwrap();
    let changed_tail = x.slice_assign(1, 1, &x.narrow(1, 1, 2).unwrap().neg().unwrap()).unwrap();
    let first = |x: &Tensor<B>| attention.forward(x).unwrap().narrow(1, 0, 1).unwrap().to_f64_vec().unwrap();
    assert_eq!(first(&x), first(&changed_tail));
}

fn bad_input_is_a_typed_error<B: Backend>(device: &B::Device) {
    assert!(matches!(
        CausalSelfAttention::<B>::new(6, 4, 0, DType::F32, device),
        Err(Error::InvalidValue {
            op: "CausalSelfAttention::new",
            parameter: "heads",
            value: ArgumentValue::Size(4),
            ..
        })
    ));
    let error = Dropout::new(1.0, 0).unwrap_err();
    assert!(matches!(error, Error::InvalidValue { op: "Dropout::new", parameter: "p", .. }), "{error}");
    assert_eq!(error.to_string(), "invalid argument to `Dropout::new`: `p` is 1; it must be a probability in [0, 1)");
    let flat = Tensor::<B>::zeros([4, 6], DType::F32, device).unwrap();
    let attention = CausalSelfAttention::<B>::new(6, 2, 0, DType::F32, device).unwrap();
    let error = attention.forward(&flat).unwrap_err();
    assert!(matches!(error, Error::UnexpectedRank { expected: RankRule::Exactly(3), .. }), "{error}");
    let logits = Tensor::<B>::zeros([2, 3], DType::F32, device).unwrap();
    let error = cross_entropy(&logits, &ints(&[0, 1, 2], &[3], device)).unwrap_err();
    assert!(matches!(error, Error::ShapeMismatch { op: "cross_entropy", .. }), "{error}");
    let error = cross_entropy(&logits, &ints(&[0, 3], &[2], device)).unwrap_err();
    assert!(matches!(error, Error::IndexOutOfRange { op: "cross_entropy", index: 3, len: 3 }), "{error}");
    let error = cross_entropy(&Tensor::<B>::zeros([6], DType::F32, device).unwrap(), &ints(&[0], &[1], device));
    assert!(matches!(error, Err(Error::UnexpectedRank { op: "cross_entropy", .. })), "{error:?}");
    let embedding = Embedding::<B>::new(3, 2, 0.02, 0, DType::F32, device).unwrap();
    let error = embedding.forward(&IntTensor::from_vec(vec![3], [1], device).unwrap()).unwrap_err();
    assert!(matches!(error, Error::IndexOutOfRange { index: 3, len: 3, .. }), "{error}");
}

/// Dropout's mask comes from its seed: the same on every backend, new at each call, none in evaluation.
fn dropout_is_seeded_and_scaled<B: Backend>(device: &B::Device) {
    let dropout = Dropout::new(0.5, 7).unwrap();
    let x = Tensor::<B>::ones([1000], DType::F32, device).unwrap();
    let first = dropout.forward(&x, true).unwrap().to_vec().unwrap();
    let second = dropout.forward(&x, true).unwrap().to_vec().unwrap();
    assert!(first.iter().all(|&v| v == 0.0 || v == 2.0), "kept values are scaled by 1 / (1 - p)");
    let kept = first.iter().filter(|&&v| v == 2.0).count();
    assert!((400..600).contains(&kept), "{kept} of 1000 kept at p = 0.5");
    assert_ne!(first, second, "each call draws a new mask");
    assert_eq!(dropout.forward(&x, false).unwrap().to_vec().unwrap(), vec![1.0; 1000]);
    let again = Dropout::new(0.5, 7).unwrap();
    assert_eq!(again.forward(&x, true).unwrap().to_vec().unwrap(), first, "the same seed, the same mask");
}

dispatch_tests::tests_on_every_base_backend!(
    linear_and_conv_gradients,
    normalisation_embedding_and_attention_gradients,
    loss_gradients,
    layers_compute_what_they_say,
    bad_input_is_a_typed_error,
    dropout_is_seeded_and_scaled,
);
