//! The real backends, and the `Autodiff` decorator over any of them.

mod autodiff;

pub use autodiff::{Autodiff, AutodiffTensor};
