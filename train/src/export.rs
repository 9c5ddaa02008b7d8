//! Exported models: `model.safetensors` plus `model.json` (the network config, the observation
//! layout version, the rules, the training step and the Elo if known), made from a checkpoint.

use std::fs;
use std::path::Path;

use burn::prelude::Device;
use morris_env::features::OBS_VERSION;
use serde::{Deserialize, Serialize};

use crate::checkpoint::{self, CheckpointEval};
use crate::files::write_atomic;
use crate::model::NetConfig;
use crate::net_evaluator::{MODEL_FILE, save_model};

/// File name of the model card in an exported model directory.
pub const MODEL_CARD_FILE: &str = "model.json";
/// Version of the model card format.
pub const MODEL_CARD_VERSION: u32 = 1;

/// An Elo estimate with its 95% interval.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct EloEstimate {
    /// The rating (random = 0 on the minimax ladder).
    pub elo: f64,
    /// Lower end of the 95% interval.
    pub low95: f64,
    /// Upper end of the 95% interval.
    pub high95: f64,
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
    pub elo: Option<EloEstimate>,
    /// The checkpoint it was exported from.
    pub source: String,
}

impl ModelCard {
    /// Reads and checks `dir/model.json`.
    ///
    /// # Errors
    /// If it is missing, malformed, of another format version, or for another observation layout.
    pub fn read(dir: &Path) -> Result<ModelCard, String> {
        let path = dir.join(MODEL_CARD_FILE);
        let text = fs::read_to_string(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let card: ModelCard =
            serde_json::from_str(&text).map_err(|e| format!("corrupt model card {}: {e}", path.display()))?;
        if card.format != MODEL_CARD_VERSION {
            return Err(format!(
                "{}: model card format {} (this build reads {MODEL_CARD_VERSION})",
                path.display(),
                card.format
            ));
        }
        if card.observation_version != OBS_VERSION {
            return Err(format!(
                "{}: the network reads observation layout {}, this build encodes layout {OBS_VERSION}",
                path.display(),
                card.observation_version
            ));
        }
        card.net.validate().map_err(|e| format!("{}: {e}", path.display()))?;
        Ok(card)
    }
}

/// Exports the checkpoint in `checkpoint_dir` to `out` (which must not exist yet): the weights as
/// `model.safetensors` and a [`ModelCard`] as `model.json`, with the Elo from the checkpoint's
/// `eval.json` if it was evaluated. Written to a temporary sibling, then renamed.
///
/// # Errors
/// If the checkpoint is missing or corrupt (naming the file), `out` exists, or a write fails.
pub fn export_checkpoint(checkpoint_dir: &Path, out: &Path) -> Result<ModelCard, String> {
    if out.exists() {
        return Err(format!(
            "{} already exists: choose another --out (nothing was overwritten)",
            out.display()
        ));
    }
    let loaded = checkpoint::load(checkpoint_dir, &Device::flex())?;
    let eval_path = checkpoint_dir.join(checkpoint::EVAL_FILE);
    let elo = match fs::read_to_string(&eval_path) {
        Ok(text) => {
            let eval: CheckpointEval = serde_json::from_str(&text)
                .map_err(|e| format!("corrupt evaluation results {}: {e}", eval_path.display()))?;
            eval.elo.map(|[elo, low95, high95]| EloEstimate {
                elo,
                low95,
                high95,
                simulations: eval.simulations,
            })
        }
        Err(_) => None,
    };
    let card = ModelCard {
        format: MODEL_CARD_VERSION,
        net: loaded.net.clone(),
        observation_version: OBS_VERSION,
        rules: loaded.config.rules.preset.clone(),
        step: loaded.meta.step,
        elo,
        source: checkpoint_dir.display().to_string(),
    };
    crate::files::write_dir_atomic(out, |tmp| {
        save_model(&loaded.model, &loaded.net, tmp)?;
        // The exported directory holds the card instead of the bare net config.
        let _ = fs::remove_file(tmp.join(crate::net_evaluator::CONFIG_FILE));
        let json = serde_json::to_string_pretty(&card)
            .map_err(|e| format!("cannot serialise the model card: {e}"))?;
        write_atomic(&tmp.join(MODEL_CARD_FILE), (json + "\n").as_bytes())?;
        debug_assert!(tmp.join(MODEL_FILE).is_file());
        Ok(())
    })?;
    Ok(card)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::checkpoint::{CHECKPOINT_VERSION, CheckpointMeta};
    use crate::config::TrainConfig;
    use crate::evaluator::{EvalBatch, Evaluator, Leaf};
    use crate::learner::Learner;
    use crate::net_evaluator::{NetEvaluator, load_model};
    use morris_env::{Game, Rng, Rules};

    #[test]
    fn an_exported_model_loads_with_identical_outputs() {
        let root = std::env::temp_dir().join(format!("morris-export-{}", std::process::id()));
        let _ = fs::remove_dir_all(&root);
        let device = Device::flex();
        let mut config = TrainConfig::default();
        config.model.width = 16;
        config.model.blocks = 1;
        let learner = Learner::new(&config.model, &config.optimizer, &device);
        let meta = CheckpointMeta {
            version: CHECKPOINT_VERSION,
            step: 7,
            games: 1,
            positions: 10,
            samples_drawn: 0,
            wall_time_s: 1.0,
            replay_rng: Rng::seed_from_u64(1),
            run_rng: Rng::seed_from_u64(2),
            shards: vec![],
            crate_version: "test".into(),
        };
        let text = toml::to_string(&config).unwrap();
        let ckpt = checkpoint::save(&root.join("checkpoints"), &learner, &text, &meta).unwrap();
        let eval =
            CheckpointEval { step: 7, elo: Some([1000.0, 900.0, 1100.0]), scores: vec![], simulations: 50 };
        checkpoint::record_eval(&root.join("checkpoints"), &eval).unwrap();

        let out = root.join("exported");
        let card = export_checkpoint(&ckpt, &out).unwrap();
        assert_eq!(card.step, 7);
        assert_eq!(card.rules, "standard");
        assert_eq!(card.elo.as_ref().map(|e| (e.elo, e.simulations)), Some((1000.0, 50)));
        assert_eq!(ModelCard::read(&out).unwrap(), card);
        assert!(out.join(MODEL_FILE).is_file() && !out.join(crate::net_evaluator::CONFIG_FILE).exists());

        // Same positions, same numbers, bit for bit.
        let rules = Rules::standard();
        let mut rng = Rng::seed_from_u64(3);
        let (mut leaves, mut masks) = (Vec::new(), Vec::new());
        for _ in 0..20 {
            let mut g = Game::new(rules);
            let plies = 1 + rng.below(40);
            g.play_random(&mut rng, plies);
            if !g.outcome().is_terminal() {
                leaves.push(Leaf { position: *g.position(), repetitions: g.repetitions() });
                masks.push(g.legal_actions());
            }
        }
        let (original, _) = load_model(&ckpt, &device).unwrap();
        let (exported, net) = load_model(&out, &device).unwrap();
        assert_eq!(net, config.model);
        let (mut a, mut b) = (EvalBatch::default(), EvalBatch::default());
        NetEvaluator::new(original, device.clone()).evaluate(&rules, &leaves, &masks, &mut a);
        NetEvaluator::new(exported, device.clone()).evaluate(&rules, &leaves, &masks, &mut b);
        assert_eq!(a.priors, b.priors);
        assert_eq!(a.wdl, b.wdl);

        // Never over an existing directory; a broken card is named.
        assert!(export_checkpoint(&ckpt, &out).unwrap_err().contains("already exists"));
        fs::write(out.join(MODEL_CARD_FILE), "{\"format\": 1}").unwrap();
        assert!(load_model(&out, &device).err().unwrap().contains("model.json"));
        let _ = fs::remove_dir_all(&root);
    }
}
