//! The host family of the op list. Host ops: a function on the tensor's values in host memory, such as a collective.

/// The entries of the host family, appended to the list the chain has gathered so far.
#[doc(hidden)]
#[macro_export]
macro_rules! __ops_host {
    ($next:tt $callback:tt $context:tt $($entries:tt)*) => {
        $crate::__ops_chain! { $next $callback $context $($entries)*
            /// Runs a function on the tensor's values in host memory, e.g. a collective of the distributed engine.
            /// `Autodiff` overrides this to record `op.backward` in the graph, so a loss that goes through a
            /// collective trains correctly.
            fn host_op(tensor: Float, op: (::std::sync::Arc<dyn $crate::HostOp>)) -> Float = host_op, tracked;
        }
    };
}
