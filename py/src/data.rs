//! The lab's files from Python: game shards as training arrays, and a model's weights, card and
//! network.

use std::path::PathBuf;
use std::sync::Mutex;

use burn::prelude::*;
use burn::tensor::Transaction;
use morris_env::NUM_PLANES;
use morris_eval::agents::LoadedModel;
use morris_train::model::PolicyValueNet;
use morris_train::replay::{Augment, TrainBatch};
use morris_train::store::read_net_config;
use morris_train::store::{
    MODEL_CARD_FILE, MODEL_FILE, ModelCard, Verification, read_shard, verify_manifest,
};
use numpy::{PyArray1, PyArray2, PyArrayMethods, PyReadonlyArray3, PyUntypedArrayMethods};
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use safetensors::{Dtype, SafeTensors};

use crate::{FileFormatError, existing, nine_rules_from, train_error};

/// Reads game shards (`RUN/games/*.shard`, written by self-play) into training arrays, with the
/// GIL released. Each shard's checksum and records are checked; a corrupt one raises
/// `FileFormatError` naming it.
///
/// `augment` is `"none"` (each position once), `"all"` (16 rows per position, one per board
/// symmetry) or `"random"` (one random symmetry per position, from `seed`). Returns a dict:
/// `observations` float32 `[M, 15, 24]`, `masks` bool `[M, 600]`, `policies` float32 `[M, 600]`
/// (all zero where `policy_weights` is 0), `wdl` float32 `[M, 3]` (one-hot win/draw/loss for
/// the player to move), `values` float32 `[M]` (+1, 0, −1), `policy_weights` float32 `[M]` (1
/// for positions with a full search), `games` (complete games read) and `positions` (before
/// augmentation).
#[pyfunction]
#[pyo3(signature = (paths, rules = None, augment = "none", seed = 0))]
fn read_shards<'py>(
    py: Python<'py>,
    paths: Vec<PathBuf>,
    rules: Option<&Bound<'py, PyAny>>,
    augment: &str,
    seed: u64,
) -> PyResult<Bound<'py, PyDict>> {
    let rules = nine_rules_from(rules, "self-play data")?;
    let augment = match augment {
        "none" => Augment::None,
        "all" => Augment::All,
        "random" => Augment::Random { seed },
        _ => {
            return Err(PyValueError::new_err(format!(
                "unknown augment '{augment}' (choices: none, all, random)"
            )));
        }
    };
    for p in &paths {
        existing(p, "game shard")?;
    }
    let (arrays, games, positions) = py.detach(|| -> PyResult<_> {
        let mut samples = Vec::new();
        let mut games = 0u64;
        for p in &paths {
            let shard = read_shard(p).map_err(train_error)?;
            if shard.variant != rules.variant {
                return Err(PyValueError::new_err(format!(
                    "{} holds games of the '{}' variant, not '{}'",
                    p.display(),
                    shard.variant,
                    rules.variant
                )));
            }
            games += shard.games as u64;
            samples.extend(shard.samples);
        }
        let positions = samples.len();
        Ok((TrainBatch::from_samples(&samples, &rules, augment).into_arrays(), games, positions))
    })?;
    let values: Vec<f32> = arrays.wdl.rows().into_iter().map(|r| r[0] - r[2]).collect();
    let out = PyDict::new(py);
    out.set_item("observations", numpy::PyArray3::from_owned_array(py, arrays.obs))?;
    out.set_item("masks", PyArray2::from_owned_array(py, arrays.legal))?;
    out.set_item("policies", PyArray2::from_owned_array(py, arrays.policy))?;
    out.set_item("wdl", PyArray2::from_owned_array(py, arrays.wdl))?;
    out.set_item("values", PyArray1::from_vec(py, values))?;
    out.set_item("policy_weights", PyArray1::from_owned_array(py, arrays.policy_weight))?;
    out.set_item("games", games)?;
    out.set_item("positions", positions)?;
    Ok(out)
}

/// The weights of the model in `dir` (a checkpoint, a published version or an export), as a
/// dict of float32 arrays named as in docs/file-formats.md (Linear weights are `[in, out]`).
/// The files are checked against the directory's `manifest.json` first.
#[pyfunction]
fn load_weights<'py>(py: Python<'py>, dir: PathBuf) -> PyResult<Bound<'py, PyDict>> {
    existing(&dir, "model directory")?;
    verify_manifest(&dir).map_err(train_error)?;
    let path = dir.join(MODEL_FILE);
    existing(&path, "model weights")?;
    let bytes = std::fs::read(&path)
        .map_err(|e| PyRuntimeError::new_err(format!("cannot read {}: {e}", path.display())))?;
    let corrupt = |reason: String| {
        FileFormatError::new_err(format!("corrupt model weights {}: {reason}", path.display()))
    };
    let tensors = SafeTensors::deserialize(&bytes).map_err(|e| corrupt(e.to_string()))?;
    let out = PyDict::new(py);
    let mut names = tensors.names();
    names.sort();
    for name in names {
        let view = tensors.tensor(name).map_err(|e| corrupt(e.to_string()))?;
        if view.dtype() != Dtype::F32 {
            return Err(corrupt(format!("tensor {name} is {:?}, not f32", view.dtype())));
        }
        let values: Vec<f32> =
            view.data().chunks_exact(4).map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])).collect();
        let array = PyArray1::from_vec(py, values).reshape(view.shape().to_vec())?;
        out.set_item(name, array)?;
    }
    Ok(out)
}

