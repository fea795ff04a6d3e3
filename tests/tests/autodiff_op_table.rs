//! `Autodiff` cuts no graph silently: every op of the op list that turns float tensors into a float tensor, called
//! on tracked operands, gives an output that records a graph. An op with a host default that `Autodiff` forgot to
//! override would compute its output through host memory, untracked; this test names it.

use dispatch_core::backends::{Autodiff, NdArray, NdArrayDevice};
use dispatch_core::{AutodiffBackend, Backend, Shape};

type Ad = Autodiff<NdArray>;

/// The ops whose float output records no graph by design: creation from host values or shapes, casts from int and
/// bool tensors.
const UNTRACKED_BY_DESIGN: &[&str] = &[
    "from_vec",
    "from_f64_vec",
    "full",
    "random_uniform",
    "random_normal",
    "int_to_float",
    "bool_to_float",
    "one_hot",
    "adam_step",
];

/// Operands of every kind, the float ones tracked: `[1, 1, 1, 1]`, so that the module ops, the broadcasts and the
/// matmuls all accept them.
struct Operands {
    float: <Ad as Backend>::FloatTensor,
    floats: Vec<<Ad as Backend>::FloatTensor>,
    int: <Ad as Backend>::IntTensor,
    bool: <Ad as Backend>::BoolTensor,
    device: NdArrayDevice,
}

/// Whether an output records a graph, by the output's kind; `None` for outputs that are not float tensors.
macro_rules! records_graph {
    (Float, $output:expr) => {
        Some($output.map(|tensor| <Ad as AutodiffBackend>::tensor_id(&tensor).is_some()))
    };
    ($other:tt, $output:expr) => {{
        let _ = $output;
        None
    }};
}

/// The callback that calls every op on tracked operands and notes which float outputs record a graph.
#[macro_export]
macro_rules! call_every_op_on_autodiff {
    ({ $operands:ident, $outcomes:ident } $($(#[$doc:meta])* fn $op:ident($($param:ident: $kind:tt),*) -> $output:tt $(= $default:ident)? $(=> $derived:ident)?, $autodiff:ident;)*) => {
        $(
            let outcome = records_graph!($output, <Ad as Backend>::$op($(dispatch_tests::sample_operand!($operands, $kind)),*));
            $outcomes.push((stringify!($op), outcome));
        )*
    };
}

#[test]
fn every_float_op_on_tracked_operands_records_a_graph() {
    let device = NdArrayDevice;
    let dims = Shape::new([1, 1, 1, 1]);
    let float = <Ad as Backend>::from_vec(vec![0.3], dims.clone(), &device).unwrap();
    let float = <Ad as AutodiffBackend>::require_grad(&float).unwrap();
    let operands = Operands {
        floats: vec![float.clone()],
        float,
        int: <Ad as Backend>::int_from_vec(vec![0], Shape::new([1]), &device).unwrap(),
        bool: <Ad as Backend>::bool_from_vec(vec![true], dims, &device).unwrap(),
        device,
    };
    let mut outcomes: Vec<(&str, Option<dispatch_core::Result<bool>>)> = Vec::new();
    dispatch_core::for_each_op! { crate::call_every_op_on_autodiff { operands, outcomes } }

    let (mut checked, mut unsampled) = (0, Vec::new());
    for (op, outcome) in outcomes {
        match outcome {
            None => {}
            Some(Ok(tracked)) if UNTRACKED_BY_DESIGN.contains(&op) => {
                assert!(!tracked, "{op} is listed as untracked by design but records a graph");
            }
            Some(Ok(tracked)) => {
                assert!(tracked, "Autodiff's {op} gives an untracked output: it cuts the graph (override it)");
                checked += 1;
            }
            Some(Err(error)) => unsampled.push((op, error.to_string())),
        }
    }
    // The ops these operands do not fit (1-D int indices against a rank-4 tensor, `low == high`, a length-1 line,
    // `[rows, classes]` logits, `[width]` parameters, `[2, ...]` moments): each has tests of its own. A new op must fit the
    // operands or join this list.
    let unsampled_ops: Vec<&str> = unsampled.iter().map(|(op, _)| *op).collect();
    let expected = [
        "random_uniform",
        "adam_step",
        "gather",
        "scatter_add",
        "embedding",
        "one_hot",
        "cross_entropy",
        "layer_norm",
        "layer_norm_backward",
        "fold2d",
        "conv1d",
    ];
    assert_eq!(unsampled_ops, expected, "{unsampled:#?}");
    assert!(checked > 50, "only {checked} float ops were checked");
}
