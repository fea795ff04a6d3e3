use dispatch_core::Dispatch;

#[derive(Clone, Debug, PartialEq, Dispatch)]
pub enum Device {}

fn main() {}
