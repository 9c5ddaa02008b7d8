//! Self-play driven by a caller instead of a run directory: a worker handed weights as bytes
//! that hands back its finished games as shard bytes, for schedulers without a shared disk (Ray
//! actors). It plays with the same [`SelfPlayer`] as `train` and `train selfplay`.

use std::path::PathBuf;

use burn::prelude::Device;

use super::selfplayer::SelfPlayer;
use super::{build_thread_pool, fnv};
use crate::config::TrainConfig;
use crate::device::device_for_key;
use crate::error::Result;
use crate::store::{EncodedShard, ShardSink, model_from_bytes};

/// Stream of [`morris_env::Rng::derive`] for the seeds of remote workers (apart from the
/// streams of `train selfplay` workers).
const REMOTE_STREAM: u64 = 6;

/// A self-play worker without a run directory: it plays the config's self-play with the weights
/// it is given and returns its finished games as [`EncodedShard`]s.
pub struct SelfPlayWorker {
    player: SelfPlayer,
    config: TrainConfig,
    device: Device,
    name: String,
    model_step: u64,
}

impl SelfPlayWorker {
    /// A worker called `name` for a run with `config`, playing with `weights` (a published
    /// model's `model.safetensors` bytes, [`crate::store::model_to_bytes`]) of the model at
    /// `step`. Its games are seeded from `seed` and the name (give a restarted worker a new
    /// seed, or it plays its games again). `device` overrides the config's self-play device.
    /// Sizes the process's thread pool from `run.threads` if nothing has yet.
    ///
    /// # Errors
    /// An unusable device or self-play config; weights that do not fit `config.model`
    /// ([`crate::TrainError::Corrupt`] naming the worker and step).
    pub fn new(
        config: &TrainConfig,
        name: &str,
        seed: u64,
        device: Option<&str>,
        weights: Vec<u8>,
        step: u64,
    ) -> Result<SelfPlayWorker> {
        build_thread_pool(config.run.threads)?;
        let (key, device_name) = match device {
            Some(d) => ("device", d),
            None => config.selfplay_device(),
        };
        let device = device_for_key(key, device_name)?;
        let model = model_from_bytes(&config.model, weights, &device, &weights_source(name, step))?;
        let rules = config.game_rules()?;
        let seed = morris_env::Rng::derive(seed ^ fnv(name), REMOTE_STREAM, 0);
        let sink = ShardSink::memory(name, 0);
        let groups = rayon::current_num_threads();
        let player = SelfPlayer::new(config, rules, model, &device, sink, seed, groups)?;
        Ok(SelfPlayWorker {
            player,
            config: config.clone(),
            device,
            name: name.to_string(),
            model_step: step,
        })
    }

    /// Plays on with `weights` of the model at `step`; nothing changes when it already plays
    /// with that step.
    ///
    /// # Errors
    /// Weights that do not fit the config's network ([`crate::TrainError::Corrupt`]); the worker
    /// keeps its weights.
    pub fn set_weights(&mut self, weights: Vec<u8>, step: u64) -> Result<()> {
        if step == self.model_step {
            return Ok(());
        }
        let source = weights_source(&self.name, step);
        let model = model_from_bytes(&self.config.model, weights, &self.device, &source)?;
        self.player.set_model(&model);
        self.model_step = step;
        Ok(())
    }

    /// The step of the model it plays with.
    pub fn model_step(&self) -> u64 {
        self.model_step
    }

    /// Plays until at least `min_positions` new positions are recorded, then returns every
    /// finished game not yet returned, as shards (`selfplay.shard_positions` positions each,
    /// the last one smaller). Games still running go on at the next call.
    ///
    /// # Errors
    /// A search that broke an invariant.
    pub fn play(&mut self, min_positions: u64) -> Result<Vec<EncodedShard>> {
        let start = self.player.positions();
        while self.player.positions() - start < min_positions.max(1) {
            self.player.step()?;
        }
        self.player.flush()?;
        Ok(self.player.take_shards())
    }

    /// Games finished so far.
    pub fn games(&self) -> u64 {
        self.player.games()
    }

    /// Positions recorded so far (of finished and running games).
    pub fn positions(&self) -> u64 {
        self.player.positions()
    }
}

/// How errors name weights that came without a file.
fn weights_source(worker: &str, step: u64) -> PathBuf {
    PathBuf::from(format!("weights of model step {step} sent to worker '{worker}'"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::TrainError;
    use crate::store::{decode_shard, model_to_bytes, sha256_hex};
    use std::path::Path;

    fn tiny() -> TrainConfig {
        let text =
            std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/tiny.toml"))
                .expect("configs/tiny.toml");
        TrainConfig::from_toml(&text, &["run.threads=1".into(), "selfplay.parallel_games=2".into()])
            .expect("the tiny config")
    }

    fn weights(config: &TrainConfig, seed: u64) -> Vec<u8> {
        let device = Device::flex();
        device.seed(seed);
        model_to_bytes(&config.model.init(&device)).expect("weights")
    }

    /// A worker given weights as bytes returns its finished games as shards that decode, with
    /// their SHA-256, numbered in order; the same seed gives the same bytes; weights of another
    /// shape are refused naming the worker, and the worker plays on with the ones it had.
    #[test]
    fn a_worker_turns_weights_into_shard_bytes() {
        let config = tiny();
        let mut a = SelfPlayWorker::new(&config, "w1", 3, None, weights(&config, 1), 20).unwrap();
        let shards = a.play(1500).unwrap();
        assert!(!shards.is_empty());
        let mut positions = 0;
        for (k, s) in shards.iter().enumerate() {
            assert_eq!((s.worker.as_str(), s.seq), ("w1", k as u64));
            assert_eq!(s.sha256, sha256_hex(&s.bytes));
            let shard = decode_shard(&s.bytes, Path::new("test")).unwrap();
            assert_eq!((shard.games, shard.samples.len()), (s.games, s.positions as usize));
            positions += s.positions as u64;
        }
        assert!(positions >= 1, "finished games were returned");
        assert_eq!(shards.iter().map(|s| s.games as u64).sum::<u64>(), a.games());
        let mut b = SelfPlayWorker::new(&config, "w1", 3, None, weights(&config, 1), 20).unwrap();
        assert_eq!(b.play(1500).unwrap(), shards, "same seed, same weights: same games");

        let wider =
            TrainConfig { model: crate::NetConfig { width: 64, ..config.model.clone() }, ..config.clone() };
        let e = a.set_weights(weights(&wider, 2), 40).unwrap_err();
        assert!(matches!(&e, TrainError::Corrupt { .. }), "{e}");
        assert!(e.to_string().contains("worker 'w1'") && e.to_string().contains("step 40"), "{e}");
        assert_eq!(a.model_step(), 20);
        a.set_weights(weights(&config, 2), 40).unwrap();
        assert_eq!(a.model_step(), 40);
        let more = a.play(100).unwrap();
        assert_eq!(more.first().map(|s| s.seq), Some(shards.len() as u64), "the sequence goes on");
        assert!(SelfPlayWorker::new(&config, "w2", 3, None, b"garbage".to_vec(), 0).is_err());
    }
}
