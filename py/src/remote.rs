//! The halves of a run without a shared directory, from Python (for Ray actors):
//! `SelfPlayWorker` is handed a config as TOML text and weights as bytes and hands back its
//! finished games as shard bytes; `Learner` takes those shards, trains, and hands out weights.

use std::path::PathBuf;
use std::sync::Mutex;

use morris_eval::LadderJudge;
use morris_eval::judge::judge_for;
use morris_train::run::{LearnerSession, SelfPlayWorker};
use morris_train::store::{EncodedShard, RunDir};
use morris_train::{Start, TrainConfig, TrainError};
use pyo3::exceptions::{PyRuntimeError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};

use crate::train_error;

/// A self-play worker without a run directory: `SelfPlayWorker(config_text, name, weights,
/// step=0, seed=0, set=[], device=None)` plays the self-play of the config (TOML text, with
/// `section.key=value` overrides) with `weights` (a `model.safetensors` file's bytes) and
/// `play(min_positions)` returns its finished games as shards.
#[pyclass(name = "SelfPlayWorker", module = "morris._morris")]
pub struct PySelfPlayWorker {
    // Boxed: the Python object holding a pyclass is only 16-byte aligned, and the worker's
    // types may ask for more (a learner held inline crashed on an aligned move).
    inner: Mutex<Box<SelfPlayWorker>>,
}

/// The lock of a worker whose earlier call panicked is refused, not reused.
fn poisoned<T>(_: T) -> PyErr {
    PyRuntimeError::new_err("this object failed (panicked) in an earlier call and cannot be used")
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
        Ok(PySelfPlayWorker { inner: Mutex::new(Box::new(worker)) })
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
    fn model_step(&self, py: Python<'_>) -> PyResult<u64> {
        // The lock is waited for without the GIL: another thread may be in `play`.
        py.detach(|| Ok(self.inner.lock().map_err(poisoned)?.model_step()))
    }

    /// Games finished so far.
    #[getter]
    fn games(&self, py: Python<'_>) -> PyResult<u64> {
        // The lock is waited for without the GIL: another thread may be in `play`.
        py.detach(|| Ok(self.inner.lock().map_err(poisoned)?.games()))
    }

    /// Positions recorded so far (of finished and running games).
    #[getter]
    fn positions(&self, py: Python<'_>) -> PyResult<u64> {
        // The lock is waited for without the GIL: another thread may be in `play`.
        py.detach(|| Ok(self.inner.lock().map_err(poisoned)?.positions()))
    }
}

/// The learner of a run fed by callers: `Learner(run_dir, config_text=None, set=[])` opens the
/// run in `run_dir` (a new run from `config_text`, TOML, when the directory holds none; otherwise
/// it continues from its latest checkpoint, so a restarted learner resumes), `accept(shard)`
/// takes a shard dict from `SelfPlayWorker.play`, `train(max_steps)` trains as far as the reuse
/// cap allows, `weights()` gives the newest published weights, and `finish()` ends the run.
/// The run directory is `train`'s (checkpoints, `metrics.jsonl`, TensorBoard events). A run that
/// has spent its budget is refused unless `reopen=True` (a learner restarted after its last
/// step): then `train` trains nothing and reports done, and `accept` and `finish` still work.
#[pyclass(name = "Learner", module = "morris._morris")]
pub struct PyLearner {
    /// `None` once finished. Boxed: the Python object is only 16-byte aligned, and the
    /// session's types ask for more (held inline, an aligned move in it crashed).
    inner: Mutex<Option<Box<LearnerSession>>>,
    config_text: String,
}

fn finished() -> PyErr {
    PyRuntimeError::new_err("the learner has finished (open the run again to train further)")
}

/// A shard dict (`SelfPlayWorker.play`'s) as the learner takes it.
fn shard_from(d: &Bound<'_, PyAny>) -> PyResult<EncodedShard> {
    let d =
        d.cast::<PyDict>().map_err(|_| PyTypeError::new_err("a shard is a dict from SelfPlayWorker.play"))?;
    let get = |key: &str| -> PyResult<Bound<'_, PyAny>> {
        d.get_item(key)?.ok_or_else(|| PyTypeError::new_err(format!("a shard dict has no '{key}'")))
    };
    let bytes = get("bytes")?;
    let bytes = bytes.cast::<PyBytes>().map_err(|_| PyTypeError::new_err("a shard's 'bytes' is bytes"))?;
    Ok(EncodedShard {
        worker: get("worker")?.extract()?,
        seq: get("seq")?.extract()?,
        games: get("games")?.extract()?,
        positions: get("positions")?.extract()?,
        bytes: bytes.as_bytes().to_vec(),
        sha256: get("sha256")?.extract()?,
    })
}

