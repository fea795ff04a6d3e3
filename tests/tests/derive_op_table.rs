//! The op list in dispatch-core is the only place that names every op: a derived enum's backend is expanded from it,
//! so it sends every op, defaulted ones included, to the variant's own backend, and the derive itself names none.

use std::cell::RefCell;

use dispatch_core::backend::{DEFAULTED_OPS, OPS};
use dispatch_core::backends::{NdArray, NdArrayDevice};
use dispatch_core::{Backend, Dispatch, Shape};

thread_local! {
    static REACHED: RefCell<Vec<&'static str>> = const { RefCell::new(Vec::new()) };
}

/// The ops `Recording` ran on this thread since the last call, in order.
fn take_reached() -> Vec<&'static str> {
    REACHED.with(|reached| std::mem::take(&mut *reached.borrow_mut()))
}

/// `NdArray` with every op of the op list written out (defaulted ones too), each noting that it ran.
#[derive(Clone, Copy, Debug, Default)]
pub struct Recording;

/// The callback that writes `Recording`'s ops: note the op, then run `NdArray`'s.
#[macro_export]
macro_rules! recording_ops {
    ({} $($(#[$doc:meta])* fn $op:ident($($param:ident: $kind:tt),*) -> $output:tt $(= $default:ident)? $(=> $derived:ident)?;)*) => {
        impl Backend for Recording {
            type Device = NdArrayDevice;
            type FloatTensor = <NdArray as Backend>::FloatTensor;
            type IntTensor = <NdArray as Backend>::IntTensor;
            type BoolTensor = <NdArray as Backend>::BoolTensor;

            fn name() -> String {
                "recording".to_owned()
            }

            $(
                fn $op($($param: dispatch_core::__op_param_type!(Self: $kind)),*) -> dispatch_core::__op_output_type!(Self: $output) {
                    REACHED.with(|reached| reached.borrow_mut().push(stringify!($op)));
                    <NdArray as Backend>::$op($($param),*)
                }
            )*
        }
    };
}

dispatch_core::__backend_ops! { crate::recording_ops {} }

#[derive(Clone, Debug, PartialEq, Dispatch)]
pub enum Device {
    #[backend(Recording)]
    Recording(NdArrayDevice),
}

/// A value of each kind of operand, on one device of the derived enum.
struct Operands {
    float: <DeviceBackend as Backend>::FloatTensor,
    floats: Vec<<DeviceBackend as Backend>::FloatTensor>,
    int: <DeviceBackend as Backend>::IntTensor,
    bool: <DeviceBackend as Backend>::BoolTensor,
    device: Device,
}

/// The callback that calls every op on the derived backend and records which ops reached `Recording`.
#[macro_export]
macro_rules! call_every_op {
    ({ $operands:ident, $reached:ident } $($(#[$doc:meta])* fn $op:ident($($param:ident: $kind:tt),*) -> $output:tt $(= $default:ident)? $(=> $derived:ident)?;)*) => {
        $(
            take_reached();
            let _ = <DeviceBackend as Backend>::$op($(dispatch_tests::sample_operand!($operands, $kind)),*);
            $reached.push((stringify!($op), take_reached()));
        )*
    };
}

#[test]
fn every_op_reaches_the_variants_own_backend_defaulted_ones_included() {
    let device = Device::Recording(NdArrayDevice);
    let float = DeviceBackend::from_vec(vec![1.0], Shape::new([1]), &device).unwrap();
    let operands = Operands {
        floats: vec![float.clone()],
        float,
        int: DeviceBackend::int_from_vec(vec![1], Shape::new([1]), &device).unwrap(),
        bool: DeviceBackend::bool_from_vec(vec![true], Shape::new([1]), &device).unwrap(),
        device,
    };
    let mut reached = Vec::new();
    dispatch_core::__backend_ops! { crate::call_every_op { operands, reached } }
    assert_eq!(reached.len(), OPS.len());
    for (op, ran) in reached {
        assert_eq!(ran, [op], "{op} through the derived enum ran {ran:?} on the variant's backend");
    }
    assert!(DEFAULTED_OPS.len() > 3, "{DEFAULTED_OPS:?}");
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
