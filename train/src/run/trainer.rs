//! The learner's side of a run: reading new game shards into the replay window, optimizer
//! steps, publishing model versions, checkpoints, logging and starting periodic evaluations.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use burn::prelude::Device;
use morris_env::{Rng, Rules};

use super::display::Display;
use super::judge::{EvalJob, Judge};
use super::metrics::{Clock, Interval, RunState, Sinks};
use crate::config::TrainConfig;
use crate::error::{Result, TrainError};
use crate::learner::Learner;
use crate::replay::{Replay, TrainBatch};
use crate::store::checkpoint::{self, CHECKPOINT_VERSION, CheckpointMeta};
use crate::store::{EncodedShard, RunDir, Shard, ShardWriter, decode_shard, read_shard, sha256_hex};

/// The replay window and what it was filled from.
pub(crate) struct Feed {
    /// The window.
    pub(crate) replay: Replay,
    /// The batch buffer, reused between steps.
    batch: TrainBatch,
    /// Shards read (by name), so each is read once.
    seen: HashSet<String>,
    /// Shards read, in reading order (stored in checkpoints).
    shards: Vec<String>,
    /// Shards skipped because they failed their checksum or did not parse.
    pub(crate) corrupt_shards: u64,
    /// Shards a resumed checkpoint had read that are no longer in `games/` (a checkpoint
    /// copied without its run's games, or a pruned directory): its replay window starts short.
    missing_shards: u64,
    /// Games whose positions reached the learner.
    pub(crate) games: u64,
}

/// The periodic evaluation: who judges, the running job, and what it last said.
struct Evaluation {
    judge: Option<Arc<dyn Judge>>,
    job: Option<EvalJob>,
    last: String,
    best_elo: Option<f64>,
}

/// The learner's side of a run (self-play, when in the same process, is driven beside it).
pub(crate) struct Trainer {
    pub(crate) config: TrainConfig,
    config_text: String,
    pub(crate) rules: Rules,
    pub(crate) dir: RunDir,
    /// The device self-play and the evaluation run the network on (`selfplay.device`).
    pub(crate) inference_device: Device,
    pub(crate) learner: Learner,
    pub(crate) feed: Feed,
    /// Seeds self-play and evaluations (stored in checkpoints).
    pub(crate) run_rng: Rng,
    pub(crate) clock: Clock,
    pub(crate) interval: Interval,
    sinks: Sinks,
    /// The scalars of a finished evaluation, for the next metrics line.
    pending_eval: Vec<(String, f32)>,
    /// The step of the last metrics line.
    last_logged: Option<u64>,
    pub(crate) display: Display,
    eval: Evaluation,
    last_checkpoint: Option<u64>,
}

/// What a trainer starts from besides its config.
pub(crate) struct TrainerState {
    pub(crate) learner: Learner,
    pub(crate) replay: Replay,
    pub(crate) run_rng: Rng,
    /// The checkpoint resumed from, if any.
    pub(crate) resumed: Option<CheckpointMeta>,
}

impl Trainer {
    /// A trainer for `config` in `dir` (the config's text is what checkpoints store), with
    /// self-play and evaluations on `inference_device` (the learner has its own).
    ///
    /// # Errors
    /// An unknown rules preset, or log files that cannot be opened.
    pub(crate) fn new(
        config: TrainConfig,
        dir: RunDir,
        inference_device: Device,
        state: TrainerState,
        judge: Option<Arc<dyn Judge>>,
        quiet: bool,
    ) -> Result<Trainer> {
        let rules = config.game_rules()?;
        let config_text = config.to_toml();
        let TrainerState { learner, replay, run_rng, resumed } = state;
        let sinks = Sinks::open(&dir, resumed.as_ref().map(|m| m.step))?;
        let display = Display::new(config.schedule.step_limit(), learner.step(), quiet);
        let feed = Feed {
            replay,
            batch: TrainBatch::default(),
            seen: HashSet::new(),
            shards: Vec::new(),
            corrupt_shards: 0,
            missing_shards: 0,
            games: 0,
        };
        let mut t = Trainer {
            clock: Clock::new(resumed.as_ref().map_or(0.0, |m| m.wall_time_s)),
            config,
            config_text,
            rules,
            dir,
            inference_device,
            learner,
            feed,
            run_rng,
            interval: Interval::default(),
            sinks,
            pending_eval: Vec::new(),
            last_logged: None,
            display,
            eval: Evaluation { judge, job: None, last: String::new(), best_elo: None },
            last_checkpoint: None,
        };
        if let Some(meta) = resumed {
            t.rebuild_replay(&meta);
            t.feed.games = meta.games;
            t.last_checkpoint = Some(meta.step);
        }
        Ok(t)
    }

