//! Checkpoints `RUN/checkpoints/step-N/`: the model (safetensors), the optimizer state, the
//! resolved config, RNG states and metadata, written to a temporary directory and renamed into
//! place so that a kill at any moment leaves the previous checkpoint whole.

use std::fs;
use std::path::{Path, PathBuf};

use burn::prelude::Device;
use morris_env::Rng;
use serde::{Deserialize, Serialize};

use crate::config::TrainConfig;
use crate::files::write_atomic;
use crate::learner::Learner;
use crate::model::{NetConfig, PolicyValueNet};
use crate::net_evaluator::{load_model, save_model};

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

/// Everything besides the weights and the optimizer that a resumed run needs.
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

/// Evaluation results of one checkpoint (its `eval.json`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CheckpointEval {
    /// Step of the evaluated network.
    pub step: u64,
    /// Implied Elo on the minimax ladder and its 95% interval.
    pub elo: Option<[f64; 3]>,
    /// `(opponent, score, games)`.
    pub scores: Vec<(String, f64, u32)>,
    /// Simulations per move of the network.
    pub simulations: u32,
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
/// If a file cannot be written (the message names it).
pub fn save(
    checkpoints: &Path,
    learner: &Learner,
    config_text: &str,
    meta: &CheckpointMeta,
) -> Result<PathBuf, String> {
    fs::create_dir_all(checkpoints).map_err(|e| format!("cannot create {}: {e}", checkpoints.display()))?;
    let dest = checkpoints.join(checkpoint_name(meta.step));
    crate::files::write_dir_atomic(&dest, |tmp| {
        let model = learner.inference_model();
        save_model(&model, model.config(), tmp)?;
        learner.save_optimizer(&tmp.join(OPTIMIZER_FILE))?;
        write_atomic(&tmp.join(TRAIN_CONFIG_FILE), config_text.as_bytes())?;
        let json = serde_json::to_string_pretty(meta)
            .map_err(|e| format!("cannot serialise checkpoint metadata: {e}"))?;
        write_atomic(&tmp.join(META_FILE), (json + "\n").as_bytes())
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

/// Removes what interrupted writes left behind (`.tmp-*` and `.old-*` directories).
pub fn clean_partial(checkpoints: &Path) {
    for e in fs::read_dir(checkpoints).into_iter().flatten().flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        if name.starts_with(".tmp-") || name.starts_with(".old-") {
            let _ = fs::remove_dir_all(e.path());
        }
    }
}

/// The checkpoint to resume from: `path` itself if it is a checkpoint directory, else the
/// latest one under `path/checkpoints/` (a run directory).
///
/// # Errors
/// If `path` does not exist or holds no checkpoint.
pub fn resolve(path: &Path) -> Result<PathBuf, String> {
    if !path.exists() {
        return Err(format!("cannot resume from {}: no such file or directory", path.display()));
    }
    if path.join(META_FILE).exists() {
        return Ok(path.to_path_buf());
    }
    let dir = path.join("checkpoints");
    list(&dir).pop().map(|(_, d)| d).ok_or_else(|| {
        format!(
            "cannot resume from {}: it is neither a checkpoint (no {META_FILE}) nor a run directory with \
             checkpoints in {}",
            path.display(),
            dir.display()
        )
    })
}

/// Reads the checkpoint in `dir`, loading the network onto `device`.
///
/// # Errors
/// If a file is missing, corrupt or inconsistent; the message names the file.
pub fn load(dir: &Path, device: &Device) -> Result<Loaded, String> {
    let meta_path = dir.join(META_FILE);
    let text =
        fs::read_to_string(&meta_path).map_err(|e| format!("cannot read {}: {e}", meta_path.display()))?;
    let meta: CheckpointMeta = serde_json::from_str(&text)
        .map_err(|e| format!("corrupt checkpoint metadata {}: {e}", meta_path.display()))?;
    if meta.version != CHECKPOINT_VERSION {
        return Err(format!(
            "{}: checkpoint version {} is not supported (this build reads version {CHECKPOINT_VERSION})",
            meta_path.display(),
            meta.version
        ));
    }
    let config_path = dir.join(TRAIN_CONFIG_FILE);
    let config_text = fs::read_to_string(&config_path)
        .map_err(|e| format!("cannot read {}: {e}", config_path.display()))?;
    let config =
        TrainConfig::from_toml(&config_text, &[]).map_err(|e| format!("{}: {e}", config_path.display()))?;
    let (model, net) = load_model(dir, device)?;
    if net != config.model {
        return Err(format!(
            "{}: the network's config does not match [model] in {}",
            dir.join(crate::net_evaluator::CONFIG_FILE).display(),
            config_path.display()
        ));
    }
    let optimizer = dir.join(OPTIMIZER_FILE);
    if !optimizer.is_file() {
        return Err(format!("cannot read optimizer state {}: no such file", optimizer.display()));
    }
    Ok(Loaded { dir: dir.to_path_buf(), model, net, config, config_text, meta })
}

/// The checkpoint marked best, if any: `(name, elo)`.
pub fn best(checkpoints: &Path) -> Option<(String, f64)> {
    let text = fs::read_to_string(checkpoints.join(BEST_FILE)).ok()?;
    let v: serde_json::Value = serde_json::from_str(&text).ok()?;
    Some((v.get("checkpoint")?.as_str()?.to_string(), v.get("elo")?.as_f64()?))
}

/// Records `eval` in the checkpoint of its step (if that still exists) and marks that checkpoint
/// best if its Elo beats the current best. Returns whether it became the best.
///
/// # Errors
/// If a file cannot be written.
pub fn record_eval(checkpoints: &Path, eval: &CheckpointEval) -> Result<bool, String> {
    let name = checkpoint_name(eval.step);
    let dir = checkpoints.join(&name);
    if !dir.is_dir() {
        return Ok(false);
    }
    let json =
        serde_json::to_string_pretty(eval).map_err(|e| format!("cannot serialise eval results: {e}"))?;
    write_atomic(&dir.join(EVAL_FILE), (json + "\n").as_bytes())?;
    let Some([elo, ..]) = eval.elo else { return Ok(false) };
    if best(checkpoints).is_some_and(|(_, b)| b >= elo) {
        return Ok(false);
    }
    let json = serde_json::json!({ "checkpoint": name, "elo": elo });
    write_atomic(&checkpoints.join(BEST_FILE), format!("{json:#}\n").as_bytes())?;
    Ok(true)
}

/// Deletes all but the newest `keep_last` checkpoints, never the best one nor those in `keep`.
pub fn prune(checkpoints: &Path, keep_last: usize, keep: &[u64]) {
    let all = list(checkpoints);
    let best = best(checkpoints).map(|(n, _)| n);
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
        let root = std::env::temp_dir().join(format!("morris-ckpt-{}", std::process::id()));
        let _ = fs::remove_dir_all(&root);
        let device = Device::flex();
        let mut config = TrainConfig::default();
        config.model.width = 16;
        config.model.blocks = 1;
        let text = toml::to_string(&config).unwrap();
        let learner = Learner::new(&config.model, &OptimizerConfig::default(), &device);
        for step in [10, 20, 30] {
            save(&root, &learner, &text, &meta(step)).unwrap();
        }
        // A leftover of an interrupted write is neither listed nor resumed from.
        fs::create_dir_all(root.join(".tmp-step-40-1")).unwrap();
        assert_eq!(list(&root).iter().map(|x| x.0).collect::<Vec<_>>(), [10, 20, 30]);
        assert!(resolve(&root).unwrap_err().contains("neither a checkpoint"));
        assert_eq!(resolve(&root.join("step-20")).unwrap(), root.join("step-20"));
        let loaded = load(&root.join("step-20"), &device).unwrap();
        assert_eq!(loaded.meta, meta(20));
        assert_eq!(loaded.config, config);
        clean_partial(&root);
        assert!(!root.join(".tmp-step-40-1").exists());

        let eval =
            CheckpointEval { step: 10, elo: Some([900.0, 800.0, 1000.0]), scores: vec![], simulations: 8 };
        assert!(record_eval(&root, &eval).unwrap());
        assert!(
            !record_eval(&root, &CheckpointEval { step: 20, elo: Some([850.0; 3]), ..eval.clone() }).unwrap()
        );
        prune(&root, 1, &[]);
        assert_eq!(list(&root).iter().map(|x| x.0).collect::<Vec<_>>(), [10, 30], "best and newest kept");

        // Corrupt or missing files get errors naming them.
        fs::write(root.join("step-30").join(META_FILE), "{").unwrap();
        let e = load(&root.join("step-30"), &device).err().unwrap();
        assert!(e.contains(META_FILE), "{e}");
        fs::write(root.join("step-10/model.safetensors"), "junk").unwrap();
        let e = load(&root.join("step-10"), &device).err().unwrap();
        assert!(e.contains("model.safetensors"), "{e}");
        let e = resolve(&root.join("nope")).unwrap_err();
        assert!(e.contains("nope"), "{e}");
        let _ = fs::remove_dir_all(&root);
    }
}
