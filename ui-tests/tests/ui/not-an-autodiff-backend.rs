use dispatch_core::backends::{Candle, CandleDevice};
use dispatch_core::{AutodiffBackend, Dispatch, Gradients, Result, Tensor};

#[derive(Clone, Debug, PartialEq, Dispatch)]
pub enum Device {
    #[backend(Candle)]
    Candle(CandleDevice),
}

/// Training code written once, for any backend that records gradients.
fn gradients_of<B: AutodiffBackend>(loss: &Tensor<B>) -> Result<Gradients<B>> {
    loss.backward()
}

fn main() -> Result<()> {
    let device = Device::Candle(CandleDevice::default());
    let loss = Tensor::<DeviceBackend>::zeros([1], &device)?;
    let _ = gradients_of(&loss)?;
    Ok(())
}
