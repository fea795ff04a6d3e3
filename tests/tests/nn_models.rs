//! The models of dispatch-nn on every variant of a derived enum: the GPT's and LeNet's forward passes agree across
//! devices (to `dispatch_tests::agreement` of the dtype), their gradients agree between the autodiff variants, and
//! bad sizes are typed errors.

use dispatch_core::backends::{NdArray, NdArrayDevice};
use dispatch_core::{DType, Error, IntTensor, Tensor};
use dispatch_nn::ModuleExt;
use dispatch_nn::models::{Gpt, GptConfig, LeNet};
use dispatch_tests::{agreement, close_f64};

use dispatch_tests::every_variant::{Device, DeviceBackend, every_device};

const CONFIG: GptConfig = GptConfig { vocabulary: 11, context: 8, width: 16, heads: 4, layers: 2 };

fn assert_agree(label: &str, dtype: DType, got: &[f64], expected: &[f64]) {
    assert_eq!(got.len(), expected.len(), "{label}");
    for (index, (a, b)) in got.iter().zip(expected).enumerate() {
        assert!(close_f64(*a, *b, agreement(dtype)), "{label}, element {index}: {a} vs {b}");
    }
}

#[test]
fn the_gpt_forward_pass_agrees_on_every_device_and_dtype() {
    let ids: Vec<i64> = (0..2 * 7).map(|i| (i * 5 % 11) as i64).collect();
    for dtype in [DType::F32, DType::F64, DType::F16] {
        let outputs: Vec<Vec<f64>> = every_device()
            .iter()
            .map(|device| {
                let model = Gpt::<DeviceBackend>::new(CONFIG, 3, dtype, device).unwrap();
                let ids = IntTensor::from_vec(ids.clone(), [2, 7], device).unwrap();
                let logits = model.forward(&ids).unwrap();
                assert_eq!((logits.dims(), logits.dtype()), (vec![2, 7, 11], dtype));
                logits.to_f64_vec().unwrap()
            })
            .collect();
        for (device, output) in every_device().iter().zip(&outputs) {
            assert_agree(&format!("GPT logits on {device} in {dtype}"), dtype, output, &outputs[0]);
        }
    }
}

#[test]
fn lenet_forward_passes_and_gradients_agree_on_every_device() {
    let images = Tensor::<NdArray>::random_uniform([2, 1, 28, 28], (0.0, 1.0), 5, DType::F32, &NdArrayDevice).unwrap();
    let images = images.to_f64_vec().unwrap();
    let mut gradients = Vec::new();
    for device in every_device() {
        let model = LeNet::<DeviceBackend>::new(10, 4, DType::F64, &device).unwrap();
        let model = if matches!(device, Device::Autodiff(_)) { model.tracked().unwrap() } else { model };
        let x = Tensor::from_f64_vec(images.clone(), [2, 1, 28, 28], DType::F64, &device).unwrap();
        let logits = model.forward(&x).unwrap();
        assert_eq!(logits.dims(), [2, 10]);
        let reference = LeNet::<NdArray>::new(10, 4, DType::F64, &NdArrayDevice).unwrap();
        let expected = reference
            .forward(&Tensor::from_f64_vec(images.clone(), [2, 1, 28, 28], DType::F64, &NdArrayDevice).unwrap());
        assert_agree(
            &format!("LeNet logits on {device}"),
            DType::F64,
            &logits.to_f64_vec().unwrap(),
            &expected.unwrap().to_f64_vec().unwrap(),
        );
        if matches!(device, Device::Autodiff(_)) {
            let loss = logits.square().unwrap().mean().unwrap().backward().unwrap();
            let weight = model.conv1.weight.grad(&loss).unwrap().to_f64_vec().unwrap();
            gradients.push((device.to_string(), weight));
        }
    }
    // Both CPU autodiff variants, and any that DISPATCH_TEST_DEVICES adds, against the first.
    assert!(gradients.len() >= 2, "{} autodiff variants", gradients.len());
    let (first, reference) = &gradients[0];
    for (device, gradient) in &gradients[1..] {
        assert_agree(&format!("conv1's gradient on {device} against {first}"), DType::F64, gradient, reference);
    }
}

#[test]
fn bad_model_sizes_and_inputs_are_typed_errors() {
    let device = Device::NdArray(NdArrayDevice);
    let bad = GptConfig { heads: 3, ..CONFIG };
    let error = Gpt::<DeviceBackend>::new(bad, 0, DType::F32, &device).unwrap_err();
    assert!(matches!(error, Error::InvalidValue { op: "CausalSelfAttention::new", parameter: "heads", .. }), "{error}");
    let empty = Gpt::<DeviceBackend>::new(GptConfig { layers: 0, ..CONFIG }, 0, DType::F32, &device);
    assert!(matches!(empty, Err(Error::InvalidValue { op: "Gpt::new", parameter: "layers", .. })), "{empty:?}");
    let model = Gpt::<DeviceBackend>::new(CONFIG, 0, DType::F32, &device).unwrap();
    let too_long = IntTensor::from_vec(vec![0; 9], [1, 9], &device).unwrap();
    assert!(matches!(model.forward(&too_long), Err(Error::UnexpectedShape { op: "Gpt::forward", .. })));
    let unknown = IntTensor::from_vec(vec![11], [1, 1], &device).unwrap();
    assert!(matches!(model.forward(&unknown), Err(Error::IndexOutOfRange { index: 11, .. })));
    assert!(model.generate(&[], 3, 0.0, 0).is_err());
    // Greedy generation is the same on every device.
    let texts: Vec<Vec<i64>> = every_device()
        .iter()
        .map(|device| {
            Gpt::<DeviceBackend>::new(CONFIG, 0, DType::F32, device).unwrap().generate(&[1, 2], 12, 0.0, 0).unwrap()
        })
        .collect();
    assert!(texts.iter().all(|text| text == &texts[0] && text.len() == 12), "{texts:?}");
}
