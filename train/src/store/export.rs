//! Exporting a checkpoint as a self-describing model directory: `model.safetensors` plus the
//! `model.json` card (network config, observation layout, rules, step, Elo if known, and how it
//! was trained: config, games, positions, wall time), with their
//! checksums in `manifest.json`.

use std::path::Path;

use burn::prelude::Device;
use morris_env::features::OBS_VERSION;

use super::checkpoint;
use super::files::write_dir_atomic;
use super::manifest::write_manifest;
use super::model_dir::{
    CONFIG_FILE, EloAt, MODEL_CARD_FILE, MODEL_CARD_VERSION, MODEL_FILE, ModelCard, TrainingRecord,
    save_model,
};
use crate::error::{Result, TrainError};

/// Exports the checkpoint in `checkpoint_dir` to `out` (which must not exist yet): the weights as
/// `model.safetensors` and a [`ModelCard`] as `model.json`, with the Elo from the checkpoint's
/// `eval.json` if it was evaluated. Written to a temporary sibling, then renamed.
///
/// # Errors
/// [`TrainError::AlreadyExists`] if `out` exists (nothing is overwritten), or the checkpoint's
/// errors (missing or corrupt files, named), or [`TrainError::Io`] if a write fails.
pub fn export_checkpoint(checkpoint_dir: &Path, out: &Path) -> Result<ModelCard> {
    if out.exists() {
        return Err(TrainError::AlreadyExists {
            path: out.to_path_buf(),
            hint: "exists: choose another --out (nothing was overwritten)".into(),
        });
    }
    let loaded = checkpoint::load(checkpoint_dir, &Device::flex())?;
    let elo = checkpoint::read_eval(checkpoint_dir)?
        .and_then(|e| e.elo.map(|rating| EloAt { rating, simulations: e.simulations }));
    let card = ModelCard {
        format: MODEL_CARD_VERSION,
        net: loaded.net.clone(),
        observation_version: OBS_VERSION,
        rules: loaded.config.rules.preset.clone(),
        step: loaded.meta.step,
        elo,
        source: checkpoint_dir.display().to_string(),
        training: Some(TrainingRecord {
            run: loaded.config.run.name.clone(),
            games: loaded.meta.games,
            positions: loaded.meta.positions,
            wall_time_s: loaded.meta.wall_time_s,
            config: loaded.config_text.clone(),
        }),
    };
    write_dir_atomic(out, |tmp| {
        save_model(&loaded.model, tmp)?;
        // The exported directory holds the card instead of the bare net config.
        let config = tmp.join(CONFIG_FILE);
        std::fs::remove_file(&config).map_err(|e| TrainError::io("remove", &config, e))?;
        card.write(tmp)?;
        write_manifest(tmp, &[MODEL_FILE, MODEL_CARD_FILE])
    })?;
    Ok(card)
}

#[cfg(test)]
mod tests {
    use std::fs;

    use morris_env::{Game, Rng, Rules};

    use super::*;
    use crate::config::TrainConfig;
    use crate::evaluator::{EvalBatch, Evaluator, Leaf};
    use crate::learner::Learner;
    use crate::net_evaluator::NetEvaluator;
    use crate::store::checkpoint::{CHECKPOINT_VERSION, CheckpointEval, CheckpointMeta};
    use crate::store::model_dir::{MODEL_CARD_FILE, MODEL_FILE, load_model};
    use crate::store::rating::Elo;

    #[test]
    fn an_exported_model_loads_with_identical_outputs() {
        let scratch = tempfile::tempdir().unwrap();
        let root = scratch.path();
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
        let elo = Some(Elo { elo: 1000.0, low95: 900.0, high95: 1100.0 });
        let eval = CheckpointEval { step: 7, elo, scores: vec![], simulations: 50 };
        checkpoint::record_eval(&root.join("checkpoints"), &eval).unwrap();

        let out = root.join("exported");
        let card = export_checkpoint(&ckpt, &out).unwrap();
        assert_eq!(card.step, 7);
        assert_eq!(card.rules, "standard");
        assert_eq!(card.elo.as_ref().map(|e| (e.rating.elo, e.simulations)), Some((1000.0, 50)));
        let training = card.training.as_ref().expect("the card records the training");
        assert_eq!((training.games, training.positions, training.wall_time_s), (1, 10, 1.0));
        let trained: TrainConfig = toml::from_str(&training.config).unwrap();
        assert_eq!((trained.model.width, trained.run.name.as_str()), (16, training.run.as_str()));
        assert_eq!(ModelCard::read(&out).unwrap(), card);
        assert!(out.join(MODEL_FILE).is_file() && !out.join(CONFIG_FILE).exists());

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
        assert!(matches!(export_checkpoint(&ckpt, &out), Err(TrainError::AlreadyExists { .. })));
        fs::write(out.join(MODEL_CARD_FILE), "{\"format\": 1}").unwrap();
        let e = load_model(&out, &device).err().unwrap();
        assert!(matches!(&e, TrainError::Corrupt { path, .. } if path.ends_with(MODEL_CARD_FILE)), "{e}");
    }
}
