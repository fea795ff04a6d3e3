//! `#[derive(Module)]` by what it does: every field that is a module is visited, under the name the hand-written
//! lists gave before the derive (so weights and optimizer states saved then still load), in declaration order;
//! a skipped field is kept as it is; tuple structs, generic structs and nested ones work; save and load round trip.

use dispatch_core::backends::{Autodiff, NdArray, NdArrayDevice};
use dispatch_core::{Backend, DType, Result, Tensor};
use dispatch_nn::layers::{LayerNorm, Linear};
use dispatch_nn::models::{Gpt, GptConfig, LeNet};
use dispatch_nn::optim::{Adam, Optimizer};
use dispatch_nn::{Module, ModuleExt, record};

type Ad = Autodiff<NdArray>;

fn names<B: Backend, M: ModuleExt<B>>(module: &M) -> Vec<String> {
    module.params().unwrap().into_iter().map(|(name, _)| name).collect()
}

fn filled<B: Backend>(dims: &[usize], value: f64, device: &B::Device) -> Tensor<B> {
    Tensor::full(dims.to_vec(), value, DType::F32, device).unwrap()
}

/// The names `module!(Gpt { tokens, positions, blocks, norm, head })` and the lists of its parts gave, written out.
fn gpt_names_before_the_derive(layers: usize) -> Vec<String> {
    let mut names = vec!["tokens.weight".to_owned(), "positions.weight".to_owned()];
    for layer in 0..layers {
        for part in [
            "norm1.gamma",
            "norm1.beta",
            "attention.qkv.weight",
            "attention.qkv.bias",
            "attention.proj.weight",
            "attention.proj.bias",
            "norm2.gamma",
            "norm2.beta",
            "mlp.up.weight",
            "mlp.up.bias",
            "mlp.down.weight",
            "mlp.down.bias",
        ] {
            names.push(format!("blocks.{layer}.{part}"));
        }
    }
    // The head has no bias.
    names.extend(["norm.gamma", "norm.beta", "head.weight"].map(str::to_owned));
    names
}

const CONFIG: GptConfig = GptConfig { vocabulary: 11, context: 6, width: 8, heads: 2, layers: 2 };

#[test]
fn the_models_have_the_parameter_names_of_the_lists_they_replace() {
    let gpt = Gpt::<NdArray>::new(CONFIG, 3, DType::F32, &NdArrayDevice).unwrap();
    assert_eq!(names(&gpt), gpt_names_before_the_derive(2));
    let lenet = LeNet::<NdArray>::new(10, 3, DType::F32, &NdArrayDevice).unwrap();
    let expected =
        ["conv1", "conv2", "fc1", "fc2", "fc3"].map(|layer| [format!("{layer}.weight"), format!("{layer}.bias")]);
    assert_eq!(names(&lenet), expected.concat());
}

#[test]
fn weights_saved_under_the_old_names_load_into_the_derived_model() {
    let device = NdArrayDevice;
    let template = Gpt::<NdArray>::new(CONFIG, 3, DType::F32, &device).unwrap();
    // A file as the hand-written impls saved it: each old name with a value of its own.
    let shapes: Vec<Vec<usize>> = template.params().unwrap().iter().map(|(_, param)| param.dims()).collect();
    let saved: Vec<(String, Tensor<NdArray>)> = gpt_names_before_the_derive(2)
        .into_iter()
        .zip(&shapes)
        .enumerate()
        .map(|(index, (name, dims))| (name, filled(dims, index as f64, &device)))
        .collect();
    let loaded = record::load_bytes(template, &record::to_bytes(&saved).unwrap()).unwrap();
    for (index, (name, param)) in loaded.params().unwrap().into_iter().enumerate() {
        assert_eq!(name, saved[index].0);
        assert!(param.to_f64_vec().unwrap().iter().all(|&value| value == index as f64), "{name}");
    }
}

/// A user's model with every kind of field: a nested derived struct, a `Vec`, an `Option` with and without a
/// value, a bare tensor, a tuple struct, a generic one, and fields that are not parameters.
#[derive(Clone, Debug, Module)]
struct Model<B: Backend> {
    #[module(skip)]
    width: usize,
    encoder: Encoder<B>,
    layers: Vec<Linear<B>>,
    gate: Option<Tensor<B>>,
    missing: Option<LayerNorm<B>>,
    scale: Tensor<B>,
    pair: Pair<B>,
    stack: Stack<LayerNorm<B>, B, &'static str>,
    /// A tensor that is not a parameter: kept out on purpose.
    #[module(skip)]
    mask: Tensor<B>,
}

#[derive(Clone, Debug, Module)]
struct Encoder<B: Backend> {
    input: Linear<B>,
    norm: LayerNorm<B>,
}