    /// Fraction of the run's budget used (steps or wall time, whichever is further along).
    pub(crate) fn progress(&self) -> f64 {
        let s = &self.config.schedule;
        let by_steps = s.step_limit().map_or(0.0, |t| self.learner.step() as f64 / t as f64);
        let by_time = s.wall_time_minutes.map_or(0.0, |m| self.clock.wall() / (60.0 * m));
        by_steps.max(by_time)
    }

    /// Whether the run's budget is spent.
    pub(crate) fn done(&self) -> bool {
        self.progress() >= 1.0
    }

    /// Writes scalars at `step`.
    fn log_at(&mut self, step: u64, values: &[(String, f32)]) -> Result<()> {
        self.sinks.write(step, values)
    }

    /// Reads the shards that appeared since the last call into the replay window; returns the
    /// number of positions added.
    pub(crate) fn ingest(&mut self) -> u64 {
        let mut added = 0;
        for name in self.dir.new_shards(&self.feed.seen) {
            self.feed.seen.insert(name.clone());
            let path = self.dir.shard(&name);
            match read_shard(&path).and_then(|shard| self.of_this_variant(shard, &path)) {
                Ok(shard) => added += self.take_shard(name, shard),
                Err(e) => {
                    self.feed.corrupt_shards += 1;
                    self.display.warn(&format!("warning: skipping a game shard: {e}"));
                }
            }
        }
        added
    }

    /// The names of the shards read so far (restored from the checkpoint on resume).
    pub(crate) fn shards_read(&self) -> &[String] {
        &self.feed.shards
    }

    /// `shard` if its games are of the run's variant.
    ///
    /// # Errors
    /// [`TrainError::Variant`] naming `source` if they are of another.
    fn of_this_variant(&self, shard: Shard, source: &Path) -> Result<Shard> {
        if shard.variant != self.rules.variant {
            return Err(TrainError::Variant {
                what: "game shard",
                path: source.to_path_buf(),
                found: shard.variant,
                expected: self.rules.variant,
            });
        }
        Ok(shard)
    }

    /// Puts a shard, stored in `games/` as `name`, into the replay window; returns the number of
    /// positions added.
    fn take_shard(&mut self, name: String, shard: Shard) -> u64 {
        let added = shard.samples.len() as u64;
        self.feed.games += shard.games as u64;
        self.feed.replay.extend(shard.samples);
        self.feed.seen.insert(name.clone());
        self.feed.shards.push(name);
        added
    }

    /// Takes a shard that came as bytes from `worker` (its `seq`-th, with the SHA-256 it was
    /// sent with): checked like a shard file, stored in `games/` through `writer` (a resumed run
    /// rebuilds its window from there) and put into the replay window. Returns the positions
    /// added.
    ///
    /// # Errors
    /// [`TrainError::Corrupt`] naming the worker and shard if the bytes do not match their
    /// SHA-256 or are not a valid shard (counted in `data/corrupt_shards`); an I/O error if it
    /// cannot be stored.
    pub(crate) fn accept_shard(&mut self, shard: &EncodedShard, writer: &mut ShardWriter) -> Result<u64> {
        let source = PathBuf::from(format!("shard {} from worker '{}'", shard.seq, shard.worker));
        let checked = if sha256_hex(&shard.bytes) == shard.sha256 {
            decode_shard(&shard.bytes, &source).and_then(|decoded| self.of_this_variant(decoded, &source))
        } else {
            Err(TrainError::corrupt(
                "game shard",
                &source,
                "its bytes do not match the SHA-256 it was sent with",
            ))
        };
        let decoded = checked.inspect_err(|_| self.feed.corrupt_shards += 1)?;
        let name = writer.write_bytes(&shard.bytes)?;
        Ok(self.take_shard(name, decoded))
    }

