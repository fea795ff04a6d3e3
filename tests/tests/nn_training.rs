//! Training with dispatch-nn: a model of its own made a module by a derive, optimizers against steps worked out by
//! hand, their state saved and restored, weights saved on one device and loaded on every variant and dtype of a
//! derived enum with the same outputs, and a short training run whose loss falls on every device.

use dispatch_core::backends::{Autodiff, Candle, CandleDevice, NdArray, NdArrayDevice};
use dispatch_core::{AutodiffBackend, Backend, DType, Error, Result, Tensor};
use dispatch_nn::layers::{LayerNorm, Linear};
use dispatch_nn::optim::{Adam, AdamW, Optimizer, Sgd};
use dispatch_nn::{Module, ModuleExt, record};
use dispatch_tests::{agreement, close_f64};

/// A user's model: two linear layers around a normalisation.
#[derive(Clone, Debug, Module)]
struct Regressor<B: Backend> {
    input: Linear<B>,
    norm: LayerNorm<B>,
    output: Linear<B>,
}

impl<B: Backend> Regressor<B> {
    fn new(seed: u64, dtype: DType, device: &B::Device) -> Result<Self> {
        Ok(Self {
            input: Linear::new(3, 8, true, seed, dtype, device)?,
            norm: LayerNorm::new(8, dtype, device)?,
            output: Linear::new(8, 1, true, seed + 10, dtype, device)?,
        })
    }

    fn forward(&self, x: &Tensor<B>) -> Result<Tensor<B>> {
        self.output.forward(&self.norm.forward(&self.input.forward(x)?)?.gelu()?)
    }
}

use dispatch_tests::every_variant::{DeviceBackend, autodiff_devices, every_device};

type Ad = Autodiff<NdArray>;

fn f64s<B: Backend>(values: &[f64], device: &B::Device) -> Tensor<B> {
    Tensor::from_f64_vec(values.to_vec(), [values.len()], DType::F64, device).unwrap()
}

/// One step of `optimizer` on the parameter `p` for the loss `Σ p ⊙ c`, whose gradient is `c`.
fn step(optimizer: &mut impl Optimizer<Ad>, p: Tensor<Ad>, c: &[f64]) -> Tensor<Ad> {
    let gradients = p.mul(&f64s(c, &NdArrayDevice)).unwrap().sum().unwrap().backward().unwrap();
    optimizer.step(p, &gradients).unwrap()
}

fn assert_values(tensor: &Tensor<Ad>, expected: &[f64]) {
    let values = tensor.to_f64_vec().unwrap();
    // The optimizers take their hyper-parameters as f64 and the tensors are F64: only the order of the operations
    // differs from the hand computation.
    assert!(values.iter().zip(expected).all(|(&a, &e)| close_f64(a, e, 1e-13)), "{values:?} vs {expected:?}");
}

#[test]
fn adam_and_adamw_take_the_steps_worked_out_by_hand() {
    let (p, c, lr, eps) = ([1.0, -2.0], [0.5, -1.0], 0.1f64, 1e-8);
    // Step 1: m = 0.1 g, v = 0.001 g², so m̂ = g and v̂ = g²: each parameter moves by lr * g / (|g| + eps).
    let adam_step = |p: f64, g: f64| p - lr * g / (g.abs() + eps);
    let mut adam = Adam::new(0.1);
    let p1 = step(&mut adam, f64s::<Ad>(&p, &NdArrayDevice).require_grad().unwrap(), &c);
    assert_values(&p1, &[adam_step(p[0], c[0]), adam_step(p[1], c[1])]);
    // Step 2, the same gradient: m = 0.19 g, v = 0.001999 g², and the corrections make them g and g² again.
    let p2 = step(&mut adam, p1, &c);
    assert_values(&p2, &[adam_step(adam_step(p[0], c[0]), c[0]), adam_step(adam_step(p[1], c[1]), c[1])]);
    assert_eq!(adam.steps(), 2);

    // Adam's weight decay enters the gradient: g = c + 0.1 p.
    let mut decayed = Adam::new(0.1).weight_decay(0.1);
    let p1 = step(&mut decayed, f64s::<Ad>(&p, &NdArrayDevice).require_grad().unwrap(), &c);
    assert_values(&p1, &[adam_step(p[0], c[0] + 0.1 * p[0]), adam_step(p[1], c[1] + 0.1 * p[1])]);

    // AdamW's shrinks the parameter first: p (1 - lr wd), then the Adam step of the plain gradient.
    let mut adamw = AdamW::new(0.1).weight_decay(0.1);
    let p1 = step(&mut adamw, f64s::<Ad>(&p, &NdArrayDevice).require_grad().unwrap(), &c);
    let shrink = 1.0 - 0.1 * 0.1;
    assert_values(&p1, &[adam_step(p[0] * shrink, c[0]), adam_step(p[1] * shrink, c[1])]);
}

