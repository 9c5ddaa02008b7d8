//! The two halves of a run driven by a caller instead of through a shared run directory, for
//! schedulers without a shared disk (Ray actors): a self-play worker handed weights as bytes
//! that hands back its finished games as shard bytes, and a learner that takes those shards and
//! hands out the weights it publishes. They run the same [`SelfPlayer`] and trainer as `train`.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use burn::prelude::Device;

use super::selfplayer::SelfPlayer;
use super::stop::StopRequest;
use super::trainer::Trainer;
use super::{Judge, Options, Role, Start, WhenSpent, build_thread_pool, finish_run, fnv, open};
use crate::config::TrainConfig;
use crate::device::device_for_key;
use crate::error::{Result, TrainError};
use crate::store::{
    EncodedShard, MODEL_FILE, RoleLock, ShardSink, ShardWriter, model_from_bytes, sanitize_worker,
    verify_manifest,
};

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

/// What one [`LearnerSession::train`] call did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TrainReport {
    /// Optimizer steps taken in the call.
    pub steps: u64,
    /// The learner's step after it.
    pub step: u64,
    /// The step of the newest published model ([`LearnerSession::weights`]).
    pub published_step: u64,
    /// Whether the run's budget is spent (call [`LearnerSession::finish`]).
    pub done: bool,
}

/// The learner of a run fed by callers instead of a shared directory: it takes shards as bytes
/// ([`LearnerSession::accept`]), trains at the config's reuse rate ([`LearnerSession::train`]),
/// publishes weights as bytes ([`LearnerSession::weights`]), and writes its run directory
/// (checkpoints, metrics, TensorBoard events, the accepted shards) as `train learn` does, so it
/// resumes from it.
pub struct LearnerSession {
    t: Trainer,
    locks: Vec<RoleLock>,
    /// The newest published model version's name and step.
    published: (String, u64),
    /// One shard writer per worker name, continuing that worker's sequence in `games/`.
    writers: HashMap<String, ShardWriter>,
}

impl LearnerSession {
    /// Opens the learner of `start` (a new run, or one resumed from its run directory), as
    /// `train learn` would, with `judge` rating it every `schedule.eval_every` steps. It publishes
    /// its current weights and reads the shards already in `games/` that its checkpoint had not
    /// (accepted after it). `None` when the run has already spent its budget.
    ///
    /// # Errors
    /// As [`super::start_run`] before its loop: devices, locks (another learner of the run),
    /// a corrupt checkpoint.
    pub fn open(start: Start, judge: Option<Arc<dyn Judge>>) -> Result<Option<LearnerSession>> {
        let options = Options { role: Role::Learn, quiet: true, stop: StopRequest::new() };
        let Some((t, locks)) = open(start, &options, judge, WhenSpent::Stop)? else { return Ok(None) };
        Ok(Some(Self::opened(t, locks)?))
    }

    /// Opens the learner again after its process died, as [`LearnerSession::open`] does, but
    /// also when the checkpoint it resumes has already spent the run's budget (the process died
    /// after its last step): then it trains nothing ([`LearnerSession::train`] reports `done`),
    /// and still takes the shards on their way and finishes the run.
    ///
    /// # Errors
    /// As [`LearnerSession::open`].
    pub fn reopen(start: Start, judge: Option<Arc<dyn Judge>>) -> Result<LearnerSession> {
        let options = Options { role: Role::Learn, quiet: true, stop: StopRequest::new() };
        let (t, locks) = open(start, &options, judge, WhenSpent::Open)?
            .expect("open returns a trainer whenever a spent checkpoint is opened anyway");
        Self::opened(t, locks)
    }

    /// The session of a trainer just opened: its current weights published, and the shards its
    /// checkpoint had not read taken in.
    fn opened(mut t: Trainer, locks: Vec<RoleLock>) -> Result<LearnerSession> {
        let step = t.learner.step();
        let name = t.dir.publish_model(step, &t.learner.inference_model())?;
        t.ingest();
        Ok(LearnerSession { t, locks, published: (name, step), writers: HashMap::new() })
    }

    /// The run's resolved config (what self-play workers need to play).
    pub fn config(&self) -> &TrainConfig {
        &self.t.config
    }