    /// Rebuilds the replay window from the newest shards the checkpoint had read. A damaged
    /// shard is skipped with a warning naming it; shards that are gone are counted and named in
    /// one warning (a checkpoint copied without its games misses every one of them).
    fn rebuild_replay(&mut self, meta: &CheckpointMeta) {
        let mut tail = Vec::new();
        let mut have = 0usize;
        let mut missing = Vec::new();
        for name in meta.shards.iter().rev() {
            if have >= self.config.replay.window {
                break;
            }
            let path = self.dir.shard(name);
            match read_shard(&path).and_then(|shard| self.of_this_variant(shard, &path)) {
                Ok(shard) => {
                    have += shard.samples.len();
                    tail.push(shard.samples);
                }
                Err(TrainError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
                    missing.push(name.as_str());
                }
                Err(e) => {
                    self.feed.corrupt_shards += 1;
                    self.display.warn(&format!("warning: the replay window misses a shard: {e}"));
                }
            }
        }
        if let (Some(newest), Some(oldest)) = (missing.first(), missing.last()) {
            self.feed.missing_shards = missing.len() as u64;
            self.display.warn(&format!(
                "warning: {} shard(s) the checkpoint had read are not in {} ({oldest} .. {newest}): the \
                 replay window starts with {have} positions (of {}) and self-play refills it",
                missing.len(),
                self.dir.games().display(),
                self.config.replay.window,
            ));
        }
        let replay = &mut self.feed.replay;
        for samples in tail.into_iter().rev() {
            replay.extend(samples);
        }
        replay.set_counters(meta.positions, meta.samples_drawn);
        replay.set_rng(meta.replay_rng.clone());
        self.feed.seen.extend(meta.shards.iter().cloned());
        self.feed.shards = meta.shards.clone();
    }

    fn meta(&self) -> CheckpointMeta {
        CheckpointMeta {
            version: CHECKPOINT_VERSION,
            step: self.learner.step(),
            games: self.feed.games,
            positions: self.feed.replay.added(),
            samples_drawn: self.feed.replay.drawn(),
            wall_time_s: self.clock.wall(),
            replay_rng: self.feed.replay.rng().clone(),
            run_rng: self.run_rng.clone(),
            shards: self.feed.shards.clone(),
            crate_version: env!("CARGO_PKG_VERSION").into(),
        }
    }

    /// Writes a checkpoint of the current step (once per step) and prunes old ones.
    ///
    /// # Errors
    /// If it cannot be written.
    pub(crate) fn save_checkpoint(&mut self) -> Result<()> {
        let step = self.learner.step();
        if self.last_checkpoint == Some(step) {
            return Ok(());
        }
        if !self.learner.weights_are_finite() {
            return Err(TrainError::NonFiniteWeights { step });
        }
        let dir = checkpoint::save(&self.dir.checkpoints(), &self.learner, &self.config_text, &self.meta())?;
        self.last_checkpoint = Some(step);
        // The checkpoint under evaluation stays until its results are attached.
        let keep: Vec<u64> = self.eval.job.as_ref().map(|j| j.step).into_iter().collect();
        checkpoint::prune(&self.dir.checkpoints(), self.config.schedule.keep_last, &keep);
        self.sinks.sync()?;
        self.display.line(&format!("checkpoint {}", dir.display()));
        Ok(())
    }

    /// Starts judging the current network in the background, unless there is no judge, no
    /// opponent, or a judgement is still running.
    ///
    /// # Errors
    /// If the checkpoint the results will be attached to cannot be written.
    pub(crate) fn start_eval(&mut self) -> Result<()> {
        let Some(judge) = self.eval.judge.clone() else { return Ok(()) };
        if self.config.eval.opponents.is_empty() {
            return Ok(());
        }
        let step = self.learner.step();
        if self.eval.job.is_some() {
            self.display.line(&format!("step {step}: the previous evaluation is still running; skipped"));
            return Ok(());
        }
        self.save_checkpoint()?;
        let seed = self.run_rng.next_u64();
        let job =
            EvalJob::start(judge, self.learner.inference_model(), self.inference_device.clone(), step, seed);
        self.eval.job = Some(job);
        Ok(())
    }

    /// Whether an evaluation is running.
    pub(crate) fn evaluating(&self) -> bool {
        self.eval.job.is_some()
    }

    /// Collects a finished evaluation (or waits for it with `wait`), logs it and marks the best
    /// checkpoint.
    ///
    /// # Errors
    /// The judge's error, or a file that cannot be written.
    pub(crate) fn poll_eval(&mut self, wait: bool) -> Result<()> {
        let finished = self.eval.job.as_ref().is_some_and(EvalJob::is_finished);
        if !finished && !wait {
            return Ok(());
        }
        let Some(job) = self.eval.job.take() else { return Ok(()) };
        let step = job.step;
        let (judgement, secs) = job.join()?;
        self.clock.eval_s += secs;
        // Logged with the next metrics line (steps in metrics.jsonl only increase), with the
        // step of the network it rated.
        self.pending_eval = judgement.scalars();
        self.pending_eval.push(("eval/network_step".to_string(), step as f32));
        self.eval.last = judgement.summary();
        let best = checkpoint::record_eval(&self.dir.checkpoints(), &judgement.record(step))?;
        if best {
            self.eval.best_elo = judgement.elo.map(|e| e.elo);
        }
        let note = if best { " (best so far)" } else { "" };
        self.display.line(&format!("eval at step {step}: {}{note}", self.eval.last));
        Ok(())
    }