/// The model card (`model.json`) of an exported model as JSON text, or None for a directory
/// without one (a checkpoint). Raises `FileFormatError` for a malformed card.
#[pyfunction]
fn read_model_card(dir: PathBuf) -> PyResult<Option<String>> {
    existing(&dir, "model directory")?;
    if !dir.join(MODEL_CARD_FILE).exists() {
        return Ok(None);
    }
    let card = ModelCard::read(&dir).map_err(train_error)?;
    serde_json::to_string(&card).map(Some).map_err(|e| PyRuntimeError::new_err(e.to_string()))
}

/// The network shape of the model in `dir` (`config.json`, or the card's `net`), as JSON text.
#[pyfunction]
fn read_net_config_json(dir: PathBuf) -> PyResult<String> {
    existing(&dir, "model directory")?;
    let config = read_net_config(&dir).map_err(train_error)?;
    serde_json::to_string(&config).map_err(|e| PyRuntimeError::new_err(e.to_string()))
}

/// Policy logits `[B, 600]` and win/draw/loss logits `[B, 3]`.
type Outputs<'py> = (Bound<'py, PyArray2<f32>>, Bound<'py, PyArray2<f32>>);

/// A trained network on the CPU (burn's flex backend): `Network(dir)` loads a model directory
/// after checking its manifest; `evaluate(observations)` runs the forward pass.
#[pyclass(name = "Network", module = "morris._morris")]
pub struct PyNetwork {
    // Boxed: the network asks for 64-byte alignment, the Python object holding it gives 16.
    model: Mutex<Box<PolicyValueNet>>,
    verified: bool,
}

#[pymethods]
impl PyNetwork {
    #[new]
    fn new(py: Python<'_>, dir: PathBuf) -> PyResult<PyNetwork> {
        existing(&dir, "model directory")?;
        py.detach(|| {
            let verified = matches!(verify_manifest(&dir).map_err(train_error)?, Verification::Verified);
            let (model, _) = LoadedModel::open(&dir, None).map_err(train_error)?.into_parts();
            Ok(PyNetwork { model: Mutex::new(Box::new(model)), verified })
        })
    }

    /// Whether the directory had a manifest that its files matched (False: no manifest).
    #[getter]
    fn verified(&self) -> bool {
        self.verified
    }

    /// Raw outputs for observations float32 `[B, 15, P]`: policy logits `[B, A]` (mask the
    /// illegal actions before a softmax) and win/draw/loss logits `[B, 3]` for the player to move,
    /// P and A the points and actions of the network's board (24 and 600 on the 24-point boards,
    /// 16 and 272 on six men's morris's).
    fn evaluate<'py>(
        &self,
        py: Python<'py>,
        observations: PyReadonlyArray3<'py, f32>,
    ) -> PyResult<Outputs<'py>> {
        let shape = observations.shape().to_vec();
        let model = self
            .model
            .lock()
            .map_err(|_| PyRuntimeError::new_err("the network failed in an earlier call"))?;
        let (points, actions) = (model.config().num_points(), model.config().num_actions());
        if shape[1..] != [NUM_PLANES, points] || shape[0] == 0 {
            return Err(PyValueError::new_err(format!(
                "observations must have shape [B, {NUM_PLANES}, {points}] with B >= 1 (the network plays {}), got {shape:?}",
                model.config().variant
            )));
        }
        let b = shape[0];
        let flat: Vec<f32> = observations.as_array().iter().copied().collect();
        let (logits, wdl) = py.detach(|| {
            let device = Device::flex();
            let obs = Tensor::<2>::from_data(TensorData::new(flat, [b, NUM_PLANES * points]), &device);
            let (logits, wdl) = model.forward(obs);
            let mut data = Transaction::default().register(logits).register(wdl).execute().into_iter();
            match (data.next(), data.next()) {
                (Some(l), Some(w)) => match (l.try_to_vec::<f32>(), w.try_to_vec::<f32>()) {
                    (Ok(l), Ok(w)) => Ok((l, w)),
                    _ => Err(PyRuntimeError::new_err("the network returned non-f32 outputs")),
                },
                _ => Err(PyRuntimeError::new_err("the network returned fewer outputs than expected")),
            }
        })?;
        let logits = PyArray1::from_vec(py, logits).reshape([b, actions])?;
        let wdl = PyArray1::from_vec(py, wdl).reshape([b, 3])?;
        Ok((logits, wdl))
    }
}

pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(read_shards, m)?)?;
    m.add_function(wrap_pyfunction!(load_weights, m)?)?;
    m.add_function(wrap_pyfunction!(read_model_card, m)?)?;
    m.add_function(wrap_pyfunction!(read_net_config_json, m)?)?;
    m.add_class::<PyNetwork>()?;
    Ok(())
}
