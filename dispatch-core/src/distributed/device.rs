//! The device a `#[distributed]` variant holds.

use std::fmt::{self, Debug, Display};
use std::str::FromStr;
use std::sync::Arc;

use crate::device::{Dispatch, ParseDeviceError};
use crate::error::{Error, Result};

/// A group of ranks, each rank a local device of the derived enum `D` (any of its backends).
///
/// Cloning is cheap; clones share the group.
pub struct DistributedDevice<D: Dispatch> {
    group: Arc<GroupSpec<D>>,
}

struct GroupSpec<D: Dispatch> {
    ranks: Vec<D::Local>,
}

impl<D: Dispatch> DistributedDevice<D> {
    /// Ranks that are threads of this process, one per device in `ranks`.
    pub fn in_process(ranks: Vec<D::Local>) -> Result<Self> {
        if ranks.is_empty() {
            return Err(Error::invalid("DistributedDevice::in_process", "a group needs at least one rank"));
        }
        Ok(Self { group: Arc::new(GroupSpec { ranks }) })
    }

    pub fn world_size(&self) -> usize {
        self.group.ranks.len()
    }

    /// The local device of every rank, by rank index.
    pub fn local_devices(&self) -> &[D::Local] {
        &self.group.ranks
    }
}

impl<D: Dispatch> Clone for DistributedDevice<D> {
    fn clone(&self) -> Self {
        Self { group: Arc::clone(&self.group) }
    }
}

impl<D: Dispatch> Debug for DistributedDevice<D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DistributedDevice").field("ranks", &self.group.ranks).finish()
    }
}

/// Two devices are equal when they describe the same ranks.
impl<D: Dispatch> PartialEq for DistributedDevice<D> {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.group, &other.group) || self.group.ranks == other.group.ranks
    }
}

/// The rank devices separated by commas (`ndarray,candle`); the enum's `Display` puts the variant's name in
/// front (`cluster:ndarray,candle`).
impl<D: Dispatch> Display for DistributedDevice<D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (index, rank) in self.group.ranks.iter().enumerate() {
            if index > 0 {
                f.write_str(",")?;
            }
            Display::fmt(rank, f)?;
        }
        Ok(())
    }
}

/// Reads what follows the variant's name: a comma-separated list of rank devices (`ndarray,candle`), or nothing
/// for two in-process ranks on the first compiled-in local device.
impl<D: Dispatch> FromStr for DistributedDevice<D> {
    type Err = ParseDeviceError;

    fn from_str(spec: &str) -> Result<Self, Self::Err> {
        let ranks = if spec.is_empty() {
            let Some(first) = D::Local::names().first() else {
                return Err(ParseDeviceError::invalid(spec, "the enum has no local device to run ranks on"));
            };
            let device: D::Local = first.parse()?;
            vec![device.clone(), device]
        } else {
            spec.split(',').map(|name| name.trim().parse()).collect::<Result<Vec<_>, _>>()?
        };
        Self::in_process(ranks).map_err(|error| ParseDeviceError::invalid(spec, error.to_string()))
    }
}
