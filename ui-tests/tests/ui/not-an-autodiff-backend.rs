use dispatch_core::backends::{Candle, CandleDevice};
use dispatch_core::{DType, Dispatch, Result, Tensor};

#[derive(Clone, Debug, PartialEq, Dispatch)]
pub enum Device {
    #[backend(Candle)]
    Candle(CandleDevice),
}

fn main() -> Result<()> {
    let device = Device::Candle(CandleDevice::default());
    let weights = Tensor::<DeviceBackend>::zeros([1], DType::F32, &device)?.require_grad()?;
    let _ = weights.sum()?.backward()?;
    Ok(())
}