    /// The step of the newest published model and its `model.safetensors` bytes, checked
    /// against the version's manifest.
    ///
    /// # Errors
    /// If the published version cannot be read or fails its manifest.
    pub fn weights(&self) -> Result<(u64, Vec<u8>)> {
        let dir = self.t.dir.models().join(&self.published.0);
        verify_manifest(&dir)?;
        let path = dir.join(MODEL_FILE);
        let bytes = std::fs::read(&path).map_err(|e| TrainError::io("read", &path, e))?;
        Ok((self.published.1, bytes))
    }

    /// Takes a worker's shard: its bytes are checked against their SHA-256 and as a shard, stored
    /// in `games/` and put into the replay window. Returns the positions added.
    ///
    /// # Errors
    /// [`TrainError::Corrupt`] naming the worker and the shard's number for damaged bytes
    /// (nothing is stored); an I/O error if it cannot be stored.
    pub fn accept(&mut self, shard: &EncodedShard) -> Result<u64> {
        let worker = sanitize_worker(&shard.worker);
        let dir = &self.t.dir;
        let read = self.t.shards_read();
        let writer = self.writers.entry(worker.clone()).or_insert_with(|| {
            let mut writer = ShardWriter::new(dir, &worker);
            writer.skip_past(read);
            writer
        });
        let added = self.t.accept_shard(shard, writer)?;
        self.t.interval.add_selfplay(added, 0, Default::default());
        Ok(added)
    }

    /// Up to `max_steps` optimizer steps, as far as the replay window and the reuse cap allow
    /// (none until `replay.min_positions` positions have come), with the publishing, logging,
    /// checkpoints and evaluations of `train`'s schedule, and a checkpoint as soon as the budget
    /// is spent.
    ///
    /// # Errors
    /// A diverging loss, a failed evaluation, or a file that cannot be written.
    pub fn train(&mut self, max_steps: u64) -> Result<TrainReport> {
        let (steps, published) = self.t.train_burst(max_steps)?;
        if let Some(version) = published {
            self.published = version;
        }
        if self.t.done() {
            // The budget's last step is checkpointed at once (not only by `finish`): a learner
            // that dies before `finish` is opened again on it ([`LearnerSession::reopen`]) and
            // trains nothing, instead of resuming short of the budget and finishing there.
            self.t.save_checkpoint()?;
        }
        self.t.poll_eval(false)?;
        Ok(TrainReport {
            steps,
            step: self.t.learner.step(),
            published_step: self.published.1,
            done: self.t.done(),
        })
    }

    /// Writes a checkpoint of the current step (as a stop request does in `train`).
    ///
    /// # Errors
    /// If it cannot be written.
    pub fn checkpoint(&mut self) -> Result<()> {
        self.t.save_checkpoint()?;
        self.t.log_last()
    }

    /// Ends the run: a last checkpoint and evaluation, the last metrics and the `FINISHED` mark,
    /// then the run directory's locks are let go.
    ///
    /// # Errors
    /// If the last checkpoint or evaluation fails.
    pub fn finish(mut self) -> Result<()> {
        let result = finish_run(&mut self.t);
        drop(self.locks);
        result
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
        // Made once: other tests seed the backend's generator concurrently.
        let w = weights(&config, 1);
        let mut a = SelfPlayWorker::new(&config, "w1", 3, None, w.clone(), 20).unwrap();
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
        let mut b = SelfPlayWorker::new(&config, "w1", 3, None, w.clone(), 20).unwrap();
        let digests = |v: &[EncodedShard]| v.iter().map(|s| s.sha256.clone()).collect::<Vec<_>>();
        assert_eq!(digests(&b.play(1500).unwrap()), digests(&shards), "same seed, same weights: same games");

        let wider =
            TrainConfig { model: crate::NetConfig { width: 64, ..config.model.clone() }, ..config.clone() };
        let e = a.set_weights(weights(&wider, 2), 40).unwrap_err();
        assert!(matches!(&e, TrainError::Corrupt { .. }), "{e}");
        assert!(e.to_string().contains("worker 'w1'") && e.to_string().contains("step 40"), "{e}");
        assert_eq!(a.model_step(), 20);
        a.set_weights(w, 40).unwrap();
        assert_eq!(a.model_step(), 40);
        let more = a.play(1500).unwrap();
        assert_eq!(more.first().map(|s| s.seq), Some(shards.len() as u64), "the sequence goes on");
        assert!(SelfPlayWorker::new(&config, "w2", 3, None, b"garbage".to_vec(), 0).is_err());
    }

