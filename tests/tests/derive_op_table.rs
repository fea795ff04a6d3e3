//! The op list in dispatch-core is the only place that names every op: a derived enum's backend is expanded from it,
//! so it forwards every op, defaulted ones included, and the derive itself names none.

mod derive_support;

use std::sync::Arc;

use derive_support::host_backend::{HostBackend, HostDevice, take_overrides_reached};
use dispatch_core::backend::{DEFAULTED_OPS, OPS};
use dispatch_core::{Backend, Dispatch, HostOp, HostTensor, Result, Shape};

#[derive(Clone, Debug, PartialEq, Dispatch)]
pub enum Device {
    #[backend(HostBackend)]
    Host(HostDevice),
}

/// A host op that hands its input back.
struct Identity;

impl HostOp for Identity {
    fn name(&self) -> &'static str {
        "identity"
    }

    fn forward(&self, input: HostTensor) -> Result<HostTensor> {
        Ok(input)
    }

    fn backward(&self, grad_output: HostTensor) -> Result<HostTensor> {
        Ok(grad_output)
    }
}

/// Calls the op named `op` on the derived backend.
fn call(op: &str, device: &Device) -> Result<Vec<f32>> {
    let shape = Shape::from([2, 3]);
    let tensor = match op {
        "random_uniform" => DeviceBackend::random_uniform(shape, -1.0, 1.0, 7, device)?,
        "random_normal" => DeviceBackend::random_normal(shape, 0.0, 1.0, 7, device)?,
        "host_op" => {
            let input = DeviceBackend::full(shape, 2.0, device)?;
            DeviceBackend::host_op(&input, Arc::new(Identity))?
        }
        other => panic!("the op list gave `{other}` a default body: call it here, so that this test covers it"),
    };
    DeviceBackend::to_vec(&tensor)
}

#[test]
fn every_op_with_a_default_body_reaches_the_backends_own_override() -> Result<()> {
    let device = Device::Host(HostDevice);
    assert!(!DEFAULTED_OPS.is_empty());
    for &op in DEFAULTED_OPS {
        take_overrides_reached();
        let through_enum = call(op, &device)?;
        assert_eq!(take_overrides_reached(), [op], "{op} did not reach HostBackend's own {op}");
        // And the same values as the backend called directly.
        let direct = match op {
            "random_uniform" => HostBackend::random_uniform([2, 3].into(), -1.0, 1.0, 7, &HostDevice)?,
            "random_normal" => HostBackend::random_normal([2, 3].into(), 0.0, 1.0, 7, &HostDevice)?,
            _ => HostBackend::host_op(&HostBackend::full([2, 3].into(), 2.0, &HostDevice)?, Arc::new(Identity))?,
        };
        assert_eq!(through_enum, HostBackend::to_vec(&direct)?, "{op}");
    }
    Ok(())
}

#[test]
fn the_op_list_names_each_op_once() {
    let mut names = OPS.to_vec();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), OPS.len(), "{OPS:?}");
    assert!(DEFAULTED_OPS.iter().all(|op| OPS.contains(op)));
}

/// Every `.rs` file below `dir`, with its text.
fn sources(dir: &std::path::Path, into: &mut Vec<(std::path::PathBuf, String)>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, into);
        } else if path.extension().is_some_and(|extension| extension == "rs") {
            let text = std::fs::read_to_string(&path).unwrap();
            into.push((path, text));
        }
    }
}

#[test]
fn the_derive_names_no_op() {
    let derive_src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../dispatch-derive/src");
    let mut files = Vec::new();
    sources(&derive_src, &mut files);
    assert!(files.len() > 5, "found only {} files in {}", files.len(), derive_src.display());
    for (path, text) in &files {
        for op in OPS {
            let quoted = format!("\"{op}\"");
            assert!(!text.contains(&quoted), "{} names the op {quoted}", path.display());
        }
    }
}
