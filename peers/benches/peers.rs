//! Group 6 of BENCHMARKS.md: one training step of the main job's GPT and of LeNet, from the same initial weights
//! on the same data, on the derived enum's variants, on the backends called directly, on candle-nn written as
//! candle's users write it, and on burn (`dispatch_peers::burn_peer`). First each design trains a few steps, and
//! the run stops unless its losses agree with dispatch's (times of designs that compute different things do not
//! compare); then the pairs of each target are timed in ABBA rounds; then the peak memory of one step is taken,
//! and criterion times one step of each, side by side in one run.

use std::alloc::{GlobalAlloc, Layout, System};
use std::hint::black_box;
use std::sync::atomic::{AtomicUsize, Ordering};

use candle_core::{DType as CandleDType, Device as CandleCpu, Module as _, Tensor as CandleTensor};
use candle_nn::{AdamW as CandleAdamW, Optimizer as _, ParamsAdamW, VarBuilder, VarMap};
use criterion::Criterion;
use dispatch_core::backends::{Autodiff, Candle, CandleDevice, NdArray, NdArrayDevice};
use dispatch_core::{AutodiffBackend, AutodiffDevice, DType, Dispatch, IntTensor, Tensor};
use dispatch_nn::ModuleExt;
use dispatch_nn::loss::cross_entropy;
use dispatch_nn::models::{Gpt, LeNet};
use dispatch_nn::optim::{AdamW, Optimizer};
use dispatch_peers::burn_peer::{BurnCpu, BurnGpt, BurnLeNet, Weights};
use dispatch_peers::workload::{
    GPT, GPT_BATCH, LEARNING_RATE, LENET_CLASSES, LENET_IMAGES, SEED, gpt_batch, lenet_images, lenet_labels,
};

// ---- peak memory: a counting allocator --------------------------------------------------------------------------

struct Counting;

