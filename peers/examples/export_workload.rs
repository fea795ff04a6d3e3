//! Writes a workload file for the comparison with PyTorch (BENCHMARKS.md, group 7): dispatch's initial weights by
//! dotted name, the batch, and the losses of dispatch's first steps on a device named like a user names it
//! (`dispatch_peers::exchange` describes the file):
//!
//!     cargo run --release --manifest-path peers/Cargo.toml --example export_workload -- gpt autodiff:ndarray gpt.safetensors
//!
//! (a workload, `gpt`, `gpt-large` or `lenet`; a device that records gradients; the file; optionally the number of
//! steps whose losses are recorded, 5 by default).

use std::path::PathBuf;

use dispatch_core::{Error, Result};
use dispatch_peers::devices::{DeviceBackend, training_device};
use dispatch_peers::exchange;
use dispatch_peers::run::Workload;

const USAGE: &str = "usage: export_workload <gpt|gpt-large|lenet> <autodiff device> <file> [steps]";

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [workload, device_name, path, rest @ ..] = args.as_slice() else {
        return Err(Error::invalid("export_workload", USAGE));
    };
    let steps = match rest {
        [] => 5,
        [steps] => steps.parse().map_err(|_| Error::invalid("export_workload", format!("steps `{steps}`: {USAGE}")))?,
        _ => return Err(Error::invalid("export_workload", USAGE)),
    };
    let (workload, device) = (workload.parse::<Workload>()?, training_device(device_name)?);
    let path = PathBuf::from(path);
    let losses = exchange::export::<DeviceBackend>(workload, &device, device_name, steps, &path)?;
    let shown: Vec<String> = losses.iter().map(|loss| format!("{loss:.6}")).collect();
    println!("{workload} on {device_name}: losses {} -> {}", shown.join(" "), path.display());
    Ok(())
}