    /// The last evaluation's summary, if there was one.
    pub(crate) fn last_eval(&self) -> Option<&str> {
        (!self.eval.last.is_empty()).then_some(self.eval.last.as_str())
    }

    /// The best evaluated Elo of this session, or of the run's `best.json`.
    pub(crate) fn best_elo(&self) -> Option<f64> {
        self.eval.best_elo.or_else(|| checkpoint::best(&self.dir.checkpoints()).map(|b| b.elo))
    }

    /// Whether the replay window allows another step.
    fn can_train(&self) -> bool {
        self.feed.replay.len() >= self.config.replay.min_positions
            && self.feed.replay.can_draw(self.config.optimizer.batch_size)
            && !self.done()
    }

    /// Up to `max_steps` optimizer steps, as far as the reuse cap allows. Returns the number of
    /// steps and the last model version published meanwhile, with its step (for self-play).
    ///
    /// # Errors
    /// A diverging loss, or a file that cannot be written.
    pub(crate) fn train_burst(&mut self, max_steps: u64) -> Result<(u64, Option<(String, u64)>)> {
        let (mut steps, mut published) = (0, None);
        while steps < max_steps && self.can_train() {
            if let Some(version) = self.train_step()? {
                published = Some(version);
            }
            steps += 1;
        }
        Ok((steps, published))
    }

    /// One optimizer step and what follows it; returns the model version it published (name and
    /// step), if any.
    fn train_step(&mut self) -> Result<Option<(String, u64)>> {
        let t = Instant::now();
        let lr = self.learner.next_learning_rate(self.progress());
        let batch_size = self.config.optimizer.batch_size;
        if !self.feed.replay.draw(batch_size, &self.rules, &mut self.feed.batch) {
            return Ok(None);
        }
        let want_norm = (self.learner.step() + 1).is_multiple_of(self.config.schedule.log_every);
        let stats = self.learner.train_step(&self.feed.batch, lr, want_norm);
        if !stats.loss.total.is_finite() {
            return Err(TrainError::NonFiniteLoss { step: self.learner.step(), loss: stats.loss.total });
        }
        self.interval.add_step(&stats, batch_size);
        self.clock.learn_s += t.elapsed().as_secs_f64();
        let step = self.learner.step();
        let sc = &self.config.schedule;
        let (publish, log, save, eval) = (
            step.is_multiple_of(sc.publish_every),
            step.is_multiple_of(sc.log_every),
            step.is_multiple_of(sc.checkpoint_every),
            sc.eval_every > 0 && step.is_multiple_of(sc.eval_every),
        );
        if (publish || save) && !self.learner.weights_are_finite() {
            return Err(TrainError::NonFiniteWeights { step });
        }
        let published = if publish {
            Some((self.dir.publish_model(step, &self.learner.inference_model())?, step))
        } else {
            None
        };
        // The run's last line waits for its final evaluation (see `log_last`).
        if log && !self.done() {
            self.log_interval(lr)?;
        }
        if save {
            self.save_checkpoint()?;
        }
        if eval {
            self.start_eval()?;
        }
        Ok(published)
    }

    /// Writes the metrics line of the current step, unless it has one already (the last line of
    /// a run, after its final evaluation, or of an interrupted one).
    ///
    /// # Errors
    /// If a sink cannot be written.
    pub(crate) fn log_last(&mut self) -> Result<()> {
        if self.last_logged == Some(self.learner.step()) || self.learner.step() == 0 {
            return Ok(());
        }
        let lr = self.learner.next_learning_rate(self.progress());
        self.log_interval(lr)
    }

    fn log_interval(&mut self, learning_rate: f64) -> Result<()> {
        let state = RunState {
            learning_rate,
            replay_len: self.feed.replay.len(),
            replay_added: self.feed.replay.added(),
            games: self.feed.games,
        };
        let (mut values, msg) = self.interval.take(&self.clock, &state);
        values.push(("data/corrupt_shards".to_string(), self.feed.corrupt_shards as f32));
        values.push(("data/missing_shards".to_string(), self.feed.missing_shards as f32));
        values.append(&mut self.pending_eval);
        let step = self.learner.step();
        self.log_at(step, &values)?;
        self.last_logged = Some(step);
        let eval = self.last_eval().unwrap_or("no eval yet").to_string();
        self.display.update(step, &format!("{msg} | {eval}"));
        Ok(())
    }
}
