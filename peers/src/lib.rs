//! What the peer benchmark and its examples share: the workload every design trains on, the peers that need more
//! than a few lines (burn's GPT and LeNet), and what the comparison with PyTorch (BENCHMARKS.md, group 7;
//! `peers/torch/`) runs on dispatch's side and hands to PyTorch's.

pub mod burn_peer;
pub mod devices;
pub mod exchange;
pub mod run;

/// The one workload of every design: the main job's GPT on a fixed batch of ids, and LeNet on seeded images.
pub mod workload {
    use dispatch_core::{Backend, DType, DeviceOf, Result, Tensor};
    use dispatch_nn::models::GptConfig;

    /// The main job's GPT.
    pub const GPT: GptConfig = GptConfig { vocabulary: 96, context: 64, width: 64, heads: 4, layers: 2 };
    /// Sequences in a GPT batch.
    pub const GPT_BATCH: usize = 16;
    /// Group 7's larger GPT, big enough for its matmuls to be measured against the machine's peak.
    pub const GPT_LARGE: GptConfig = GptConfig { vocabulary: 96, context: 128, width: 256, heads: 4, layers: 4 };
    /// Sequences in a batch of the larger GPT.
    pub const GPT_LARGE_BATCH: usize = 8;
    /// LeNet's batch: 32 images of one 28x28 channel.
    pub const LENET_IMAGES: [usize; 4] = [32, 1, 28, 28];
    /// LeNet's classes.
    pub const LENET_CLASSES: usize = 10;
    /// The seed of every design's initial weights.
    pub const SEED: u64 = 7;
    /// Every design's AdamW learning rate.
    pub const LEARNING_RATE: f64 = 3e-3;

    /// The GPT batch: ids and next ids (`[GPT_BATCH, context]`, row-major), from a fixed sequence.
    pub fn gpt_batch() -> (Vec<i64>, Vec<i64>) {
        gpt_batch_of(GPT, GPT_BATCH)
    }

    /// `sequences` rows of ids and next ids for `config` (`[sequences, context]`, row-major), from a fixed sequence.
    pub fn gpt_batch_of(config: GptConfig, sequences: usize) -> (Vec<i64>, Vec<i64>) {
        let ids: Vec<i64> =
            (0..sequences * (config.context + 1)).map(|i| ((i * 7919 + 13) % config.vocabulary) as i64).collect();
        let (mut inputs, mut targets) = (Vec::new(), Vec::new());
        for row in ids.chunks(config.context + 1) {
            inputs.extend_from_slice(&row[..config.context]);
            targets.extend_from_slice(&row[1..]);
        }
        (inputs, targets)
    }

    /// LeNet's images, uniform in [0, 1) from a seed (the same values on every backend).
    pub fn lenet_images<B: Backend>(device: &(impl DeviceOf<B> + ?Sized)) -> Result<Tensor<B>> {
        Tensor::random_uniform(LENET_IMAGES, (0.0, 1.0), 3, DType::F32, device)
    }

    /// LeNet's labels, one per image.
    pub fn lenet_labels() -> Vec<i64> {
        (0..LENET_IMAGES[0] as i64).map(|i| i % LENET_CLASSES as i64).collect()
    }
}
