use dispatch_core::{Dispatch, DistributedDevice};

#[derive(Clone, Debug, PartialEq, Dispatch)]
pub enum Device {
    #[distributed]
    Cluster(DistributedDevice<Self>),
}

fn main() {}
