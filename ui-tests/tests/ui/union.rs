use dispatch_core::Dispatch;

#[derive(Dispatch)]
pub union Device {
    cpu: u8,
}

fn main() {}
