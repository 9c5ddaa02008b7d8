//! A model directory: the network's weights (`model.safetensors`) and its shape, either as
//! `config.json` (checkpoints, published versions) or as the `model.json` card of an exported model.

use std::fs;
use std::path::Path;

use burn::prelude::*;
use burn::store::{ModuleSnapshot, SafetensorsStore};
use morris_env::Variant;
use morris_env::features::OBS_VERSION;
use serde::{Deserialize, Serialize};

use super::files::{read_json, read_text, write_atomic, write_json};
use super::manifest::verify;
use super::rating::Elo;
use crate::error::{Result, TrainError};
use crate::model::{NetConfig, PolicyValueNet};

/// File name of the weights inside a model directory.
pub const MODEL_FILE: &str = "model.safetensors";
/// File name of the [`NetConfig`] (JSON) inside a model directory.
pub const CONFIG_FILE: &str = "config.json";
/// File name of the model card in an exported model directory.
pub const MODEL_CARD_FILE: &str = "model.json";
/// The `producer` metadata of the weights files the lab writes.
const PRODUCER: &str = concat!("morris-train ", env!("CARGO_PKG_VERSION"), " (burn)");
/// Version of the model card format.
pub const MODEL_CARD_VERSION: u32 = 1;

/// An Elo measured at a given search budget, as a model card states it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EloAt {
    /// The rating and its interval.
    #[serde(flatten)]
    pub rating: Elo,
    /// Simulations per move it was measured at.
    pub simulations: u32,
}

/// `model.json`: what a user of an exported model needs besides the weights.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelCard {
    /// [`MODEL_CARD_VERSION`].
    pub format: u32,
    /// The network's shape.
    pub net: NetConfig,
    /// The observation layout the network reads ([`OBS_VERSION`]).
    pub observation_version: u32,
    /// The rules preset it was trained under.
    pub rules: String,
    /// Optimizer steps of training.
    pub step: u64,
    /// Its Elo on the minimax ladder, if it was evaluated.
    pub elo: Option<EloAt>,
    /// The checkpoint it was exported from.
    pub source: String,
    /// How it was trained (absent in cards written before it was recorded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub training: Option<TrainingRecord>,
}

/// How an exported model was trained, from its checkpoint: the config and the compute.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TrainingRecord {
    /// The run's name (`run.name`).
    pub run: String,
    /// Self-play games behind the model.
    pub games: u64,
    /// Self-play positions behind the model.
    pub positions: u64,
    /// Wall time of training in seconds, over every resumed segment of the run.
    pub wall_time_s: f64,
    /// The training config, as the checkpoint's `train.toml` holds it (with the overrides of
    /// its latest resume).
    pub config: String,
}

impl ModelCard {
    /// Reads and checks `dir/model.json`.
    ///
    /// # Errors
    /// [`TrainError::Io`] if it is missing, [`TrainError::Corrupt`] if malformed, and
    /// [`TrainError::Incompatible`] for another format version, another observation layout or an
    /// invalid network shape.
    pub fn read(dir: &Path) -> Result<ModelCard> {
        let path = dir.join(MODEL_CARD_FILE);
        ModelCard::from_json(&read_text(&path)?, &path)
    }

    /// Checks a card given as JSON text, as [`ModelCard::read`] does `model.json`; `path` names
    /// it in errors.
    ///
    /// # Errors
    /// [`TrainError::Corrupt`] if malformed, [`TrainError::Incompatible`] as for
    /// [`ModelCard::read`].
    pub fn from_json(text: &str, path: &Path) -> Result<ModelCard> {
        let card: ModelCard =
            serde_json::from_str(text).map_err(|e| TrainError::corrupt("model card", path, e))?;
        let path = path.to_path_buf();
        if card.format != MODEL_CARD_VERSION {
            return Err(TrainError::incompatible(
                &path,
                format!("model card format {} (this build reads {MODEL_CARD_VERSION})", card.format),
            ));
        }
        if card.observation_version != OBS_VERSION {
            return Err(TrainError::incompatible(
                &path,
                format!(
                    "the network reads observation layout {}, this build encodes layout {OBS_VERSION}",
                    card.observation_version
                ),
            ));
        }
        card.net.validate().map_err(|e| TrainError::incompatible(&path, e.to_string()))?;
        Ok(card)
    }

    /// Writes the card as `dir/model.json`.
    ///
    /// # Errors
    /// [`TrainError::Io`] if it cannot be written.
    pub fn write(&self, dir: &Path) -> Result<()> {
        write_json(&dir.join(MODEL_CARD_FILE), self)
    }
}

