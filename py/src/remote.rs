//! Self-play without a run directory from Python: `SelfPlayWorker` is handed a config as TOML
//! text and weights as bytes, and hands back its finished games as shard bytes (for Ray actors).

use std::sync::Mutex;

use morris_train::run::SelfPlayWorker;
use morris_train::{TrainConfig, TrainError};
use pyo3::exceptions::PyRuntimeError;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};

use crate::train_error;

/// A self-play worker without a run directory: `SelfPlayWorker(config_text, name, weights,
/// step=0, seed=0, set=[], device=None)` plays the self-play of the config (TOML text, with
/// `section.key=value` overrides) with `weights` (a `model.safetensors` file's bytes) and
/// `play(min_positions)` returns its finished games as shards.
#[pyclass(name = "SelfPlayWorker", module = "morris._morris")]
pub struct PySelfPlayWorker {
    inner: Mutex<SelfPlayWorker>,
}

/// The lock of a worker whose earlier call panicked is refused, not reused.
fn poisoned<T>(_: T) -> PyErr {
    PyRuntimeError::new_err("the self-play worker failed in an earlier call")
}

#[pymethods]
impl PySelfPlayWorker {
    #[new]
    #[pyo3(signature = (config_text, name, weights, step = 0, seed = 0, set = Vec::new(), device = None))]
    #[allow(clippy::too_many_arguments)]
    fn new(
        py: Python<'_>,
        config_text: &str,
        name: &str,
        weights: &[u8],
        step: u64,
        seed: u64,
        set: Vec<String>,
        device: Option<String>,
    ) -> PyResult<PySelfPlayWorker> {
        let config =
            TrainConfig::from_toml(config_text, &set).map_err(|e| train_error(TrainError::from(e)))?;
        let (name, weights) = (name.to_string(), weights.to_vec());
        let worker = py
            .detach(move || SelfPlayWorker::new(&config, &name, seed, device.as_deref(), weights, step))
            .map_err(train_error)?;
        Ok(PySelfPlayWorker { inner: Mutex::new(worker) })
    }

    /// Plays on with `weights` of the model at `step` (nothing changes for the step it has).
    /// Weights of another network shape raise `FileFormatError` naming the worker; it keeps
    /// the ones it had.
    fn set_weights(&self, py: Python<'_>, weights: &[u8], step: u64) -> PyResult<()> {
        let weights = weights.to_vec();
        py.detach(|| self.inner.lock().map_err(poisoned)?.set_weights(weights, step).map_err(train_error))
    }

    /// Plays until at least `min_positions` new positions are recorded (the GIL released), then
    /// returns the finished games not yet returned as a list of shards, each a dict: `worker`,
    /// `seq` (its number among the worker's shards), `games`, `positions`, `bytes` (the shard,
    /// as `morris.read_shards` and the learner read it) and `sha256` (of `bytes`, hex).
    fn play<'py>(&self, py: Python<'py>, min_positions: u64) -> PyResult<Bound<'py, PyList>> {
        let shards =
            py.detach(|| self.inner.lock().map_err(poisoned)?.play(min_positions).map_err(train_error))?;
        let out = PyList::empty(py);
        for s in shards {
            let d = PyDict::new(py);
            d.set_item("worker", s.worker)?;
            d.set_item("seq", s.seq)?;
            d.set_item("games", s.games)?;
            d.set_item("positions", s.positions)?;
            d.set_item("bytes", PyBytes::new(py, &s.bytes))?;
            d.set_item("sha256", s.sha256)?;
            out.append(d)?;
        }
        Ok(out)
    }

    /// The step of the model it plays with.
    #[getter]
    fn model_step(&self) -> PyResult<u64> {
        Ok(self.inner.lock().map_err(poisoned)?.model_step())
    }

    /// Games finished so far.
    #[getter]
    fn games(&self) -> PyResult<u64> {
        Ok(self.inner.lock().map_err(poisoned)?.games())
    }

    /// Positions recorded so far (of finished and running games).
    #[getter]
    fn positions(&self) -> PyResult<u64> {
        Ok(self.inner.lock().map_err(poisoned)?.positions())
    }
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PySelfPlayWorker>()?;
    Ok(())
}
