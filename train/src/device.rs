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

/// Parses a device name (case-insensitive, surrounding spaces ignored) and checks that the
/// device is there:
///
/// * `flex`: burn's pure-Rust CPU backend, always available. It runs on the rayon pool it is
///   called from (see [`crate::net_evaluator`] for the thread behaviour);
/// * `cuda` or `cuda:N`: CUDA device 0 or `N` (cargo feature `cuda`), which this machine's
///   driver must list;
/// * `wgpu`: the default wgpu adapter (cargo feature `wgpu`): a GPU on Vulkan, Metal, DirectX
///   12 or OpenGL, or a software device such as Mesa's lavapipe where there is no GPU.
///
/// The result is a plain (inference) device; call `.autodiff()` on it for training. Nothing
/// is allocated on the device yet, so a caller can check every device it needs before it
/// writes anything.
///
/// # Errors
/// [`TrainError::Device`] for an unknown name, a malformed CUDA index, a backend whose cargo
/// feature is off in this build (the message lists the names this build supports), or a
/// device this machine does not have.
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

/// [`device_from_name`] for the device a config key names; errors start with the key
/// (`run.device: device 'wgpu' is not present: ...`).
///
/// # Errors
/// As [`device_from_name`].
pub fn device_for_key(key: &str, name: &str) -> Result<Device> {
    device_from_name(name).map_err(|e| match e {
        TrainError::Device(message) => TrainError::Device(format!("{key}: {message}")),
        other => other,
    })
}

/// What a device is, for logs: its name and, for a GPU backend, the adapter or card the
/// backend opened (e.g. `wgpu (llvmpipe (LLVM 15.0.6, 256 bits))`). Opens the device.
pub fn describe(name: &str, device: &Device) -> String {
    let name = name.trim().to_ascii_lowercase();
    #[cfg(any(feature = "cuda", feature = "wgpu"))]
    if let Some(identity) = device.identity() {
        return format!("{name} ({})", identity.name);
    }
    let _ = device;
    name
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
    // Asks the driver (cubecl loads libcuda at run time and answers "none" without one).
    let found = Device::enumerate(burn::tensor::DeviceType::Cuda).len();
    if index >= found {
        let have = match found {
            0 => "no CUDA device (no NVIDIA driver or no GPU)".to_string(),
            1 => "one CUDA device, cuda:0".to_string(),
            n => format!("{n} CUDA devices, cuda:0 to cuda:{}", n - 1),
        };
        return Err(TrainError::Device(format!("device '{name}' is not present: this machine has {have}")));
    }
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
    // Lists the adapters of every graphics API wgpu was built with, opening none of them.
    if Device::enumerate(burn::tensor::DeviceType::Wgpu).is_empty() {
        return Err(TrainError::Device(
            "device 'wgpu' is not present: wgpu found no adapter (Vulkan, Metal, DirectX 12 or \
             OpenGL); install the GPU's driver, or Mesa's software Vulkan device where there is no \
             GPU (Debian: apt-get install mesa-vulkan-drivers)"
                .into(),
        ));
    }
    Ok(Device::wgpu(DeviceKind::DefaultDevice))
}

#[cfg(not(feature = "wgpu"))]
fn wgpu(supported: &str) -> Result<Device> {
    Err(TrainError::Device(format!(
        "device 'wgpu' needs the `wgpu` cargo feature, which this build lacks \
         (rebuild with --features wgpu); this build supports: {supported}"
    )))
}