#[test]
fn sgd_with_momentum_and_weight_decay_takes_the_steps_worked_out_by_hand() {
    let (p, c) = ([1.0, -2.0], [0.5, -1.0]);
    let mut sgd = Sgd::new(0.1).momentum(0.9).weight_decay(0.01);
    let p1 = step(&mut sgd, f64s::<Ad>(&p, &NdArrayDevice).require_grad().unwrap(), &c);
    // d = g + 0.01 p; the first buffer is d.
    let d: Vec<f64> = (0..2).map(|i| c[i] + 0.01 * p[i]).collect();
    let expected1: Vec<f64> = (0..2).map(|i| p[i] - 0.1 * d[i]).collect();
    assert_values(&p1, &expected1);
    let p2 = step(&mut sgd, p1, &c);
    let expected2: Vec<f64> = (0..2).map(|i| expected1[i] - 0.1 * (0.9 * d[i] + c[i] + 0.01 * expected1[i])).collect();
    assert_values(&p2, &expected2);
}

#[test]
fn an_optimizer_state_saved_and_loaded_continues_exactly() {
    let model = Regressor::<Ad>::new(1, DType::F64, &NdArrayDevice).unwrap().tracked().unwrap();
    let x = Tensor::<Ad>::random_uniform([4, 3], (-1.0, 1.0), 5, DType::F32, &NdArrayDevice)
        .unwrap()
        .cast(DType::F64)
        .unwrap();
    let train = |model: Regressor<Ad>, optimizer: &mut AdamW<Ad>| {
        let loss = model.forward(&x).unwrap().square().unwrap().mean().unwrap();
        optimizer.step(model, &loss.backward().unwrap()).unwrap()
    };
    let mut optimizer = AdamW::new(0.01);
    let model = train(train(model, &mut optimizer), &mut optimizer);
    let bytes = record::to_bytes(&optimizer.state().unwrap()).unwrap();

    let mut restored = AdamW::new(0.01);
    restored.load_state(record::from_bytes(&bytes, &NdArrayDevice).unwrap()).unwrap();
    assert_eq!(restored.steps(), 2);
    let (continued, resumed) = (train(model.clone(), &mut optimizer), train(model, &mut restored));
    assert_eq!(continued.params().unwrap().len(), 6);
    for ((name, a), (_, b)) in continued.params().unwrap().iter().zip(resumed.params().unwrap()) {
        assert_eq!(a.to_f64_vec().unwrap(), b.to_f64_vec().unwrap(), "{name}");
    }
    // A state with one moment of a pair missing is refused, naming it.
    let mut lacking = record::from_bytes(&bytes, &NdArrayDevice).unwrap();
    let dropped = lacking.iter().position(|(name, _)| name.ends_with(".exp_avg_sq")).unwrap();
    let (dropped, _) = lacking.remove(dropped);
    let error = AdamW::<Ad>::new(0.01).load_state(lacking).unwrap_err();
    let named = matches!(&error, Error::RecordMismatch { op: "load_state", missing, unexpected }
        if *missing == [dropped.clone()] && unexpected.is_empty());
    assert!(named, "{error}");
    // A state the optimizer does not know is refused, not dropped.
    let mut foreign = Sgd::<Ad>::new(0.1);
    let error = foreign.load_state(record::from_bytes(&bytes, &NdArrayDevice).unwrap()).unwrap_err();
    let unexpected = matches!(&error, Error::RecordMismatch { op: "load_state", missing, unexpected }
        if missing.is_empty() && !unexpected.is_empty());
    assert!(unexpected, "{error}");
}