/// Saves `model`'s weights to `dir/model.safetensors` and its config to `dir/config.json`,
/// creating `dir` if needed and replacing existing files (the config through a scratch file and a
/// rename; callers that need the whole directory atomic build it with
/// [`super::files::write_dir_atomic`]).
///
/// # Errors
/// [`TrainError::Io`] naming the file that cannot be written.
pub fn save_model(model: &PolicyValueNet, dir: &Path) -> Result<()> {
    fs::create_dir_all(dir).map_err(|e| TrainError::io("create", dir, e))?;
    write_json(&dir.join(CONFIG_FILE), model.config())?;
    let model_path = dir.join(MODEL_FILE);
    let bytes = model_to_bytes(model)
        .map_err(|e| TrainError::io("write", &model_path, std::io::Error::other(e.to_string())))?;
    write_atomic(&model_path, &bytes)
}

/// `model`'s weights as the bytes of a `model.safetensors` file: what [`save_model`] writes, for
/// weights that travel without a file (a learner's published model sent to self-play workers).
/// Equal weights give equal bytes.
///
/// # Errors
/// [`TrainError::Internal`] if burn cannot serialize the weights.
pub fn model_to_bytes(model: &PolicyValueNet) -> Result<Vec<u8>> {
    // Built with one metadata entry: burn's default metadata is a HashMap whose order changes
    // from run to run, which would make equal weights differ byte for byte.
    let mut store = SafetensorsStore::from_bytes(None).clear_metadata().metadata("producer", PRODUCER);
    let failed = |e: String| TrainError::Internal(format!("cannot serialize the model's weights: {e}"));
    model.save_into(&mut store).map_err(|e| failed(e.to_string()))?;
    store.get_bytes().map_err(|e| failed(e.to_string()))
}

/// A network of shape `config` on `device` with the weights in `bytes` (a `model.safetensors`
/// file's contents, [`model_to_bytes`]); `source` names them in errors (their file, or where they
/// came from).
///
/// # Errors
/// [`TrainError::Corrupt`] naming `source` if the bytes are not safetensors or do not hold
/// exactly the tensors of `config`.
pub fn model_from_bytes(
    config: &NetConfig,
    bytes: Vec<u8>,
    device: &Device,
    source: &Path,
) -> Result<PolicyValueNet> {
    let mut model = config.init(device);
    // Partial and unvalidated, so that mismatches come back as data and get a short message.
    let mut store = SafetensorsStore::from_bytes(Some(bytes)).allow_partial(true).validate(false);
    let applied = model.load_from(&mut store).map_err(|e| TrainError::corrupt("model weights", source, e))?;
    let mut problems = Vec::new();
    if let Some(first) = applied.errors.first() {
        problems.push(format!("{} tensors do not fit (first: {first})", applied.errors.len()));
    }
    if let Some((first, _)) = applied.missing.first() {
        problems.push(format!("{} tensors missing (first: {first})", applied.missing.len()));
    }
    if let Some(first) = applied.unused.first() {
        problems.push(format!("{} tensors unexpected (first: {first})", applied.unused.len()));
    }
    if !problems.is_empty() {
        return Err(TrainError::corrupt(
            "model weights",
            source,
            format!("they do not match the network's config: {}", problems.join("; ")),
        ));
    }
    Ok(model)
}

/// The network shape of the model in `dir`: its `config.json`, or the card of an exported model.
///
/// # Errors
/// As [`load_model`].
pub fn read_net_config(dir: &Path) -> Result<NetConfig> {
    let config_path = dir.join(CONFIG_FILE);
    // An exported model (`eval export`) describes itself in model.json instead.
    if !config_path.exists() && dir.join(MODEL_CARD_FILE).exists() {
        return Ok(ModelCard::read(dir)?.net);
    }
    let config: NetConfig = read_json(&config_path, "net config")?;
    config.validate().map_err(|e| TrainError::incompatible(&config_path, e.to_string()))?;
    Ok(config)
}

/// Loads a model saved by [`save_model`] (or exported with a `model.json` card) onto `device`
/// (plain for inference, or `device.autodiff()` to resume training), with its config.
///
/// Its files are first checked against `manifest.json` if it has one (see [`super::manifest`]).
///
/// # Errors
/// [`TrainError::Io`] if `config.json` (or `model.json`) or `model.safetensors` is missing or
/// unreadable; [`TrainError::Corrupt`] if one is malformed or the weights do not hold exactly the
/// tensors of that config, or a file's checksum does not match; [`TrainError::Incompatible`] for a card of another version or layout.
pub fn load_model(dir: &Path, device: &Device) -> Result<(PolicyValueNet, NetConfig)> {
    verify(dir)?;
    load_model_files(dir, device)
}