#[pymethods]
impl PyLearner {
    #[new]
    #[pyo3(signature = (run_dir, config_text = None, set = Vec::new(), *, reopen = false))]
    fn new(
        py: Python<'_>,
        run_dir: PathBuf,
        config_text: Option<&str>,
        set: Vec<String>,
        reopen: bool,
    ) -> PyResult<PyLearner> {
        let text = config_text.map(str::to_string);
        py.detach(move || {
            let dir = RunDir::new(&run_dir);
            let holds_run = dir.config().exists() || dir.checkpoints().is_dir();
            if !holds_run {
                let Some(text) = text else {
                    return Err(train_error(TrainError::NotFound {
                        what: "no run in",
                        path: run_dir.clone(),
                        hint: "(give config_text to start one)".into(),
                    }));
                };
                // Checked before anything is written: its keys, and the judge its [eval] asks for.
                checked_config(&text, &set)?;
                std::fs::create_dir_all(&run_dir)
                    .map_err(|e| train_error(TrainError::io("create", &run_dir, e)))?;
                morris_train::store::files::write_atomic(&dir.config(), text.as_bytes())
                    .map_err(train_error)?;
            }
            let start = Start::decide(None, Some(&run_dir), &set).map_err(train_error)?;
            let judge = judge_for(&start).map_err(train_error)?;
            let session = if reopen {
                LearnerSession::reopen(start, Some(judge)).map_err(train_error)?
            } else {
                LearnerSession::open(start, Some(judge)).map_err(train_error)?.ok_or_else(|| {
                    PyRuntimeError::new_err(format!(
                        "the run in {} has already spent its budget (raise schedule.total_steps with set=[...])",
                        run_dir.display()
                    ))
                })?
            };
            let config_text = session.config().to_toml();
            Ok(PyLearner { inner: Mutex::new(Some(Box::new(session))), config_text })
        })
    }

    /// The run's resolved config as TOML (what `SelfPlayWorker` takes).
    #[getter]
    fn config_text(&self) -> &str {
        &self.config_text
    }

    /// `(step, weights)`: the newest published model's step and its `model.safetensors` bytes.
    fn weights<'py>(&self, py: Python<'py>) -> PyResult<(u64, Bound<'py, PyBytes>)> {
        let (step, bytes) = py.detach(|| {
            let guard = self.inner.lock().map_err(poisoned)?;
            guard.as_ref().ok_or_else(finished)?.weights().map_err(train_error)
        })?;
        Ok((step, PyBytes::new(py, &bytes)))
    }

    /// Takes shard dicts (one, or a list) from `SelfPlayWorker.play`; returns the positions
    /// added. A damaged shard raises `FileFormatError` naming its worker and number (the shards
    /// before it in the list are kept).
    fn accept(&self, py: Python<'_>, shards: &Bound<'_, PyAny>) -> PyResult<u64> {
        let shards: Vec<EncodedShard> = if let Ok(list) = shards.cast::<PyList>() {
            list.iter().map(|d| shard_from(&d)).collect::<PyResult<_>>()?
        } else {
            vec![shard_from(shards)?]
        };
        py.detach(|| {
            let mut guard = self.inner.lock().map_err(poisoned)?;
            let session = guard.as_mut().ok_or_else(finished)?;
            let mut added = 0;
            for shard in &shards {
                added += session.accept(shard).map_err(train_error)?;
            }
            Ok(added)
        })
    }

    /// Up to `max_steps` optimizer steps, as far as the replay window and the reuse cap allow,
    /// with the GIL released. Returns a dict: `steps` taken, `step` reached, `published_step`
    /// (of `weights()`), `done` (the budget is spent: call `finish()`).
    fn train<'py>(&self, py: Python<'py>, max_steps: u64) -> PyResult<Bound<'py, PyDict>> {
        let report = py.detach(|| {
            let mut guard = self.inner.lock().map_err(poisoned)?;
            guard.as_mut().ok_or_else(finished)?.train(max_steps).map_err(train_error)
        })?;
        let d = PyDict::new(py);
        d.set_item("steps", report.steps)?;
        d.set_item("step", report.step)?;
        d.set_item("published_step", report.published_step)?;
        d.set_item("done", report.done)?;
        Ok(d)
    }

    /// Writes a checkpoint of the current step.
    fn checkpoint(&self, py: Python<'_>) -> PyResult<()> {
        py.detach(|| {
            let mut guard = self.inner.lock().map_err(poisoned)?;
            guard.as_mut().ok_or_else(finished)?.checkpoint().map_err(train_error)
        })
    }

    /// Ends the run: a last checkpoint and evaluation, the last metrics, `FINISHED`, and the run
    /// directory's locks let go. The learner takes no more calls.
    fn finish(&self, py: Python<'_>) -> PyResult<()> {
        py.detach(|| {
            let mut guard = self.inner.lock().map_err(poisoned)?;
            guard.take().ok_or_else(finished)?.finish().map_err(train_error)
        })
    }
}

/// Checks a run's config (TOML text with `section.key=value` overrides) as `Learner` does before
/// it writes anything, the judge its `[eval]` asks for included, and returns it resolved, every
/// key filled in, as TOML (what a driver reads to place the run's actors). Raises `ValueError`
/// naming the key.
#[pyfunction]
#[pyo3(signature = (config_text, set = Vec::new()))]
fn resolve_config(config_text: &str, set: Vec<String>) -> PyResult<String> {
    Ok(checked_config(config_text, &set)?.to_toml())
}

/// A new run's config as `Learner` checks it before writing anything: its keys, and the judge its
/// `[eval]` asks for.
fn checked_config(text: &str, set: &[String]) -> PyResult<TrainConfig> {
    let config = TrainConfig::from_toml(text, set).map_err(|e| train_error(TrainError::from(e)))?;
    LadderJudge::from_config(&config).map_err(|e| train_error(TrainError::from(e)))?;
    Ok(config)
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(resolve_config, m)?)?;
    m.add_class::<PySelfPlayWorker>()?;
    m.add_class::<PyLearner>()?;
    Ok(())
}