#[test]
fn weights_saved_on_one_device_load_on_every_variant_and_dtype_with_the_same_outputs() {
    let trained = Regressor::<NdArray>::new(2, DType::F32, &NdArrayDevice).unwrap();
    let path = std::env::temp_dir().join(format!("dispatch-nn-weights-{}.safetensors", std::process::id()));
    record::save(&trained, &path).unwrap();
    let x = Tensor::<NdArray>::random_uniform([5, 3], (-1.0, 1.0), 9, DType::F32, &NdArrayDevice).unwrap();
    let expected = trained.forward(&x).unwrap().to_f64_vec().unwrap();
    let names: Vec<String> = trained.params().unwrap().into_iter().map(|(name, _)| name).collect();
    assert_eq!(names, ["input.weight", "input.bias", "norm.gamma", "norm.beta", "output.weight", "output.bias"]);

    for device in every_device() {
        for dtype in DType::ALL {
            // A template of other values, on the target device and in the target dtype.
            let template = Regressor::<DeviceBackend>::new(99, dtype, &device).unwrap();
            let loaded = record::load(template, &path).unwrap();
            let x = Tensor::<DeviceBackend>::from_f64_vec(x.to_f64_vec().unwrap(), [5, 3], DType::F64, &device)
                .unwrap()
                .cast(dtype)
                .unwrap();
            let output = loaded.forward(&x).unwrap();
            assert_eq!((output.device(), output.dtype()), (device.clone(), dtype));
            // The reference ran in F32: no dtype can agree with it more closely than F32's tolerance.
            let tolerance = agreement(dtype).max(agreement(DType::F32));
            for (got, want) in output.to_f64_vec().unwrap().iter().zip(&expected) {
                assert!(close_f64(*got, *want, tolerance), "{device} in {dtype}: {got} vs {want}");
            }
        }
    }
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn a_file_that_does_not_fit_the_model_is_an_error_naming_what() {
    let device = NdArrayDevice;
    let model = Regressor::<NdArray>::new(3, DType::F32, &device).unwrap();
    let mut params = model.params().unwrap();
    let (name, _) = params.remove(2);
    let missing = record::load_bytes(model.clone(), &record::to_bytes(&params).unwrap()).unwrap_err();
    let named = matches!(&missing, Error::RecordMismatch { op: "load", missing, unexpected }
        if *missing == [name.clone()] && unexpected.is_empty());
    assert!(named, "{missing}");
    assert_eq!(missing.to_string(), format!("record mismatch in `load`: missing [{name:?}]"));

    let mut params = model.params().unwrap();
    params.push(("extra.weight".to_owned(), Tensor::zeros([2], DType::F32, &device).unwrap()));
    let extra = record::load_bytes(model.clone(), &record::to_bytes(&params).unwrap()).unwrap_err();
    let named = matches!(&extra, Error::RecordMismatch { op: "load", missing, unexpected }
        if missing.is_empty() && *unexpected == ["extra.weight"]);
    assert!(named, "{extra}");

    let narrower =
        Regressor::<NdArray> { input: Linear::new(2, 8, true, 0, DType::F32, &device).unwrap(), ..model.clone() };
    let narrower_bytes = record::to_bytes(&narrower.params().unwrap()).unwrap();
    let mismatch = record::load_bytes(model.clone(), &narrower_bytes).unwrap_err();
    assert!(matches!(mismatch, Error::ShapeMismatch { op: "load", .. }), "{mismatch}");
    assert!(record::load_bytes(narrower, b"not a safetensors file").is_err());

    // A file of bytes where the module takes floats: its dtype is named, not reinterpreted.
    let (name, param) = model.params().unwrap().remove(0);
    let (dims, count) = (param.dims(), param.shape().num_elements());
    let header = format!(r#"{{"{name}":{{"dtype":"U8","shape":{dims:?},"data_offsets":[0,{count}]}}}}"#);
    let mut bytes = (header.len() as u64).to_le_bytes().to_vec();
    bytes.extend(header.bytes().chain(std::iter::repeat_n(7, count)));
    let error = record::load_bytes(model, &bytes).unwrap_err();
    let bytes_refused = matches!(error, Error::UnsupportedDType { op: "load", backend: "safetensors", dtype: "U8" });
    assert!(bytes_refused, "{error}");
}

#[test]
fn a_file_that_cannot_be_read_is_an_io_error_naming_the_path() {
    let model = Regressor::<NdArray>::new(3, DType::F32, &NdArrayDevice).unwrap();
    let path = std::env::temp_dir().join("dispatch-no-such-dir").join("model.safetensors");
    let error = record::load(model, &path).unwrap_err();
    let not_found = matches!(&error, Error::Io { op: "load", path: named, error }
        if *named == path && error.kind() == std::io::ErrorKind::NotFound);
    assert!(not_found, "{error}");
    let message = error.to_string();
    assert!(message.starts_with(&format!("`load` failed on {}: ", path.display())), "{message}");
}

/// The same short training run on every device of the enum that records gradients: the loss must fall below a
/// tenth of where it started, and every device must see the same losses.
fn losses_of_a_short_run<B: AutodiffBackend>(device: &B::Device) -> Vec<f64> {
    let x = Tensor::<B>::random_uniform([16, 3], (-1.0, 1.0), 3, DType::F32, device).unwrap().cast(DType::F64).unwrap();
    let weights = Tensor::<B>::from_f64_vec(vec![0.5, -1.0, 2.0], [3, 1], DType::F64, device).unwrap();
    let y = x.matmul(&weights).unwrap().tanh().unwrap();
    let mut model = Regressor::<B>::new(4, DType::F64, device).unwrap().tracked().unwrap();
    let mut optimizer = Adam::new(0.02);
    let mut losses = Vec::new();
    for _ in 0..60 {
        let loss = dispatch_nn::loss::mse(&model.forward(&x).unwrap(), &y).unwrap();
        losses.push(loss.to_f64_vec().unwrap()[0]);
        model = optimizer.step(model, &loss.backward().unwrap()).unwrap();
    }
    losses
}

#[test]
fn a_short_training_run_learns_the_same_way_on_every_device() {
    let reference = losses_of_a_short_run::<Ad>(&NdArrayDevice);
    assert!(reference.iter().all(|loss| loss.is_finite()));
    assert!(reference[59] < reference[0] / 10.0, "the loss went from {} to {}", reference[0], reference[59]);
    for device in &autodiff_devices() {
        let losses = losses_of_a_short_run::<DeviceBackend>(device);
        for (step, (got, want)) in losses.iter().zip(&reference).enumerate() {
            assert!(close_f64(*got, *want, 1e-9), "{device}, step {step}: {got} vs {want}");
        }
    }
    let on_candle = losses_of_a_short_run::<Autodiff<Candle>>(&CandleDevice::cpu());
    assert!(on_candle.iter().zip(&reference).all(|(a, b)| close_f64(*a, *b, 1e-9)));
}