/// [`load_model`] for a game of `variant` (the UCI engine's loader), its config read once and
/// checked before the weights are.
///
/// # Errors
/// Those of [`load_model`]; [`TrainError::Variant`] naming the directory if the network plays
/// another variant of the morris family.
pub fn load_model_for(dir: &Path, device: &Device, variant: Variant) -> Result<(PolicyValueNet, NetConfig)> {
    verify(dir)?;
    let config = read_net_config(dir)?;
    if config.variant != variant {
        return Err(TrainError::Variant {
            what: "a model",
            path: dir.to_path_buf(),
            found: config.variant,
            expected: variant,
        });
    }
    load_weights(dir, config, device)
}

/// [`load_model`] without the manifest check, for callers that have just verified the directory.
pub(crate) fn load_model_files(dir: &Path, device: &Device) -> Result<(PolicyValueNet, NetConfig)> {
    load_weights(dir, read_net_config(dir)?, device)
}

/// The weights of `dir` loaded into a network of shape `config` (read from `dir` already).
fn load_weights(dir: &Path, config: NetConfig, device: &Device) -> Result<(PolicyValueNet, NetConfig)> {
    let model_path = dir.join(MODEL_FILE);
    if !model_path.is_file() {
        let missing = std::io::Error::new(std::io::ErrorKind::NotFound, "no such file");
        return Err(TrainError::io("read model weights", &model_path, missing));
    }
    let bytes = fs::read(&model_path).map_err(|e| TrainError::io("read model weights", &model_path, e))?;
    let model = model_from_bytes(&config, bytes, device, &model_path)?;
    Ok((model, config))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outputs(model: &PolicyValueNet, device: &Device) -> Vec<f32> {
        let config = model.config();
        let obs = Tensor::<2>::ones([2, config.obs_len()], device);
        let (logits, wdl) = model.forward(obs);
        let mut out: Vec<f32> = logits.into_data().try_to_vec().expect("f32 logits");
        out.extend(wdl.into_data().try_to_vec::<f32>().expect("f32 wdl"));
        out
    }

    /// Weights travel as bytes: the bytes are those `save_model` writes, they load back into the
    /// same network, and bytes of another shape or no safetensors at all are refused naming the
    /// source they were given.
    #[test]
    fn weights_travel_as_bytes() {
        let device = Device::flex();
        device.seed(5);
        let net = NetConfig { width: 16, blocks: 1, ..NetConfig::default() };
        let model = net.init(&device);
        let bytes = model_to_bytes(&model).unwrap();
        let dir = tempfile::tempdir().unwrap();
        save_model(&model, dir.path()).unwrap();
        assert_eq!(fs::read(dir.path().join(MODEL_FILE)).unwrap(), bytes);
        assert_eq!(model_to_bytes(&model).unwrap(), bytes, "equal weights, equal bytes");
        let source = Path::new("learner/model-000040");
        let back = model_from_bytes(&net, bytes.clone(), &device, source).unwrap();
        assert_eq!(outputs(&back, &device), outputs(&model, &device));
        let wider = NetConfig { width: 32, ..net.clone() };
        let e = model_from_bytes(&wider, bytes.clone(), &device, source).unwrap_err();
        assert!(matches!(&e, TrainError::Corrupt { path, .. } if path == source), "{e}");
        for bad in [Vec::new(), b"not safetensors".to_vec(), bytes[..bytes.len() / 2].to_vec()] {
            let e = model_from_bytes(&net, bad, &device, source).unwrap_err();
            assert!(matches!(&e, TrainError::Corrupt { .. }), "{e}");
            assert!(e.to_string().contains("learner/model-000040"), "{e}");
        }
    }

    /// A model records its variant and opens only for a game of that variant.
    #[test]
    fn a_model_opens_only_for_its_variant() {
        let device = Device::flex();
        let dir = tempfile::tempdir().unwrap();
        let twelve = NetConfig { width: 8, blocks: 1, variant: Variant::Twelve, ..NetConfig::default() };
        save_model(&twelve.init(&device), dir.path()).unwrap();
        let text = fs::read_to_string(dir.path().join(CONFIG_FILE)).unwrap();
        assert!(text.contains("\"variant\": \"twelve\""), "{text}");
        let (_, config) = load_model_for(dir.path(), &device, Variant::Twelve).unwrap();
        assert_eq!(config, twelve);
        let e = load_model_for(dir.path(), &device, Variant::Nine).err().unwrap();
        assert!(
            matches!(&e, TrainError::Variant { found: Variant::Twelve, expected: Variant::Nine, path, .. } if path == dir.path()),
            "{e}"
        );
        // Nine's config says nothing of variants, as before they existed.
        let nine = NetConfig { width: 8, blocks: 1, ..NetConfig::default() };
        save_model(&nine.init(&device), dir.path()).unwrap();
        assert!(!fs::read_to_string(dir.path().join(CONFIG_FILE)).unwrap().contains("variant"));
        assert!(load_model_for(dir.path(), &device, Variant::Nine).is_ok());
    }
}
