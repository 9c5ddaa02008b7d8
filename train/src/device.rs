//! Runtime device selection from a config string (`flex`, `cuda:N`, `wgpu`), gated by cargo features.

use burn::prelude::*;

use crate::error::{Result, TrainError};

/// The device names this build accepts, for help texts and error messages.
///
/// `flex` is always there; `cuda`/`cuda:N` need the `cuda` cargo feature and `wgpu` the
/// `wgpu` feature.
pub fn supported_device_names() -> Vec<&'static str> {
    #[allow(unused_mut)] // Only the GPU features push more names.
    let mut names = vec!["flex"];
    #[cfg(feature = "cuda")]
    names.extend(["cuda", "cuda:N"]);
    #[cfg(feature = "wgpu")]
    names.push("wgpu");
    names
}

/// Parses a device name (case-insensitive, surrounding spaces ignored):
///
/// * `flex`: burn's pure-Rust CPU backend, always available. It runs on the rayon pool it is
///   called from (see [`crate::net_evaluator`] for the thread behaviour);
/// * `cuda` or `cuda:N`: CUDA device 0 or `N` (cargo feature `cuda`);
/// * `wgpu`: the default wgpu adapter (cargo feature `wgpu`).
///
/// The result is a plain (inference) device; call `.autodiff()` on it for training.
///
/// # Errors
/// For an unknown name, a malformed CUDA index, or a backend whose cargo feature is off in
/// this build; the message lists the names this build supports.
///
/// # Examples
/// ```
/// use morris_train::device::device_from_name;
///
/// let device = device_from_name("flex").unwrap();
/// assert_eq!(device, burn::prelude::Device::flex());
/// assert!(device_from_name("tpu").unwrap_err().to_string().contains("flex"));
/// ```
pub fn device_from_name(name: &str) -> Result<Device> {
    let lower = name.trim().to_ascii_lowercase();
    let (backend, index) = match lower.split_once(':') {
        Some((b, i)) => (b, Some(i)),
        None => (lower.as_str(), None),
    };
    let supported = || supported_device_names().join(", ");
    match (backend, index) {
        ("flex", None) => Ok(Device::flex()),
        ("cuda", index) => cuda(index, name, &supported()),
        ("wgpu", None) => wgpu(&supported()),
        _ => {
            Err(TrainError::Device(format!("unknown device '{name}'; this build supports: {}", supported())))
        }
    }
}

#[cfg(feature = "cuda")]
fn cuda(index: Option<&str>, name: &str, supported: &str) -> Result<Device> {
    let index = match index {
        None => 0,
        Some(i) => i.parse::<usize>().map_err(|_| {
            TrainError::Device(format!(
                "device '{name}': the CUDA index must be a number (cuda:0); this build supports: {supported}"
            ))
        })?,
    };
    Ok(Device::cuda(index))
}

#[cfg(not(feature = "cuda"))]
fn cuda(_index: Option<&str>, name: &str, supported: &str) -> Result<Device> {
    Err(TrainError::Device(format!(
        "device '{name}' needs the `cuda` cargo feature, which this build lacks \
         (rebuild with --features cuda); this build supports: {supported}"
    )))
}

#[cfg(feature = "wgpu")]
fn wgpu(_supported: &str) -> Result<Device> {
    Ok(Device::wgpu(DeviceKind::DefaultDevice))
}

#[cfg(not(feature = "wgpu"))]
fn wgpu(supported: &str) -> Result<Device> {
    Err(TrainError::Device(format!(
        "device 'wgpu' needs the `wgpu` cargo feature, which this build lacks \
         (rebuild with --features wgpu); this build supports: {supported}"
    )))
}
