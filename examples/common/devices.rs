//! Picking the examples' devices by name: every name parses through the derived `FromStr`, and training takes only
//! devices that record gradients.

use dispatch_core::device::BackendDevice;
use dispatch_core::{Dispatch, Route};

use crate::{Device, DeviceLocal};

/// The devices named, or every device here that records gradients; a named one that does not is an error.
pub fn training_devices(names: &[String]) -> Result<Vec<DeviceLocal>, String> {
    let devices = if names.is_empty() { DeviceLocal::available() } else { local_devices(names)? };
    let (training, others): (Vec<_>, Vec<_>) =
        devices.into_iter().partition(|device| matches!(device, DeviceLocal::Autodiff(_)));
    if !names.is_empty() && !others.is_empty() {
        return Err(format!(
            "training needs a device that records gradients, not {}; pick an autodiff device, e.g. autodiff:{}",
            names_of(&others),
            others[0]
        ));
    }
    if training.is_empty() {
        return Err("no device that records gradients is compiled in".to_owned());
    }
    Ok(training)
}

/// Each name parsed as a device of the enum; a distributed one belongs to the `data_parallel` example.
pub fn local_devices(names: &[String]) -> Result<Vec<DeviceLocal>, String> {
    names
        .iter()
        .map(|name| match name.parse::<Device>().map_err(|error| error.to_string())?.route() {
            Route::Local(device) => Ok(device),
            Route::Distributed(_) => Err(format!("`{name}` is a cluster: the data_parallel example trains on one")),
        })
        .collect()
}

/// The devices' names, comma-separated.
pub fn names_of(devices: &[DeviceLocal]) -> String {
    devices.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ")
}
