//! Checkpoints `RUN/checkpoints/step-N/`: the model, the optimizer state, the resolved config,
//! RNG states and metadata, built aside and renamed into place so that a kill at any moment
//! leaves the previous checkpoint whole; plus each checkpoint's evaluation and `best.json`.

use std::fs;
use std::path::{Path, PathBuf};

use burn::prelude::Device;
use morris_env::Rng;
use serde::{Deserialize, Serialize};

use super::files::{read_json, read_text, write_atomic, write_dir_atomic, write_json};
use super::manifest::{Verification, verify, write_manifest};
use super::model_dir::{CONFIG_FILE, MODEL_FILE, load_model_files, save_model};
use super::rating::{Elo, as_triple};
use crate::config::TrainConfig;
use crate::error::{Result, TrainError};
use crate::learner::Learner;
use crate::model::{NetConfig, PolicyValueNet};

/// Version of the checkpoint layout.
pub const CHECKPOINT_VERSION: u32 = 1;
/// The optimizer state inside a checkpoint (burnpack).
pub const OPTIMIZER_FILE: &str = "optimizer.bpk";
/// The resolved training config inside a checkpoint.
pub const TRAIN_CONFIG_FILE: &str = "train.toml";
/// The metadata inside a checkpoint.
pub const META_FILE: &str = "meta.json";
/// Evaluation results of a checkpoint's network, added when they are known.
pub const EVAL_FILE: &str = "eval.json";
/// Names the checkpoint marked best (in `RUN/checkpoints/`).
pub const BEST_FILE: &str = "best.json";

/// Everything besides the weights and the optimizer that a resumed run needs (`meta.json`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CheckpointMeta {
    /// [`CHECKPOINT_VERSION`].
    pub version: u32,
    /// Optimizer steps taken.
    pub step: u64,
    /// Self-play games whose positions reached the learner.
    pub games: u64,
    /// Positions added to the replay window since the start.
    pub positions: u64,
    /// Training samples drawn since the start.
    pub samples_drawn: u64,
    /// Wall-clock seconds of training so far (summed over resumed sessions).
    pub wall_time_s: f64,
    /// The replay sampler's generator.
    pub replay_rng: Rng,
    /// The generator that seeds self-play and evaluation.
    pub run_rng: Rng,
    /// The game shards the learner had read, in the order it read them.
    pub shards: Vec<String>,
    /// Version of the program that wrote it.
    pub crate_version: String,
}

/// One opponent's result in a checkpoint's evaluation: `(opponent spec, score, games)`.
pub type OpponentScore = (String, f64, u32);

/// Evaluation results of one checkpoint (its `eval.json`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CheckpointEval {
    /// Step of the evaluated network.
    pub step: u64,
    /// Implied Elo on the minimax ladder and its 95% interval (stored as `[elo, low95, high95]`).
    #[serde(with = "as_triple")]
    pub elo: Option<Elo>,
    /// The score against each opponent.
    pub scores: Vec<OpponentScore>,
    /// Simulations per move of the network.
    pub simulations: u32,
}

/// `best.json`: the checkpoint with the highest evaluated Elo so far.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BestCheckpoint {
    /// Its directory name, `step-N`.
    pub checkpoint: String,
    /// Its Elo.
    pub elo: f64,
}

/// A checkpoint read back.
pub struct Loaded {
    /// Its directory.
    pub dir: PathBuf,
    /// The network (on the device it was loaded to).
    pub model: PolicyValueNet,
    /// The network's shape.
    pub net: NetConfig,
    /// The run's config as it was resolved then.
    pub config: TrainConfig,
    /// The raw TOML of that config.
    pub config_text: String,
    /// The metadata.
    pub meta: CheckpointMeta,
    /// Whether its files were checked against its manifest (older checkpoints have none).
    pub verification: Verification,
}

/// The directory name of the checkpoint at `step`.
pub fn checkpoint_name(step: u64) -> String {
    format!("step-{step}")
}

