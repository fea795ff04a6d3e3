use dispatch_core::backends::{Autodiff, Candle};

/// Outside the derive too, an autodiff backend inside an autodiff backend cannot be named.
pub fn twice(_: Autodiff<Autodiff<Candle>>) {}

fn main() {}
