//! The workload file that dispatch hands to the PyTorch driver (`peers/torch/step.py`): one safetensors file with
//! everything the other side needs to train the same model on the same batch and to check that it does.
//!
//! - `model.<dotted name>`: the initial parameters in dispatch's layout (a linear weight is `[inputs, outputs]`,
//!   PyTorch's is the transpose; the driver transposes);
//! - `workload.inputs`, `workload.targets` (a GPT's ids, `[sequences, context]`) or `workload.images`,
//!   `workload.labels` (LeNet), as f32: the record format stores floats, and ids and labels below 2^24 are exact;
//! - `workload.losses`: the loss before each of the first steps dispatch took, f64;
//! - metadata: the workload's name and sizes, AdamW's hyper-parameters, the layer norms' epsilon, the device the
//!   losses come from.

use std::path::Path;

use dispatch_core::{AutodiffBackend, DType, DeviceOf, Error, Result, Tensor};
use dispatch_nn::record::{self, Metadata};

use crate::run::{Initial, Workload, WorkloadRun, adamw_hyperparameters};
use crate::workload::{LENET_CLASSES, LENET_IMAGES, gpt_batch_of, lenet_images, lenet_labels};

/// The name under which the workload file keeps the losses.
const LOSSES: &str = "workload.losses";

/// Trains `workload` `steps` steps on `device` (named `device_name`) and writes its initial weights, batch and losses
/// to `path`; returns the losses.
pub fn export<B: AutodiffBackend>(
    workload: Workload,
    device: &(impl DeviceOf<B> + ?Sized),
    device_name: &str,
    steps: usize,
    path: &Path,
) -> Result<Vec<f32>> {
    let initial = Initial::<B>::new(workload, device)?;
    let mut run = WorkloadRun::<B>::new(workload, device)?;
    let losses = (0..steps).map(|_| run.step()).collect::<Result<Vec<f32>>>()?;

    let mut named: Vec<(String, Tensor<B>)> =
        initial.params.into_iter().map(|(name, param)| (format!("model.{name}"), param)).collect();
    let as_floats = |values: Vec<i64>, dims: Vec<usize>| {
        Tensor::<B>::from_f64_vec(values.into_iter().map(|value| value as f64).collect(), dims, DType::F32, device)
    };
    let mut metadata = Metadata::new();
    let mut note = |key: &str, value: String| metadata.insert(key.to_owned(), value);
    note("workload", workload.to_string());
    note("device", device_name.to_owned());
    match workload.gpt() {
        Some((config, sequences)) => {
            let (inputs, targets) = gpt_batch_of(config, sequences);
            let dims = vec![sequences, config.context];
            named.push(("workload.inputs".to_owned(), as_floats(inputs, dims.clone())?));
            named.push(("workload.targets".to_owned(), as_floats(targets, dims)?));
            note("vocabulary", config.vocabulary.to_string());
            note("context", config.context.to_string());
            note("width", config.width.to_string());
            note("heads", config.heads.to_string());
            note("layers", config.layers.to_string());
            note("sequences", sequences.to_string());
        }
        None => {
            named.push(("workload.images".to_owned(), lenet_images(device)?));
            named.push(("workload.labels".to_owned(), as_floats(lenet_labels(), vec![LENET_IMAGES[0]])?));
            note("classes", LENET_CLASSES.to_string());
        }
    }
    if let Some(eps) = initial.layer_norm_eps {
        note("layer_norm_eps", format!("{eps:e}"));
    }
    for (key, value) in adamw_hyperparameters::<B>() {
        note(key, format!("{value:e}"));
    }
    let recorded = losses.iter().map(|&loss| f64::from(loss)).collect();
    named.push((LOSSES.to_owned(), Tensor::from_f64_vec(recorded, [losses.len()], DType::F64, device)?));
    let bytes = record::to_bytes_with_metadata(&named, &metadata)?;
    std::fs::write(path, bytes).map_err(|error| Error::Io { op: "export", path: path.to_path_buf(), error })?;
    Ok(losses)
}

/// What dispatch's side reads back from a workload file: the workload and the losses to agree with.
pub struct Exported {
    pub workload: Workload,
    pub losses: Vec<f64>,
}

/// Reads `path`'s workload and losses.
pub fn read<B: AutodiffBackend>(path: &Path, device: &B::Device) -> Result<Exported> {
    let bytes = std::fs::read(path).map_err(|error| Error::Io { op: "read", path: path.to_path_buf(), error })?;
    let name = record::metadata_from_bytes(&bytes)?.remove("workload").ok_or_else(|| {
        Error::invalid("exchange::read", format!("{} names no workload: not a file of export_workload", path.display()))
    })?;
    let losses = record::from_bytes::<B>(&bytes, device)?
        .into_iter()
        .find(|(name, _)| name == LOSSES)
        .ok_or_else(|| Error::invalid("exchange::read", format!("{} holds no `{LOSSES}`", path.display())))?
        .1;
    if losses.dims().len() != 1 {
        return Err(Error::unexpected_shape("exchange::read", "losses [steps]", &losses.shape()));
    }
    Ok(Exported { workload: name.parse()?, losses: losses.to_f64_vec()? })
}