#[derive(Clone, Debug, Module)]
struct Pair<B: Backend>(Tensor<B>, #[module(skip)] f64, Tensor<B>);

/// Generic over its parts; the backend is the parameter bounded by `Backend`, wherever it is declared.
#[derive(Clone, Debug, Module)]
struct Stack<M, B, L>
where
    B: Backend,
{
    parts: Vec<M>,
    #[module(skip)]
    label: L,
    #[module(skip)]
    marker: std::marker::PhantomData<B>,
}

fn model<B: Backend>(device: &B::Device, seed: u64) -> Model<B> {
    let dtype = DType::F32;
    Model {
        width: 4,
        encoder: Encoder {
            input: Linear::new(3, 4, true, seed, dtype, device).unwrap(),
            norm: LayerNorm::new(4, dtype, device).unwrap(),
        },
        layers: vec![
            Linear::new(4, 4, false, seed + 1, dtype, device).unwrap(),
            Linear::new(4, 2, true, seed + 2, dtype, device).unwrap(),
        ],
        gate: Some(Tensor::random_uniform([2], (0.0, 1.0), seed + 3, dtype, device).unwrap()),
        missing: None,
        scale: Tensor::random_uniform([1], (0.0, 1.0), seed + 4, dtype, device).unwrap(),
        pair: Pair(filled(&[2], 1.0, device), 0.5, filled(&[3], 2.0, device)),
        stack: Stack {
            parts: vec![LayerNorm::new(2, dtype, device).unwrap()],
            label: "stack",
            marker: std::marker::PhantomData,
        },
        mask: filled(&[5], 1.0, device),
    }
}

#[test]
fn every_module_field_is_visited_in_declaration_order_and_nothing_else() {
    let model = model::<NdArray>(&NdArrayDevice, 7);
    let expected = [
        "encoder.input.weight",
        "encoder.input.bias",
        "encoder.norm.gamma",
        "encoder.norm.beta",
        "layers.0.weight",
        "layers.1.weight",
        "layers.1.bias",
        "gate",
        "scale",
        "pair.0",
        "pair.2",
        "stack.parts.0.gamma",
        "stack.parts.0.beta",
    ];
    assert_eq!(names(&model), expected);
    // Counted by hand from the shapes above; the skipped `mask` (5 values) is not among them.
    let by_hand = (3 * 4 + 4) + (4 + 4) + (4 * 4) + (4 * 2 + 2) + 2 + 1 + (2 + 3) + (2 + 2);
    assert_eq!(model.num_params().unwrap(), by_hand);
}

#[test]
fn a_mapping_reaches_every_parameter_and_leaves_skipped_fields_as_they_are() {
    let model = model::<NdArray>(&NdArrayDevice, 7).cast_to(DType::F64).unwrap();
    assert!(model.params().unwrap().iter().all(|(_, param)| param.dtype() == DType::F64));
    assert_eq!(model.mask.dtype(), DType::F32);
    assert_eq!((model.width, model.pair.1, model.stack.label), (4, 0.5, "stack"));
    assert!(model.missing.is_none());
}

#[test]
fn a_derived_model_saves_and_loads_back_its_values() {
    let device = NdArrayDevice;
    let trained = model::<NdArray>(&device, 7);
    let path = std::env::temp_dir().join(format!("dispatch-module-derive-{}.safetensors", std::process::id()));
    record::save(&trained, &path).unwrap();
    // A template of -7 everywhere, a value the saved model does not hold: each value read back came from the file.
    let template = model::<NdArray>(&device, 99)
        .map_params("", &mut |_: &str, param: Tensor<NdArray>| Tensor::full(param.dims(), -7.0, DType::F32, &device))
        .unwrap();
    let loaded = record::load(template, &path);
    std::fs::remove_file(&path).unwrap();
    let loaded = loaded.unwrap();
    let (saved, read) = (trained.params().unwrap(), loaded.params().unwrap());
    assert_eq!(saved.len(), read.len());
    for ((name, a), (other, b)) in saved.iter().zip(&read) {
        assert_eq!(name, other);
        assert_eq!(a.to_f64_vec().unwrap(), b.to_f64_vec().unwrap(), "{name}");
    }
}

#[test]
fn the_optimizer_state_is_named_after_the_parameters() -> Result<()> {
    let device = NdArrayDevice;
    let model = model::<Ad>(&device, 7).tracked()?;
    let x = Tensor::<Ad>::random_uniform([5, 3], (-1.0, 1.0), 1, DType::F32, &device)?;
    let hidden = model.encoder.norm.forward(&model.encoder.input.forward(&x)?)?;
    let out = model.layers[1].forward(&model.layers[0].forward(&hidden)?)?.mul(&model.scale)?;
    let gradients = out.square()?.sum()?.backward()?;
    let mut adam = Adam::new(0.01);
    adam.step(model, &gradients)?;
    let mut state: Vec<String> = adam.state()?.into_iter().map(|(name, _)| name).collect();
    state.sort();
    let mut expected: Vec<String> = [
        "encoder.input.weight",
        "encoder.input.bias",
        "encoder.norm.gamma",
        "encoder.norm.beta",
        "layers.0.weight",
        "layers.1.weight",
        "layers.1.bias",
        "scale",
    ]
    .iter()
    .flat_map(|name| [format!("{name}.exp_avg"), format!("{name}.exp_avg_sq")])
    .chain(["step".to_owned()])
    .collect();
    expected.sort();
    assert_eq!(state, expected);
    Ok(())
}
