//! Where each op of a backend runs: the copies between its memory and the host that the op's calls make, counted
//! with `dispatch_core::host_transfers`. An op that runs on the device makes none; a host default makes some for
//! every call (its operands down, its result up).

use dispatch_core::{Backend, DType, HostTransfers, host_transfers};

use crate::operands::Operands;
use crate::run::caught;

/// The host copies of one op's calls, in `F32`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OpResidency {
    /// The op, as the op list names it.
    pub op: &'static str,
    /// The copies its calls made, the calls that must compute and those that must fail together; `None` if one
    /// of them panicked.
    pub transfers: Option<HostTransfers>,
}

/// The callback that counts the host copies of every op's calls into `$found`. The operands are made first, so
/// their own uploads are not counted; the results are not read.
macro_rules! every_residency {
    ({ $b:ty, $operands:ident, $found:ident } $($(#[$doc:meta])* fn $op:ident($($param:ident: $kind:tt),*) -> $output:tt $(= $default:ident)? $(=> $derived:ident)?, $autodiff:ident;)*) => {
        $(
            let before = host_transfers();
            let transfers = caught(|| drop($crate::calls::$op::<$b>(&$operands))).ok().map(|()| host_transfers().since(before));
            $found.push(OpResidency { op: stringify!($op), transfers });
        )*
    };
}

pub(crate) use every_residency;

/// The host copies each op of the list makes on `B` (in `F32`, on the suite's operands), in the order of the op
/// list. `Err` says why the operands could not be made.
pub fn residency<B: Backend>(device: &B::Device) -> Result<Vec<OpResidency>, String> {
    let operands = Operands::<B>::new(device.clone(), DType::F32, &[DType::F32]).map_err(|error| error.to_string())?;
    let mut found = Vec::new();
    dispatch_core::for_each_op! { crate::residency::every_residency { B, operands, found } }
    Ok(found)
}