static CURRENT: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every call forwards to the system allocator with the caller's own arguments; the counters only observe.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let pointer = unsafe { System.alloc(layout) };
        if !pointer.is_null() {
            let now = CURRENT.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        pointer
    }

    unsafe fn dealloc(&self, pointer: *mut u8, layout: Layout) {
        unsafe { System.dealloc(pointer, layout) };
        CURRENT.fetch_sub(layout.size(), Ordering::Relaxed);
    }

    unsafe fn realloc(&self, pointer: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        let moved = unsafe { System.realloc(pointer, layout, new_size) };
        if !moved.is_null() {
            if new_size >= layout.size() {
                let now = CURRENT.fetch_add(new_size - layout.size(), Ordering::Relaxed) + new_size - layout.size();
                PEAK.fetch_max(now, Ordering::Relaxed);
            } else {
                CURRENT.fetch_sub(layout.size() - new_size, Ordering::Relaxed);
            }
        }
        moved
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// The most memory `work` held at once beyond what was held before it.
fn peak_of(work: impl FnOnce()) -> usize {
    let before = CURRENT.load(Ordering::Relaxed);
    PEAK.store(before, Ordering::Relaxed);
    work();
    PEAK.load(Ordering::Relaxed).saturating_sub(before)
}

// ---- the designs --------------------------------------------------------------------------------------------------

#[derive(Clone, Debug, PartialEq, Dispatch)]
enum Device {
    #[backend(Candle)]
    Candle(CandleDevice),
    #[backend(NdArray)]
    NdArray(NdArrayDevice),
    #[autodiff]
    Autodiff(AutodiffDevice<Self>),
}

/// One training step of one design; returns the loss before the step.
trait Trainer {
    fn step(&mut self) -> f32;
}

/// The GPT on any backend of dispatch that records gradients: a derived enum's variant or a backend itself.
struct DispatchGpt<B: AutodiffBackend> {
    model: Option<Gpt<B>>,
    optimizer: AdamW<B>,
    ids: IntTensor<B>,
    targets: IntTensor<B>,
}

impl<B: AutodiffBackend> DispatchGpt<B> {
    fn new(device: &B::Device) -> Self {
        let (inputs, targets) = gpt_batch();
        Self {
            model: Some(Gpt::<B>::new(GPT, SEED, DType::F32, device).unwrap().tracked().unwrap()),
            optimizer: AdamW::new(LEARNING_RATE),
            ids: IntTensor::from_vec(inputs, [GPT_BATCH, GPT.context], device).unwrap(),
            targets: IntTensor::from_vec(targets, [GPT_BATCH, GPT.context], device).unwrap(),
        }
    }
}

impl<B: AutodiffBackend> Trainer for DispatchGpt<B> {
    fn step(&mut self) -> f32 {
        // The pool's other thread polls for work during dispatch's own steps only (as in the examples' training
        // loops): candle 0.11 runs candle-nn's element-wise ops on a pool of its own, which it would compete with.
        let _spinning = dispatch_core::parallel::keep_pool_spinning();
        let model = self.model.take().unwrap();
        let loss = model.loss(&self.ids, &self.targets).unwrap();
        let value = loss.to_scalar().unwrap() as f32; // an F32 loss: exact
        self.model = Some(self.optimizer.step(model, &loss.backward_once().unwrap()).unwrap());
        value
    }
}

/// The same GPT in candle-nn, as candle's users write it: `candle_nn::{linear, embedding, layer_norm}` from a
/// `VarMap`, candle's ops, `AdamW::backward_step`; its variables start from dispatch's initial weights.
///
/// Two of candle-nn 0.9.2's fused ops have no backward: `LayerNorm::forward` on a contiguous input and
/// `ops::softmax_last_dim` record no gradient (`apply_op*_no_bwd`), so a model trained through them silently
/// leaves the norms' parameters, and everything before an attention's softmax, out of its gradients. This design
/// uses what a candle user must write to train: `ops::softmax` over the last axis, and the norm from candle's ops
/// (as `LayerNorm::forward` does for a non-contiguous input). `candle-nn fused` below keeps the fused ops, to show
/// what they cost and what they lose.
struct CandleNnGpt {
    tokens: candle_nn::Embedding,
    positions: candle_nn::Embedding,
    blocks: Vec<CandleBlock>,
    norm: candle_nn::LayerNorm,
    head: candle_nn::Linear,
    optimizer: CandleAdamW,
    ids: CandleTensor,
    targets: CandleTensor,
    mask: CandleTensor,
    negative_infinity: CandleTensor,
    fused: bool,
}

struct CandleBlock {
    norm1: candle_nn::LayerNorm,
    qkv: candle_nn::Linear,
    proj: candle_nn::Linear,
    norm2: candle_nn::LayerNorm,
    up: candle_nn::Linear,
    down: candle_nn::Linear,
}

impl CandleNnGpt {
    fn new(fused: bool) -> candle_core::Result<Self> {
        let device = CandleCpu::Cpu;
        let varmap = VarMap::new();
        let vb = VarBuilder::from_varmap(&varmap, CandleDType::F32, &device);
        let (width, ln) = (GPT.width, candle_nn::LayerNormConfig { eps: 1e-5, ..Default::default() });
        let mut blocks = Vec::new();
        for layer in 0..GPT.layers {
            let vb = vb.pp(format!("blocks.{layer}"));
            blocks.push(CandleBlock {
                norm1: candle_nn::layer_norm(width, ln, vb.pp("norm1"))?,
                qkv: candle_nn::linear(width, 3 * width, vb.pp("attention.qkv"))?,
                proj: candle_nn::linear(width, width, vb.pp("attention.proj"))?,
                norm2: candle_nn::layer_norm(width, ln, vb.pp("norm2"))?,
                up: candle_nn::linear(width, 4 * width, vb.pp("mlp.up"))?,
                down: candle_nn::linear(4 * width, width, vb.pp("mlp.down"))?,
            });
        }
        let tokens = candle_nn::embedding(GPT.vocabulary, width, vb.pp("tokens"))?;
        let positions = candle_nn::embedding(GPT.context, width, vb.pp("positions"))?;
        let norm = candle_nn::layer_norm(width, ln, vb.pp("norm"))?;
        let head = candle_nn::linear_no_bias(width, GPT.vocabulary, vb.pp("head"))?;
        // dispatch's initial weights, in candle-nn's names and layout (a linear weight is [out, in] there).
        let initial = Gpt::<Candle>::new(GPT, SEED, DType::F32, &CandleDevice::cpu()).unwrap();
        let mut varmap = varmap;
        for (name, param) in initial.params().unwrap() {
            let tensor = param.primitive().clone();
            let (name, tensor) = match name.rsplit_once('.') {
                Some((path, "gamma")) => (format!("{path}.weight"), tensor),
                Some((path, "beta")) => (format!("{path}.bias"), tensor),
                Some((path, "weight")) if !path.ends_with("tokens") && !path.ends_with("positions") => {
                    (name.clone(), tensor.t()?.contiguous()?)
                }
                _ => (name.clone(), tensor),
            };
            varmap.set_one(&name, &tensor)?;
        }
        let optimizer = CandleAdamW::new(
            varmap.all_vars(),
            ParamsAdamW { lr: LEARNING_RATE, weight_decay: 0.01, ..Default::default() },
        )?;
        let (inputs, targets) = gpt_batch();
        let t = GPT.context;
        let future: Vec<u8> = (0..t * t).map(|index| u8::from(index % t > index / t)).collect();
        Ok(Self {
            tokens,
            positions,
            blocks,
            norm,
            head,
            optimizer,
            ids: CandleTensor::from_vec(inputs, (GPT_BATCH, t), &device)?,
            targets: CandleTensor::from_vec(targets, GPT_BATCH * t, &device)?,
            mask: CandleTensor::from_vec(future, (t, t), &device)?,
            negative_infinity: CandleTensor::new(f32::NEG_INFINITY, &device)?,
            fused,
        })
    }

    /// `norm`'s layer normalisation of `x`: candle-nn's fused op, or the same from candle's differentiable ops.
    fn norm(&self, norm: &candle_nn::LayerNorm, x: &CandleTensor) -> candle_core::Result<CandleTensor> {
        if self.fused {
            return norm.forward(x);
        }
        let centred = x.broadcast_sub(&x.mean_keepdim(candle_core::D::Minus1)?)?;
        let variance = centred.sqr()?.mean_keepdim(candle_core::D::Minus1)?;
        let normed = centred.broadcast_div(&(variance + 1e-5)?.sqrt()?)?;
        let bias = norm.bias().ok_or_else(|| candle_core::Error::Msg("a layer norm without a bias".into()))?;
        normed.broadcast_mul(norm.weight())?.broadcast_add(bias)
    }

    fn attention(&self, block: &CandleBlock, x: &CandleTensor) -> candle_core::Result<CandleTensor> {
        let (b, t, d) = x.dims3()?;
        let (h, hd) = (GPT.heads, GPT.width / GPT.heads);
        let qkv = block.qkv.forward(x)?;
        let part = |i: usize| qkv.narrow(2, i * d, d)?.reshape((b, t, h, hd))?.transpose(1, 2)?.contiguous();
        let (q, k, v) = (part(0)?, part(1)?, part(2)?);
        let scores = (q.matmul(&k.t()?)? / (hd as f64).sqrt())?;
        let mask = self.mask.broadcast_as(scores.shape())?;
        let scores = mask.where_cond(&self.negative_infinity.broadcast_as(scores.shape())?, &scores)?;
        let weights = if self.fused {
            candle_nn::ops::softmax_last_dim(&scores)?
        } else {
            candle_nn::ops::softmax(&scores, candle_core::D::Minus1)?
        };
        block.proj.forward(&weights.matmul(&v)?.transpose(1, 2)?.reshape((b, t, d))?)
    }

    fn loss(&self) -> candle_core::Result<CandleTensor> {
        let (b, t) = self.ids.dims2()?;
        let positions = CandleTensor::arange(0u32, t as u32, self.ids.device())?;
        let mut x = self.tokens.forward(&self.ids)?.broadcast_add(&self.positions.forward(&positions)?)?;
        for block in &self.blocks {
            x = (&x + self.attention(block, &self.norm(&block.norm1, &x)?)?)?;
            let hidden = block.up.forward(&self.norm(&block.norm2, &x)?)?.gelu_erf()?;
            x = (&x + block.down.forward(&hidden)?)?;
        }
        let logits = self.head.forward(&self.norm(&self.norm, &x)?)?;
        candle_nn::loss::cross_entropy(&logits.reshape((b * t, GPT.vocabulary))?, &self.targets)
    }
}

impl Trainer for CandleNnGpt {
    fn step(&mut self) -> f32 {
        let loss = self.loss().unwrap();
        let value = loss.to_vec0::<f32>().unwrap();
        self.optimizer.backward_step(&loss).unwrap();
        value
    }
}

/// LeNet on any backend of dispatch that records gradients.
struct DispatchLeNet<B: AutodiffBackend> {
    model: Option<LeNet<B>>,
    optimizer: AdamW<B>,
    images: Tensor<B>,
    labels: IntTensor<B>,
}

impl<B: AutodiffBackend> DispatchLeNet<B> {
    fn new(device: &B::Device) -> Self {
        Self {
            model: Some(LeNet::<B>::new(LENET_CLASSES, SEED, DType::F32, device).unwrap().tracked().unwrap()),
            optimizer: AdamW::new(LEARNING_RATE),
            images: lenet_images(device).unwrap(),
            labels: IntTensor::from_vec(lenet_labels(), [LENET_IMAGES[0]], device).unwrap(),
        }
    }
}

impl<B: AutodiffBackend> Trainer for DispatchLeNet<B> {
    fn step(&mut self) -> f32 {
        // The pool's other thread polls for work during dispatch's own steps only (as in the examples' training
        // loops): candle 0.11 runs candle-nn's element-wise ops on a pool of its own, which it would compete with.
        let _spinning = dispatch_core::parallel::keep_pool_spinning();
        let model = self.model.take().unwrap();
        let loss = cross_entropy(&model.forward(&self.images).unwrap(), &self.labels).unwrap();
        let value = loss.to_scalar().unwrap() as f32; // an F32 loss: exact
        self.model = Some(self.optimizer.step(model, &loss.backward_once().unwrap()).unwrap());
        value
    }
}

/// LeNet in candle-nn: `candle_nn::{conv2d, linear}` and candle's `max_pool2d`, from dispatch's initial weights.
struct CandleNnLeNet {
    conv1: candle_nn::Conv2d,
    conv2: candle_nn::Conv2d,
    fc: [candle_nn::Linear; 3],
    optimizer: CandleAdamW,
    images: CandleTensor,
    labels: CandleTensor,
}

impl CandleNnLeNet {
    fn new() -> candle_core::Result<Self> {
        let device = CandleCpu::Cpu;
        let mut varmap = VarMap::new();
        let vb = VarBuilder::from_varmap(&varmap, CandleDType::F32, &device);
        let padded = candle_nn::Conv2dConfig { padding: 2, ..Default::default() };
        let conv1 = candle_nn::conv2d(1, 6, 5, padded, vb.pp("conv1"))?;
        let conv2 = candle_nn::conv2d(6, 16, 5, Default::default(), vb.pp("conv2"))?;
        let fc = [
            candle_nn::linear(400, 120, vb.pp("fc1"))?,
            candle_nn::linear(120, 84, vb.pp("fc2"))?,
            candle_nn::linear(84, 10, vb.pp("fc3"))?,
        ];
        let initial = LeNet::<Candle>::new(LENET_CLASSES, SEED, DType::F32, &CandleDevice::cpu()).unwrap();
        for (name, param) in initial.params().unwrap() {
            let tensor = param.primitive().clone();
            let tensor =
                if name.starts_with("fc") && name.ends_with("weight") { tensor.t()?.contiguous()? } else { tensor };
            varmap.set_one(&name, &tensor)?;
        }
        let optimizer = CandleAdamW::new(
            varmap.all_vars(),
            ParamsAdamW { lr: LEARNING_RATE, weight_decay: 0.01, ..Default::default() },
        )?;
        let images = lenet_images::<Candle>(&CandleDevice::cpu()).unwrap();
        Ok(Self {
            conv1,
            conv2,
            fc,
            optimizer,
            images: images.primitive().clone(),
            labels: CandleTensor::from_vec(lenet_labels(), LENET_IMAGES[0], &device)?,
        })
    }

    fn loss(&self) -> candle_core::Result<CandleTensor> {
        let x = self.conv1.forward(&self.images)?.relu()?.max_pool2d(2)?;
        let x = self.conv2.forward(&x)?.relu()?.max_pool2d(2)?;
        let x = self.fc[0].forward(&x.flatten_from(1)?)?.relu()?;
        let logits = self.fc[2].forward(&self.fc[1].forward(&x)?.relu()?)?;
        candle_nn::loss::cross_entropy(&logits, &self.labels)
    }
}

impl Trainer for CandleNnLeNet {
    fn step(&mut self) -> f32 {
        let loss = self.loss().unwrap();
        let value = loss.to_vec0::<f32>().unwrap();
        self.optimizer.backward_step(&loss).unwrap();
        value
    }
}

/// A model's initial parameters by name, as burn takes them.
fn weights_of(model: &impl ModuleExt<NdArray>) -> Weights {
    let params = model.params().unwrap();
    params.into_iter().map(|(name, param)| (name, (param.dims(), param.to_vec().unwrap()))).collect()
}

fn burn_gpt(cpu: BurnCpu) -> BurnGpt {
    let initial = Gpt::<NdArray>::new(GPT, SEED, DType::F32, &NdArrayDevice).unwrap();
    BurnGpt::new(cpu, GPT, &weights_of(&initial), gpt_batch(), LEARNING_RATE)
}

fn burn_lenet(cpu: BurnCpu) -> BurnLeNet {
    let initial = LeNet::<NdArray>::new(LENET_CLASSES, SEED, DType::F32, &NdArrayDevice).unwrap();
    let images = lenet_images::<NdArray>(&NdArrayDevice).unwrap().to_vec().unwrap();
    BurnLeNet::new(cpu, &weights_of(&initial), images, lenet_labels(), LEARNING_RATE)
}

impl Trainer for BurnGpt {
    fn step(&mut self) -> f32 {
        BurnGpt::step(self)
    }
}

impl Trainer for BurnLeNet {
    fn step(&mut self) -> f32 {
        BurnLeNet::step(self)
    }
}

type Design = (&'static str, Box<dyn Trainer>);

fn gpt_designs() -> Vec<Design> {
    let derived = |base| Device::Autodiff(AutodiffDevice::new(base));
    vec![
        (
            "derived autodiff:candle",
            Box::new(DispatchGpt::<DeviceBackend>::new(&derived(DeviceBase::Candle(CandleDevice::cpu())))),
        ),
        ("Autodiff<Candle> directly", Box::new(DispatchGpt::<Autodiff<Candle>>::new(&CandleDevice::cpu()))),
        ("candle-nn", Box::new(CandleNnGpt::new(false).unwrap())),
        ("candle-nn fused (no backward)", Box::new(CandleNnGpt::new(true).unwrap())),
        (
            "derived autodiff:ndarray",
            Box::new(DispatchGpt::<DeviceBackend>::new(&derived(DeviceBase::NdArray(NdArrayDevice)))),
        ),
        ("Autodiff<NdArray> directly", Box::new(DispatchGpt::<Autodiff<NdArray>>::new(&NdArrayDevice))),
        ("burn autodiff:ndarray", Box::new(burn_gpt(BurnCpu::NdArray))),
        ("burn autodiff:flex", Box::new(burn_gpt(BurnCpu::Flex))),
    ]
}

fn lenet_designs() -> Vec<Design> {
    let derived = |base| Device::Autodiff(AutodiffDevice::new(base));
    vec![
        (
            "derived autodiff:candle",
            Box::new(DispatchLeNet::<DeviceBackend>::new(&derived(DeviceBase::Candle(CandleDevice::cpu())))),
        ),
        ("Autodiff<Candle> directly", Box::new(DispatchLeNet::<Autodiff<Candle>>::new(&CandleDevice::cpu()))),
        ("candle-nn", Box::new(CandleNnLeNet::new().unwrap())),
        (
            "derived autodiff:ndarray",
            Box::new(DispatchLeNet::<DeviceBackend>::new(&derived(DeviceBase::NdArray(NdArrayDevice)))),
        ),
        ("Autodiff<NdArray> directly", Box::new(DispatchLeNet::<Autodiff<NdArray>>::new(&NdArrayDevice))),
        ("burn autodiff:ndarray", Box::new(burn_lenet(BurnCpu::NdArray))),
        ("burn autodiff:flex", Box::new(burn_lenet(BurnCpu::Flex))),
    ]
}

// ---- the agreement every timing relies on -------------------------------------------------------------------------

/// The design whose losses every other must give: dispatch's derived enum.
const DISPATCH: &str = "derived autodiff:candle";

/// Steps whose losses (each taken before its step) must agree.
const AGREED_STEPS: usize = 5;

/// Relative tolerance between a design's loss and dispatch's. The largest deviation measured is 1.2e-5 (burn on
/// ndarray, GPT, step 5): f32 in another order of operations, compounded by four AdamW steps. A design that
/// computes something else is off by about 1e-3 within two steps (candle-nn's fused design, whose gradients miss
/// the norms and the attention's softmax: 9e-4 at step 2).
const LOSS_TOLERANCE: f64 = 1e-4;

/// The design whose backward is knowingly incomplete (candle-nn's fused ops record none): only its first loss, the
/// forward from the shared initial weights, must agree.
const FORWARD_ONLY: &str = "candle-nn fused (no backward)";

/// Trains each design `AGREED_STEPS` steps and prints its losses; panics unless each loss is a finite number within
/// `LOSS_TOLERANCE` of dispatch's (only the first for `FORWARD_ONLY`).
fn assert_losses_agree(group: &str, designs: fn() -> Vec<Design>) {
    println!("\n{group}: the loss before each of {AGREED_STEPS} steps, from the same weights and data");
    let losses: Vec<(&str, Vec<f32>)> = designs()
        .into_iter()
        .map(|(name, mut trainer)| {
            let losses: Vec<f32> = (0..AGREED_STEPS).map(|_| trainer.step()).collect();
            let printed: Vec<String> = losses.iter().map(|loss| format!("{loss:.5}")).collect();
            println!("  {name:<28} {}", printed.join(" "));
            (name, losses)
        })
        .collect();
    let (_, expected) = losses
        .iter()
        .find(|(name, _)| *name == DISPATCH)
        .unwrap_or_else(|| panic!("{group}: no design {DISPATCH} to compare the others with"));
    for (name, got) in &losses {
        let agreed = if *name == FORWARD_ONLY { 1 } else { AGREED_STEPS };
        for (step, (&got, &expected)) in got.iter().zip(expected).take(agreed).enumerate() {
            let (got, expected) = (f64::from(got), f64::from(expected));
            // Written so that a NaN on either side fails: every comparison with NaN is false.
            let agrees = (got - expected).abs() <= LOSS_TOLERANCE * got.abs().max(expected.abs()).max(1.0);
            assert!(
                got.is_finite() && expected.is_finite() && agrees,
                "{group}: `{name}` gives loss {got} before step {}, dispatch's `{DISPATCH}` {expected} (relative \
                 tolerance {LOSS_TOLERANCE}): the designs do not compute the same thing, so their times do not \
                 compare",
                step + 1
            );
        }
    }
}

// ---- timing -------------------------------------------------------------------------------------------------------

/// The peak memory of one step of each design; then criterion's timing of a step.
fn compare(c: &mut Criterion, group: &str, designs: fn() -> Vec<Design>) {
    println!("{group}: peak memory of one step (beyond what the model and optimizer hold)");
    for (name, mut trainer) in designs() {
        trainer.step();
        // The buffers the ndarray backend keeps for reuse are freed first, so that what the measured step keeps is
        // counted as its own rather than as memory held before it.
        NdArray::release_kept_buffers();
        let peak = peak_of(|| {
            black_box(trainer.step());
        });
        println!("  {name:<28} {:.1} MiB", peak as f64 / (1 << 20) as f64);
    }
    let mut timed = c.benchmark_group(group);
    timed.sample_size(10);
    for (name, mut trainer) in designs() {
        timed.bench_function(name, |b| b.iter(|| black_box(trainer.step())));
    }
    timed.finish();
}

/// One design's step against another's, in ABBA rounds (one step each, alternating), so that load that comes and
/// goes on this shared machine cancels: the median over `rounds` of each round's time ratio (first / second).
fn paired(group: &str, (first_name, first): Design, (second_name, second): Design, rounds: usize) {
    let (mut first, mut second) = (first, second);
    first.step();
    second.step();
    let time = |trainer: &mut Box<dyn Trainer>| {
        let start = std::time::Instant::now();
        black_box(trainer.step());
        start.elapsed().as_secs_f64()
    };
    let mut ratios: Vec<f64> = (0..rounds)
        .map(|_| {
            let (a1, b1) = (time(&mut first), time(&mut second));
            let (b2, a2) = (time(&mut second), time(&mut first));
            (a1 + a2) / (b1 + b2)
        })
        .collect();
    ratios.sort_by(f64::total_cmp);
    let (low, median, high) = (ratios[0], ratios[rounds / 2], ratios[rounds - 1]);
    println!("{group}: paired {first_name} / {second_name}: {median:.3} ({low:.3}-{high:.3}), {rounds} ABBA rounds");
}

/// The design of `designs` named `name`, freshly built.
fn design(designs: fn() -> Vec<Design>, name: &str) -> Design {
    designs().into_iter().find(|(design, _)| *design == name).unwrap_or_else(|| panic!("no design {name}"))
}

/// Each target of the comparison, as the pairs the ABBA rounds time: the derived enum against the backend called
/// directly, against candle-nn on candle, and against burn on its CPU backends.
const PAIRS: [(&str, &str); 5] = [
    ("derived autodiff:candle", "Autodiff<Candle> directly"),
    ("derived autodiff:ndarray", "Autodiff<NdArray> directly"),
    ("derived autodiff:candle", "candle-nn"),
    ("derived autodiff:ndarray", "burn autodiff:ndarray"),
    ("derived autodiff:ndarray", "burn autodiff:flex"),
];

fn main() {
    // As the examples' training loops run (README): this thread is one of rayon's pool, computing a share of each
    // pass it splits. The pool is the process's, so every design, burn's and candle-nn's too, runs with it.
    dispatch_core::parallel::build_pool_with_calling_thread(0).expect("rayon's pool is built first");
    // Likewise the allocator keeps freed pages, for every design in the process.
    dispatch_core::memory::keep_freed_memory();
    let groups = [("peers/gpt_step", gpt_designs as fn() -> Vec<Design>, 31), ("peers/lenet_step", lenet_designs, 61)];
    for (group, designs, _) in groups {
        assert_losses_agree(group, designs);
    }
    for (group, designs, rounds) in groups {
        for (first, second) in PAIRS {
            paired(group, design(designs, first), design(designs, second), rounds);
        }
    }

    let mut criterion = Criterion::default().configure_from_args();
    for (group, designs, _) in groups {
        compare(&mut criterion, group, designs);
    }
    criterion.final_summary();
}