/// Writes the checkpoint of `learner` as `checkpoints/step-N/` (N = `meta.step`): everything goes
/// into a temporary sibling first, which is then renamed into place. An existing checkpoint of
/// the same step is replaced only after the new one is complete.
///
/// # Errors
/// [`TrainError::Io`] naming the file that cannot be written.
pub fn save(
    checkpoints: &Path,
    learner: &Learner,
    config_text: &str,
    meta: &CheckpointMeta,
) -> Result<PathBuf> {
    fs::create_dir_all(checkpoints).map_err(|e| TrainError::io("create", checkpoints, e))?;
    let dest = checkpoints.join(checkpoint_name(meta.step));
    write_dir_atomic(&dest, |tmp| {
        save_model(&learner.inference_model(), tmp)?;
        learner.save_optimizer(&tmp.join(OPTIMIZER_FILE))?;
        write_atomic(&tmp.join(TRAIN_CONFIG_FILE), config_text.as_bytes())?;
        write_json(&tmp.join(META_FILE), meta)?;
        // Last: the checksums of everything above (eval.json, added later, is not covered).
        write_manifest(tmp, &[MODEL_FILE, CONFIG_FILE, OPTIMIZER_FILE, TRAIN_CONFIG_FILE, META_FILE])
    })?;
    Ok(dest)
}

/// The complete checkpoints under `checkpoints/`, as `(step, dir)` in increasing step order.
/// Temporary directories of interrupted writes are not listed.
pub fn list(checkpoints: &Path) -> Vec<(u64, PathBuf)> {
    let mut out: Vec<(u64, PathBuf)> = fs::read_dir(checkpoints)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().into_string().ok()?;
            let step = name.strip_prefix("step-")?.parse().ok()?;
            e.path().is_dir().then(|| (step, e.path()))
        })
        .collect();
    out.sort();
    out
}

/// A checkpoint passed over when resuming: its directory and why it cannot be trusted.
#[derive(Clone, Debug)]
pub struct Skipped {
    /// The checkpoint directory.
    pub dir: PathBuf,
    /// What is wrong with it (the error's message, naming the file).
    pub reason: String,
}

/// The prefix that [`set_aside`] gives a checkpoint that failed verification.
pub const SET_ASIDE_PREFIX: &str = "corrupt-";

/// The checkpoint to resume from: `path` itself if it is a checkpoint directory (checked when it
/// is loaded); else the newest checkpoint under `path/checkpoints/` whose files verify against
/// its manifest and whose metadata and config read, with the newer ones that do not.
///
/// # Errors
/// [`TrainError::NotFound`] if `path` does not exist or holds no checkpoint; the newest
/// checkpoint's error if none of them verifies.
pub fn resolve(path: &Path) -> Result<(PathBuf, Vec<Skipped>)> {
    if !path.exists() {
        return Err(TrainError::NotFound {
            what: "cannot resume from",
            path: path.to_path_buf(),
            hint: ": no such file or directory".into(),
        });
    }
    if path.join(META_FILE).exists() {
        return Ok((path.to_path_buf(), Vec::new()));
    }
    let dir = path.join("checkpoints");
    let all = list(&dir);
    let mut skipped = Vec::new();
    let mut first_error = None;
    for (_, ckpt) in all.into_iter().rev() {
        match verify(&ckpt).and_then(|_| read_meta(&ckpt)).and_then(|_| read_config(&ckpt, &[])) {
            Ok(_) => return Ok((ckpt, skipped)),
            Err(e) => {
                skipped.push(Skipped { dir: ckpt, reason: e.to_string() });
                first_error.get_or_insert(e);
            }
        }
    }
    Err(first_error.unwrap_or_else(|| TrainError::NotFound {
        what: "cannot resume from",
        path: path.to_path_buf(),
        hint: format!(
            ": it is neither a checkpoint (no {META_FILE}) nor a run directory with checkpoints in {}",
            dir.display()
        ),
    }))
}

