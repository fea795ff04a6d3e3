//! The machinery of `cross_backend.rs`: programs, the reference interpreter they are checked against, the planner
//! that draws them, and the runner that runs them on a backend.

pub mod attention_error;
pub mod check;
pub mod draw;
pub mod error_bound;
pub mod gradient;
pub mod gradient_error;
pub mod interpret;
pub mod layer_norm_error;
pub mod plan;
pub mod program;
pub mod reference;
pub mod run;
pub mod softmax_error;
pub mod table_ops;
pub mod values;
