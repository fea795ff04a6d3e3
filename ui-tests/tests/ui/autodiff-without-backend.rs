use dispatch_core::{AutodiffDevice, Dispatch};

#[derive(Clone, Debug, PartialEq, Dispatch)]
pub enum Device {
    #[autodiff]
    Autodiff(AutodiffDevice<Self>),
}

fn main() {}
