//! The real backends, and the `Autodiff` decorator over any of them.