/// Renames a checkpoint that failed verification to `corrupt-step-N` beside it, so that neither
/// resuming nor pruning counts it, while its files stay on disk for inspection. Returns the new
/// path.
///
/// # Errors
/// [`TrainError::Io`] if it cannot be renamed.
pub fn set_aside(ckpt: &Path) -> Result<PathBuf> {
    let name = ckpt.file_name().map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    let mut dest = ckpt.with_file_name(format!("{SET_ASIDE_PREFIX}{name}"));
    let mut k = 1;
    while dest.exists() {
        k += 1;
        dest = ckpt.with_file_name(format!("{SET_ASIDE_PREFIX}{name}-{k}"));
    }
    fs::rename(ckpt, &dest).map_err(|e| TrainError::io("set aside", ckpt, e))?;
    Ok(dest)
}

/// Reads and checks a checkpoint's `meta.json`.
///
/// # Errors
/// [`TrainError::Io`] if unreadable, [`TrainError::Corrupt`] if malformed,
/// [`TrainError::Incompatible`] for another layout version.
pub fn read_meta(dir: &Path) -> Result<CheckpointMeta> {
    let path = dir.join(META_FILE);
    let meta: CheckpointMeta = read_json(&path, "checkpoint metadata")?;
    if meta.version != CHECKPOINT_VERSION {
        return Err(TrainError::incompatible(
            &path,
            format!(
                "checkpoint version {} is not supported (this build reads version {CHECKPOINT_VERSION})",
                meta.version
            ),
        ));
    }
    Ok(meta)
}

/// Reads a checkpoint's `train.toml` (with `overrides` applied) and its raw text.
///
/// # Errors
/// [`TrainError::Io`] if unreadable, [`TrainError::Config`] naming the file and key if invalid.
pub fn read_config(dir: &Path, overrides: &[String]) -> Result<(TrainConfig, String)> {
    let path = dir.join(TRAIN_CONFIG_FILE);
    let text = read_text(&path)?;
    let config = TrainConfig::from_toml(&text, overrides).map_err(|e| TrainError::from(e).in_file(&path))?;
    Ok((config, text))
}

/// Reads the checkpoint in `dir`, loading the network onto `device`.
///
/// # Errors
/// A missing, corrupt or inconsistent file, as a [`TrainError`] that names it.
pub fn load(dir: &Path, device: &Device) -> Result<Loaded> {
    let verification = verify(dir)?;
    let meta = read_meta(dir)?;
    let (config, config_text) = read_config(dir, &[])?;
    let (model, net) = load_model_files(dir, device)?;
    if net != config.model {
        return Err(TrainError::incompatible(
            &dir.join(CONFIG_FILE),
            format!(
                "the network's config does not match [model] in {}",
                dir.join(TRAIN_CONFIG_FILE).display()
            ),
        ));
    }
    let optimizer = dir.join(OPTIMIZER_FILE);
    if !optimizer.is_file() {
        let missing = std::io::Error::new(std::io::ErrorKind::NotFound, "no such file");
        return Err(TrainError::io("read optimizer state", &optimizer, missing));
    }
    Ok(Loaded { dir: dir.to_path_buf(), model, net, config, config_text, meta, verification })
}

/// A checkpoint's evaluation results, if it has been evaluated.
///
/// # Errors
/// [`TrainError::Corrupt`] if `eval.json` exists but is malformed.
pub fn read_eval(dir: &Path) -> Result<Option<CheckpointEval>> {
    let path = dir.join(EVAL_FILE);
    if !path.is_file() {
        return Ok(None);
    }
    read_json(&path, "evaluation results").map(Some)
}

/// The checkpoint marked best, if any (an unreadable `best.json` counts as none).
pub fn best(checkpoints: &Path) -> Option<BestCheckpoint> {
    read_json(&checkpoints.join(BEST_FILE), "best checkpoint").ok()
}

/// Records `eval` in the checkpoint of its step (if that still exists) and marks that checkpoint
/// best if its Elo beats the current best. Returns whether it became the best.
///
/// # Errors
/// [`TrainError::Io`] if a file cannot be written.
pub fn record_eval(checkpoints: &Path, eval: &CheckpointEval) -> Result<bool> {
    let name = checkpoint_name(eval.step);
    let dir = checkpoints.join(&name);
    if !dir.is_dir() {
        return Ok(false);
    }
    write_json(&dir.join(EVAL_FILE), eval)?;
    let Some(elo) = eval.elo else { return Ok(false) };
    if best(checkpoints).is_some_and(|b| b.elo >= elo.elo) {
        return Ok(false);
    }
    write_json(&checkpoints.join(BEST_FILE), &BestCheckpoint { checkpoint: name, elo: elo.elo })?;
    Ok(true)
}

