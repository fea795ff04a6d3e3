//! The default engine: ranks are threads of this process that reduce through shared memory. No set-up.

mod data;
mod engine;
mod loan;
mod rendezvous;
mod run;
mod shared_buffer;

pub(crate) use self::engine::InProcessEngine;
pub(crate) use self::run::run;
