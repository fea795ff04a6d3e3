//! What the peer benchmark and its profiling example share: the workload every design trains on, and the peers
//! that need more than a few lines (burn's GPT and LeNet).

pub mod burn_peer;

/// The one workload of every design: the main job's GPT on a fixed batch of ids, and LeNet on seeded images.
pub mod workload {
    use dispatch_core::{Backend, DType, DeviceOf, Result, Tensor};
    use dispatch_nn::models::GptConfig;

    /// The main job's GPT.
    pub const GPT: GptConfig = GptConfig { vocabulary: 96, context: 64, width: 64, heads: 4, layers: 2 };
    /// Sequences in a GPT batch.
    pub const GPT_BATCH: usize = 16;
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
        let ids: Vec<i64> =
            (0..GPT_BATCH * (GPT.context + 1)).map(|i| ((i * 7919 + 13) % GPT.vocabulary) as i64).collect();
        let (mut inputs, mut targets) = (Vec::new(), Vec::new());
        for row in ids.chunks(GPT.context + 1) {
            inputs.extend_from_slice(&row[..GPT.context]);
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
