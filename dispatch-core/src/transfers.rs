//! Copies between a backend's memory and the host, counted per thread.
//!
//! Every copy counts: the user's own (`from_vec`, `to_vec`, `to_scalar`, `IntTensor::from_vec`, ...) and every one
//! made inside the library (a host default reading an operand, a backward rule, the collectives' staging, a derived
//! enum moving a tensor between its variants). On a GPU each is a device-to-host or host-to-device copy, so a
//! training step whose ops all run on the device makes only the copies its caller asks for: uploading the batch,
//! reading the loss. The count is a thread-local pair of integers, cheap enough to be always on.
//!
//! candle and ndarray count in their host primitives; a backend of your own counts its copies with
//! [`record_host_transfer`].
//!
//! ```
//! # use dispatch_core::backends::{NdArray, NdArrayDevice};
//! # use dispatch_core::{DType, Tensor, host_transfers};
//! let before = host_transfers();
//! let x = Tensor::<NdArray>::from_vec(vec![1.0, 2.0, 3.0], [3], &NdArrayDevice)?;
//! let y = x.exp()?.sum()?; // on the device: no copy
//! let total = y.to_scalar()?;
//! let copies = host_transfers().since(before);
//! assert_eq!((copies.calls, copies.values), (2, 4)); // three values up, one down
//! # Ok::<(), dispatch_core::Error>(())
//! ```

use std::cell::Cell;

/// How many copies between a backend's memory and the host, and how many values they moved.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct HostTransfers {
    /// The copies, each one call that moved a tensor's values (or a part of them) one way.
    pub calls: u64,
    /// The values those copies moved.
    pub values: u64,
}

impl HostTransfers {
    /// The copies made after `earlier` (a count taken before, on the same thread).
    pub fn since(self, earlier: HostTransfers) -> HostTransfers {
        HostTransfers {
            calls: self.calls.saturating_sub(earlier.calls),
            values: self.values.saturating_sub(earlier.values),
        }
    }
}

thread_local! {
    static COUNT: Cell<HostTransfers> = const { Cell::new(HostTransfers { calls: 0, values: 0 }) };
}

/// The copies between a backend's memory and the host made on this thread so far.
pub fn host_transfers() -> HostTransfers {
    COUNT.with(Cell::get)
}

/// Records one copy of `values` values between a backend's memory and the host on this thread: what a backend
/// calls in its primitives that move values (`from_vec`, `to_f64_vec`, `int_to_vec`, ...) and wherever else it
/// stages values in host memory.
pub fn record_host_transfer(values: usize) {
    COUNT.with(|count| {
        let total = count.get();
        count.set(HostTransfers {
            calls: total.calls.saturating_add(1),
            values: total.values.saturating_add(u64::try_from(values).unwrap_or(u64::MAX)),
        });
    });
}

/// `read`, a backend's copy of a tensor's values into host memory, recorded once it succeeded.
pub(crate) fn counted_read<T>(read: crate::error::Result<Vec<T>>) -> crate::error::Result<Vec<T>> {
    if let Ok(values) = &read {
        record_host_transfer(values.len());
    }
    read
}

/// `write`, a backend's copy of `values` host values into its memory, recorded once it succeeded.
pub(crate) fn counted_write<T>(values: usize, write: crate::error::Result<T>) -> crate::error::Result<T> {
    if write.is_ok() {
        record_host_transfer(values);
    }
    write
}
