use dispatch_core::Dispatch;

#[derive(Dispatch)]
pub struct Device {
    cpu: u8,
}

fn main() {}
