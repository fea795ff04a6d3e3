//! Distributed devices: a group of ranks, each a local device of a derived enum.

mod device;

pub use device::DistributedDevice;
