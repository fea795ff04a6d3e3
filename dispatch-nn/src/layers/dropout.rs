//! Dropout with a seeded mask, so that a run is reproduced exactly on every device.

use std::sync::atomic::{AtomicU64, Ordering};

use dispatch_core::{Backend, DType, Error, Result, Tensor};

/// Zeroes each element with probability `p` in training and scales the rest by `1 / (1 - p)`; the identity in
/// evaluation. Call `n` draws its mask from `seed + n`, the same values on every backend.
#[derive(Debug)]
pub struct Dropout {
    p: f64,
    seed: u64,
    calls: AtomicU64,
}

impl Clone for Dropout {
    fn clone(&self) -> Self {
        Self { p: self.p, seed: self.seed, calls: AtomicU64::new(self.calls.load(Ordering::Relaxed)) }
    }
}

impl Dropout {
    /// `p` must be in `[0, 1)`.
    pub fn new(p: f64, seed: u64) -> Result<Self> {
        if !(0.0..1.0).contains(&p) {
            return Err(Error::invalid_value("Dropout::new", "p", p, "a probability in [0, 1)"));
        }
        Ok(Self { p, seed, calls: AtomicU64::new(0) })
    }

    /// `x` with dropout in training, `x` itself otherwise.
    pub fn forward<B: Backend>(&self, x: &Tensor<B>, training: bool) -> Result<Tensor<B>> {
        if !training || self.p == 0.0 {
            return Ok(x.clone());
        }
        let call = self.calls.fetch_add(1, Ordering::Relaxed);
        let seed = self.seed.wrapping_add(call);
        let draws = Tensor::<B>::random_uniform(x.shape(), (0.0, 1.0), seed, DType::F32, &x.device())?;
        let keep = draws.gt_scalar(self.p)?.float(x.dtype())?;
        x.mul(&keep)?.mul_scalar_into(1.0 / (1.0 - self.p))
    }
}