/// Deletes all but the newest `keep_last` checkpoints, never the best one nor those in `keep`.
pub fn prune(checkpoints: &Path, keep_last: usize, keep: &[u64]) {
    let all = list(checkpoints);
    let best = best(checkpoints).map(|b| b.checkpoint);
    let cut = all.len().saturating_sub(keep_last);
    for (step, dir) in &all[..cut] {
        if keep.contains(step) || best.as_deref() == Some(&checkpoint_name(*step)) {
            continue;
        }
        let _ = fs::remove_dir_all(dir);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::OptimizerConfig;

    fn meta(step: u64) -> CheckpointMeta {
        CheckpointMeta {
            version: CHECKPOINT_VERSION,
            step,
            games: 3,
            positions: 300,
            samples_drawn: 1000,
            wall_time_s: 1.5,
            replay_rng: Rng::seed_from_u64(1),
            run_rng: Rng::seed_from_u64(2),
            shards: vec!["a.shard".into()],
            crate_version: env!("CARGO_PKG_VERSION").into(),
        }
    }

    #[test]
    fn save_load_prune_and_best() {
        let scratch = tempfile::tempdir().unwrap();
        let root = scratch.path();
        let device = Device::flex();
        let mut config = TrainConfig::default();
        config.model.width = 16;
        config.model.blocks = 1;
        let text = toml::to_string(&config).unwrap();
        let learner = Learner::new(&config.model, &OptimizerConfig::default(), &device);
        for step in [10, 20, 30] {
            save(root, &learner, &text, &meta(step)).unwrap();
        }
        // A leftover of an interrupted write is neither listed nor resumed from.
        fs::create_dir_all(root.join(".tmp-step-40-1")).unwrap();
        assert_eq!(list(root).iter().map(|x| x.0).collect::<Vec<_>>(), [10, 20, 30]);
        assert!(matches!(resolve(root), Err(TrainError::NotFound { .. })));
        assert_eq!(resolve(&root.join("step-20")).unwrap().0, root.join("step-20"));
        let loaded = load(&root.join("step-20"), &device).unwrap();
        assert_eq!(loaded.meta, meta(20));
        assert_eq!(loaded.config, config);

        let elo = |e: f64| Some(Elo { elo: e, low95: e - 100.0, high95: e + 100.0 });
        let eval = CheckpointEval { step: 10, elo: elo(900.0), scores: vec![], simulations: 8 };
        assert!(record_eval(root, &eval).unwrap());
        assert_eq!(read_eval(&root.join("step-10")).unwrap(), Some(eval.clone()));
        assert!(!record_eval(root, &CheckpointEval { step: 20, elo: elo(850.0), ..eval.clone() }).unwrap());
        prune(root, 1, &[]);
        assert_eq!(list(root).iter().map(|x| x.0).collect::<Vec<_>>(), [10, 30], "best and newest kept");

        // Corrupt or missing files get errors naming them.
        fs::write(root.join("step-30").join(META_FILE), "{").unwrap();
        let e = load(&root.join("step-30"), &device).err().unwrap();
        assert!(matches!(&e, TrainError::Corrupt { path, .. } if path.ends_with(META_FILE)), "{e}");
        fs::write(root.join("step-10/model.safetensors"), "junk").unwrap();
        let e = load(&root.join("step-10"), &device).err().unwrap();
        assert!(matches!(&e, TrainError::Corrupt { path, .. } if path.ends_with("model.safetensors")), "{e}");
        let e = resolve(&root.join("nope")).unwrap_err();
        assert!(matches!(&e, TrainError::NotFound { path, .. } if path.ends_with("nope")), "{e}");
    }
}