    /// Feeds `learner` from `worker` until the run's budget is spent, handing the worker each
    /// newly published model; returns the shards accepted.
    fn feed(learner: &mut LearnerSession, worker: &mut SelfPlayWorker) -> usize {
        let mut accepted = 0;
        loop {
            for shard in worker.play(300).unwrap() {
                learner.accept(&shard).unwrap();
                accepted += 1;
            }
            let report = learner.train(1000).unwrap();
            if report.done {
                return accepted;
            }
            if report.published_step != worker.model_step() {
                let (step, weights) = learner.weights().unwrap();
                assert_eq!(step, report.published_step);
                worker.set_weights(weights, step).unwrap();
            }
        }
    }

    /// A learner fed shard bytes by a worker trains to its budget, publishes weights the worker
    /// plays with, refuses damaged shards naming the worker, stores what it accepted in
    /// `games/`, finishes like `train`, and resumes from its run directory.
    #[test]
    fn a_learner_session_trains_on_shard_bytes_and_resumes() {
        let scratch = tempfile::tempdir().unwrap();
        let run = scratch.path().join("run");
        let config = Path::new(env!("CARGO_MANIFEST_DIR")).join("../configs/tiny.toml");
        let set: Vec<String> = [
            "run.threads=1",
            "selfplay.parallel_games=4",
            "schedule.total_steps=30",
            "schedule.checkpoint_every=20",
            "schedule.publish_every=10",
            "schedule.eval_every=0",
            "replay.min_positions=256",
        ]
        .map(String::from)
        .to_vec();
        let start = Start::decide(Some(&config), Some(&run), &set).unwrap();
        let mut learner = LearnerSession::open(start, None).unwrap().expect("a new run");
        let (step, weights) = learner.weights().unwrap();
        assert_eq!(step, 0);
        let mut worker = SelfPlayWorker::new(learner.config(), "w1", 1, None, weights, step).unwrap();
        let good = worker.play(600).unwrap().remove(0);
        let mut bad = good.clone();
        bad.sha256 = "0".repeat(64);
        let mut flipped = good.clone();
        flipped.bytes[30] ^= 1;
        flipped.sha256 = crate::store::sha256_hex(&flipped.bytes);
        for shard in [bad, flipped] {
            let e = learner.accept(&shard).unwrap_err();
            assert!(matches!(&e, TrainError::Corrupt { .. }), "{e}");
            assert!(e.to_string().contains("shard 0 from worker 'w1'"), "{e}");
        }
        assert!(learner.accept(&good).unwrap() > 0);
        let accepted = 1 + feed(&mut learner, &mut worker);
        // The budget (30, not a multiple of checkpoint_every) is checkpointed when it is spent,
        // before `finish`: a learner that died now would reopen on it.
        assert!(crate::store::RunDir::new(&run).checkpoints().join("step-30").is_dir());
        learner.finish().unwrap();
        let dir = crate::store::RunDir::new(&run);
        assert!(dir.is_finished());
        assert!(dir.checkpoints().join("step-30").is_dir());
        let stored = std::fs::read_dir(dir.games()).unwrap().count();
        assert_eq!(stored, accepted, "every accepted shard, and nothing else, is in games/");

        // Finished: opening it again with the same budget does nothing; with more, it resumes.
        let again = Start::decide(None, Some(&run), &[]).unwrap();
        assert!(LearnerSession::open(again.clone(), None).unwrap().is_none());
        // Reopened (a learner restarted after its last step), it trains nothing, still takes
        // shards, and finishes again at the same step.
        let mut reopened = LearnerSession::reopen(again, None).unwrap();
        assert_eq!(reopened.weights().unwrap().0, 30);
        let shard = worker.play(300).unwrap().remove(0);
        assert!(reopened.accept(&shard).unwrap() > 0);
        let report = reopened.train(10).unwrap();
        assert!(report.done && report.steps == 0 && report.step == 30, "{report:?}");
        reopened.finish().unwrap();
        assert!(dir.is_finished());
        assert_eq!(std::fs::read_dir(dir.games()).unwrap().count(), accepted + 1);
        let more = Start::decide(None, Some(&run), &["schedule.total_steps=40".to_string()]).unwrap();
        let mut learner = LearnerSession::open(more, None).unwrap().expect("resumed");
        assert_eq!(learner.weights().unwrap().0, 30);
        feed(&mut learner, &mut worker);
        learner.finish().unwrap();
        assert!(dir.checkpoints().join("step-40").is_dir());
    }
}
