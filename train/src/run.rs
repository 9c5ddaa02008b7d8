//! A training run: the run directory, the learner and self-play roles (in one process, or as
//! separate processes that talk only through the directory), checkpoints, logging, the progress
//! display and periodic evaluation.
//!
//! # Run directory
//!
//! | path | written by | content |
//! |---|---|---|
//! | `config.toml` | learner | the resolved config (self-play workers read it) |
//! | `games/WORKER-SEQ.shard` | self-play | finished games ([`crate::shard`]), each file written atomically |
//! | `models/model-STEP/`, `models/LATEST` | learner | network versions for self-play; `LATEST` names the newest |
//! | `checkpoints/step-N/` | learner | [`crate::checkpoint`]; `best.json` names the best rated one |
//! | `tb/` | learner | TensorBoard event files |
//! | `metrics.jsonl` | learner | the same scalars as JSON lines |
//! | `FINISHED` | learner | present once the run has ended; self-play workers then stop |

use std::collections::HashSet;
use std::fs;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use burn::prelude::Device;
use indicatif::{ProgressBar, ProgressStyle};
use morris_env::{Rng, Rules};

use crate::checkpoint::{self, CHECKPOINT_VERSION, CheckpointEval, CheckpointMeta};
use crate::config::TrainConfig;
use crate::device::device_from_name;
use crate::evaluate::{MatchResult, MatchSettings, Opponent, implied_elo, play_match};
use crate::files::write_atomic;
use crate::learner::Learner;
use crate::logging::{EventWriter, MetricsLog};
use crate::model::PolicyValueNet;
use crate::net_evaluator::{NetEvaluator, load_model, save_model};
use crate::replay::{Replay, TrainBatch};
use crate::selfplay::{GameStats, SelfPlay};
use crate::shard::{Sample, read_shard, write_shard};

/// Model versions kept in `RUN/models/`.
const MODELS_KEPT: usize = 4;

/// The paths of a run directory.
#[derive(Clone, Debug)]
pub struct RunDir {
    root: PathBuf,
}

impl RunDir {
    /// The run directory at `root`.
    pub fn new(root: impl Into<PathBuf>) -> RunDir {
        RunDir { root: root.into() }
    }
    /// The directory itself.
    pub fn root(&self) -> &Path {
        &self.root
    }
    /// `config.toml`: the resolved config.
    pub fn config(&self) -> PathBuf {
        self.root.join("config.toml")
    }
    /// `games/`: game shards.
    pub fn games(&self) -> PathBuf {
        self.root.join("games")
    }
    /// `models/`: network versions for self-play.
    pub fn models(&self) -> PathBuf {
        self.root.join("models")
    }
    /// `checkpoints/`.
    pub fn checkpoints(&self) -> PathBuf {
        self.root.join("checkpoints")
    }
    /// `tb/`: TensorBoard logs.
    pub fn tb(&self) -> PathBuf {
        self.root.join("tb")
    }
    /// `metrics.jsonl`.
    pub fn metrics(&self) -> PathBuf {
        self.root.join("metrics.jsonl")
    }
    /// `FINISHED`: the learner has stopped.
    pub fn finished(&self) -> PathBuf {
        self.root.join("FINISHED")
    }
}

/// Which roles this process plays.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// Self-play and learner in one process (the default).
    Both,
    /// The learner only; self-play comes from `train selfplay` processes.
    Learn,
}

/// Settings of the process (not of the run).
#[derive(Clone, Debug)]
pub struct Options {
    /// Roles of this process.
    pub role: Role,
    /// No progress output at all (errors are still printed).
    pub quiet: bool,
}

/// Publishes `model` as `models/model-STEP/` (written aside, then renamed) and points
/// `models/LATEST` at it; older versions beyond the newest few are deleted.
///
/// # Errors
/// If a file cannot be written.
pub fn publish_model(dir: &RunDir, step: u64, model: &PolicyValueNet) -> Result<(), String> {
    let models = dir.models();
    let name = format!("model-{step:08}");
    let dest = models.join(&name);
    if !dest.exists() {
        let tmp = models.join(format!(".tmp-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&tmp);
        save_model(model, model.config(), &tmp)?;
        fs::rename(&tmp, &dest)
            .map_err(|e| format!("cannot move {} to {}: {e}", tmp.display(), dest.display()))?;
    }
    write_atomic(&models.join("LATEST"), format!("{name}\n").as_bytes())?;
    let mut versions: Vec<String> = fs::read_dir(&models)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| n.starts_with("model-"))
        .collect();
    versions.sort();
    let cut = versions.len().saturating_sub(MODELS_KEPT);
    for old in &versions[..cut] {
        let _ = fs::remove_dir_all(models.join(old));
    }
    Ok(())
}

/// The newest published model version, if any.
pub fn latest_model(dir: &RunDir) -> Option<String> {
    let name = fs::read_to_string(dir.models().join("LATEST")).ok()?;
    let name = name.trim();
    (!name.is_empty() && !name.contains('/')).then(|| name.to_string())
}

/// Writes one worker's shards as `games/WORKER-SEQ.shard`, continuing its sequence.
struct ShardWriter {
    dir: PathBuf,
    worker: String,
    seq: u64,
}

impl ShardWriter {
    fn new(dir: PathBuf, worker: &str) -> ShardWriter {
        let prefix = format!("{worker}-");
        let seq = fs::read_dir(&dir)
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| {
                let name = e.file_name().into_string().ok()?;
                name.strip_prefix(&prefix)?.strip_suffix(".shard")?.parse::<u64>().ok()
            })
            .max()
            .map_or(0, |s| s + 1);
        ShardWriter { dir, worker: worker.to_string(), seq }
    }

    fn write(&mut self, samples: &[Sample], games: u32) -> Result<(), String> {
        let path = self.dir.join(format!("{}-{:08}.shard", self.worker, self.seq));
        write_shard(&path, samples, games)?;
        self.seq += 1;
        Ok(())
    }
}

/// Lists the shards in `games/` that have not been read yet, in name order.
fn new_shards(games: &Path, seen: &HashSet<String>) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(games)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| n.ends_with(".shard") && !seen.contains(n))
        .collect();
    names.sort();
    names
}

/// A worker name safe in file names: letters, digits, `-` and `_`.
pub fn sanitize_worker(name: &str) -> String {
    let s: String = name
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' })
        .collect();
    if s.is_empty() { "worker".into() } else { s }
}

/// Peak resident memory of this process in MiB (Linux), if known.
pub fn peak_memory_mib() -> Option<f64> {
    let status = fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024.0)
}

fn build_thread_pool(threads: usize) {
    if threads > 0 {
        // Only the first call in a process can size the global pool; later calls change nothing.
        let _ = rayon::ThreadPoolBuilder::new().num_threads(threads).build_global();
    }
}

/// An evaluation running on its own thread.
struct EvalJob {
    step: u64,
    started: Instant,
    handle: JoinHandle<Result<Vec<MatchResult>, String>>,
}

/// Means of the training scalars over a logging interval.
#[derive(Default)]
struct Averages {
    n: u32,
    total: f64,
    policy: f64,
    value: f64,
    entropy: f64,
    accuracy: f64,
    grad_norm: f64,
    grad_norms: u32,
}

/// Progress output: an indicatif bar on a terminal, plain lines otherwise.
struct Display {
    bar: Option<ProgressBar>,
    plain: bool,
    last_plain: Option<Instant>,
}

impl Display {
    fn new(total_steps: Option<u64>, start_step: u64, quiet: bool) -> Display {
        if quiet {
            return Display { bar: None, plain: false, last_plain: None };
        }
        if !std::io::stderr().is_terminal() {
            return Display { bar: None, plain: true, last_plain: None };
        }
        let bar = match total_steps {
            Some(n) => ProgressBar::new(n),
            None => ProgressBar::new_spinner(),
        };
        let template = if total_steps.is_some() {
            "{elapsed_precise} [{bar:30}] step {pos}/{len} {msg}"
        } else {
            "{elapsed_precise} {spinner} step {pos} {msg}"
        };
        if let Ok(style) = ProgressStyle::with_template(template) {
            bar.set_style(style.progress_chars("=> "));
        }
        bar.set_position(start_step);
        Display { bar: Some(bar), plain: false, last_plain: None }
    }

    fn update(&mut self, step: u64, msg: &str) {
        if let Some(bar) = &self.bar {
            bar.set_position(step);
            bar.set_message(msg.to_string());
        } else if self.plain && self.last_plain.is_none_or(|t| t.elapsed() >= Duration::from_secs(5)) {
            self.last_plain = Some(Instant::now());
            eprintln!("step {step} {msg}");
        }
    }

    /// A line that must be seen (checkpoints, evaluations, warnings).
    fn line(&self, text: &str) {
        match &self.bar {
            Some(bar) => bar.println(text),
            None if self.plain => eprintln!("{text}"),
            None => {}
        }
    }

    fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}

/// The learner's side of a run (plus self-play when both roles share the process).
struct Trainer {
    config: TrainConfig,
    config_text: String,
    rules: Rules,
    dir: RunDir,
    device: Device,
    learner: Learner,
    replay: Replay,
    batch: TrainBatch,
    seen: HashSet<String>,
    shards: Vec<String>,
    games: u64,
    run_rng: Rng,
    wall_base: f64,
    start: Instant,
    tb: EventWriter,
    metrics: MetricsLog,
    display: Display,
    eval: Option<EvalJob>,
    last_eval: String,
    last_checkpoint: Option<u64>,
    selfplay_s: f64,
    learn_s: f64,
    eval_s: f64,
    avg: Averages,
    interval_start: Instant,
    interval_positions: u64,
    interval_evals: u64,
    interval_samples: u64,
    rates: Option<[f64; 3]>,
    game_stats: GameStats,
    best_elo: Option<f64>,
}

impl Trainer {
    fn wall(&self) -> f64 {
        self.wall_base + self.start.elapsed().as_secs_f64()
    }

    /// Fraction of the run's budget used (steps or wall time, whichever is further along).
    fn progress(&self) -> f64 {
        let s = &self.config.schedule;
        let by_steps = s.step_limit().map_or(0.0, |t| self.learner.step as f64 / t as f64);
        let by_time = s.wall_time_minutes.map_or(0.0, |m| self.wall() / (60.0 * m));
        by_steps.max(by_time)
    }

    fn done(&self) -> bool {
        self.progress() >= 1.0
    }

    fn log(&mut self, values: &[(String, f32)]) -> Result<(), String> {
        self.log_at(self.learner.step, values)
    }

    fn log_at(&mut self, step: u64, values: &[(String, f32)]) -> Result<(), String> {
        let refs: Vec<(&str, f32)> = values.iter().map(|(k, v)| (k.as_str(), *v)).collect();
        self.tb.scalars(step as i64, &refs)?;
        self.metrics.scalars(step as i64, &refs)
    }

    /// Reads the shards that appeared since the last call into the replay window.
    fn ingest(&mut self) -> u64 {
        let mut added = 0;
        for name in new_shards(&self.dir.games(), &self.seen) {
            self.seen.insert(name.clone());
            match read_shard(&self.dir.games().join(&name)) {
                Ok(shard) => {
                    added += shard.samples.len() as u64;
                    self.games += shard.games as u64;
                    self.replay.extend(shard.samples);
                    self.shards.push(name);
                }
                Err(e) => self.display.line(&format!("warning: skipping a game shard: {e}")),
            }
        }
        added
    }

    /// Rebuilds the replay window from the newest shards the checkpoint had read.
    fn rebuild_replay(&mut self, meta: &CheckpointMeta) {
        let mut tail = Vec::new();
        let mut have = 0usize;
        for name in meta.shards.iter().rev() {
            if have >= self.config.replay.window {
                break;
            }
            match read_shard(&self.dir.games().join(name)) {
                Ok(shard) => {
                    have += shard.samples.len();
                    tail.push(shard.samples);
                }
                Err(e) => self.display.line(&format!("warning: the replay window misses a shard: {e}")),
            }
        }
        for samples in tail.into_iter().rev() {
            self.replay.extend(samples);
        }
        self.replay.set_counters(meta.positions, meta.samples_drawn);
        self.replay.set_rng(meta.replay_rng.clone());
        self.seen.extend(meta.shards.iter().cloned());
        self.shards = meta.shards.clone();
    }

    fn meta(&self) -> CheckpointMeta {
        CheckpointMeta {
            version: CHECKPOINT_VERSION,
            step: self.learner.step,
            games: self.games,
            positions: self.replay.added(),
            samples_drawn: self.replay.drawn(),
            wall_time_s: self.wall(),
            replay_rng: self.replay.rng().clone(),
            run_rng: self.run_rng.clone(),
            shards: self.shards.clone(),
            crate_version: env!("CARGO_PKG_VERSION").into(),
        }
    }

    fn save_checkpoint(&mut self) -> Result<(), String> {
        if self.last_checkpoint == Some(self.learner.step) {
            return Ok(());
        }
        let dir = checkpoint::save(&self.dir.checkpoints(), &self.learner, &self.config_text, &self.meta())?;
        self.last_checkpoint = Some(self.learner.step);
        let keep: Vec<u64> = self.eval.as_ref().map(|j| j.step).into_iter().collect();
        checkpoint::prune(&self.dir.checkpoints(), self.config.schedule.keep_last, &keep);
        self.tb.sync()?;
        self.display.line(&format!("checkpoint {}", dir.display()));
        Ok(())
    }

    fn start_eval(&mut self) -> Result<(), String> {
        if self.config.eval.opponents.is_empty() {
            return Ok(());
        }
        if self.eval.is_some() {
            self.display.line(&format!(
                "step {}: the previous evaluation is still running; skipped",
                self.learner.step
            ));
            return Ok(());
        }
        // The evaluated network gets a checkpoint, so its results can be attached to it.
        self.save_checkpoint()?;
        let opponents: Vec<Opponent> =
            self.config.eval.opponents.iter().map(|o| Opponent::parse(o)).collect::<Result<_, _>>()?;
        let model = self.learner.inference_model();
        let device = self.device.clone();
        let settings = MatchSettings {
            mcts: self.config.mcts.clone(),
            rules: self.rules,
            pairs: self.config.eval.pairs,
            sims: self.config.eval.simulations,
            seed: self.run_rng.next_u64(),
        };
        let handle = std::thread::spawn(move || {
            // One core, so that self-play and learning go on meanwhile.
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(1)
                .build()
                .map_err(|e| format!("cannot build the evaluation thread pool: {e}"))?;
            pool.install(|| {
                opponents
                    .iter()
                    .enumerate()
                    .map(|(i, &o)| {
                        let s = MatchSettings { seed: settings.seed ^ i as u64, ..settings.clone() };
                        play_match(&model, &device, o, &s)
                    })
                    .collect()
            })
        });
        self.eval = Some(EvalJob { step: self.learner.step, started: Instant::now(), handle });
        Ok(())
    }

    /// Collects a finished evaluation (or waits for it with `wait`), logs it and marks the best
    /// checkpoint.
    fn poll_eval(&mut self, wait: bool) -> Result<(), String> {
        let finished = self.eval.as_ref().is_some_and(|j| j.handle.is_finished());
        if !finished && !wait {
            return Ok(());
        }
        let Some(job) = self.eval.take() else { return Ok(()) };
        let results = job.handle.join().map_err(|_| "the evaluation thread panicked".to_string())??;
        self.eval_s += job.started.elapsed().as_secs_f64();
        let mut values = Vec::new();
        let mut summary = Vec::new();
        let mut ms = 0.0;
        for r in &results {
            values.push((format!("eval/score_vs_{}", r.opponent.name()), r.score() as f32));
            summary.push(format!("{} {:.0}%", short_name(r.opponent), 100.0 * r.score()));
            ms += r.ms_per_move / results.len() as f64;
        }
        values.push(("eval/ms_per_move".into(), ms as f32));
        let elo = implied_elo(&results);
        if let Some((e, lo, hi)) = elo {
            values.push(("eval/elo".into(), e as f32));
            values.push(("eval/elo_low95".into(), lo as f32));
            values.push(("eval/elo_high95".into(), hi as f32));
            summary.push(format!("Elo {e:.0} [{lo:.0}, {hi:.0}]"));
        }
        self.log_at(job.step, &values)?;
        self.last_eval = summary.join(" ");
        let record = CheckpointEval {
            step: job.step,
            elo: elo.map(|(e, lo, hi)| [e, lo, hi]),
            scores: results.iter().map(|r| (r.opponent.name(), r.score(), r.games())).collect(),
            simulations: self.config.eval.simulations,
        };
        let best = checkpoint::record_eval(&self.dir.checkpoints(), &record)?;
        if best {
            self.best_elo = elo.map(|e| e.0);
        }
        self.display.line(&format!(
            "eval at step {}: {}{}",
            job.step,
            self.last_eval,
            if best { " (best so far)" } else { "" }
        ));
        Ok(())
    }

    /// Whether the replay window allows another step.
    fn can_train(&self) -> bool {
        self.replay.len() >= self.config.replay.min_positions
            && self.replay.can_draw(self.config.optimizer.batch_size)
            && !self.done()
    }

    /// Up to `max_steps` optimizer steps, as far as the reuse cap allows. Returns the number of
    /// steps and the last model published meanwhile (for in-process self-play).
    fn train_burst(&mut self, max_steps: u64) -> Result<(u64, Option<PolicyValueNet>), String> {
        let (mut steps, mut published) = (0, None);
        while steps < max_steps && self.can_train() {
            if let Some(model) = self.train_step()? {
                published = Some(model);
            }
            steps += 1;
        }
        Ok((steps, published))
    }

    fn train_step(&mut self) -> Result<Option<PolicyValueNet>, String> {
        let t = Instant::now();
        let lr = self.learner.next_learning_rate(self.progress());
        let batch_size = self.config.optimizer.batch_size;
        if !self.replay.draw(batch_size, &self.rules, &mut self.batch) {
            return Ok(None);
        }
        let want_norm = (self.learner.step + 1).is_multiple_of(self.config.schedule.log_every);
        let stats = self.learner.train_step(&self.batch, lr, want_norm);
        if !stats.loss.total.is_finite() {
            return Err(format!(
                "step {}: the loss is not finite ({}); lower optimizer.learning_rate or set optimizer.grad_clip_norm",
                self.learner.step, stats.loss.total
            ));
        }
        let a = &mut self.avg;
        a.n += 1;
        a.total += stats.loss.total as f64;
        a.policy += stats.loss.policy as f64;
        a.value += stats.loss.value as f64;
        a.entropy += stats.loss.entropy as f64;
        a.accuracy += stats.loss.value_accuracy as f64;
        if let Some(g) = stats.grad_norm {
            a.grad_norm += g as f64;
            a.grad_norms += 1;
        }
        self.interval_samples += batch_size as u64;
        self.learn_s += t.elapsed().as_secs_f64();
        let step = self.learner.step;
        let sc = self.config.schedule.clone();
        let mut published = None;
        if step.is_multiple_of(sc.publish_every) {
            let model = self.learner.inference_model();
            publish_model(&self.dir, step, &model)?;
            published = Some(model);
        }
        if step.is_multiple_of(sc.log_every) {
            self.log_interval(lr)?;
        }
        if step.is_multiple_of(sc.checkpoint_every) {
            self.save_checkpoint()?;
        }
        if sc.eval_every > 0 && step.is_multiple_of(sc.eval_every) {
            self.start_eval()?;
        }
        Ok(published)
    }

    fn log_interval(&mut self, lr: f64) -> Result<(), String> {
        let a = std::mem::take(&mut self.avg);
        let n = a.n.max(1) as f64;
        // Self-play and learning alternate in bursts, so rates are taken over windows of at
        // least 20 seconds (until the first window closes, over what there is).
        let secs = self.interval_start.elapsed().as_secs_f64().max(1e-9);
        let current = [
            self.interval_positions as f64 / secs,
            self.interval_evals as f64 / secs,
            self.interval_samples as f64 / secs,
        ];
        let window_closed = secs >= 20.0;
        if window_closed {
            self.rates = Some(current);
        }
        let [positions_per_s, evals_per_s, samples_per_s] = self.rates.unwrap_or(current);
        let wall = self.wall().max(1e-9);
        let elapsed = self.start.elapsed().as_secs_f64().max(1e-9);
        let mut values: Vec<(String, f32)> = vec![
            ("loss/total".into(), (a.total / n) as f32),
            ("loss/policy".into(), (a.policy / n) as f32),
            ("loss/value".into(), (a.value / n) as f32),
            ("loss/policy_entropy".into(), (a.entropy / n) as f32),
            ("loss/value_accuracy".into(), (a.accuracy / n) as f32),
            ("opt/learning_rate".into(), lr as f32),
            ("perf/positions_per_s".into(), positions_per_s as f32),
            ("perf/nn_evals_per_s".into(), evals_per_s as f32),
            ("perf/train_samples_per_s".into(), samples_per_s as f32),
            ("perf/selfplay_time_fraction".into(), (self.selfplay_s / elapsed) as f32),
            ("perf/learn_time_fraction".into(), (self.learn_s / elapsed) as f32),
            ("perf/eval_time_fraction".into(), (self.eval_s / elapsed) as f32),
            ("replay/positions".into(), self.replay.len() as f32),
            ("replay/positions_total".into(), self.replay.added() as f32),
            ("replay/games_total".into(), self.games as f32),
            ("run/wall_time_s".into(), wall as f32),
        ];
        if a.grad_norms > 0 {
            values.push(("opt/grad_norm".into(), (a.grad_norm / a.grad_norms as f64) as f32));
        }
        let stats = std::mem::take(&mut self.game_stats);
        values.extend(stats.scalars().into_iter().map(|(k, v)| (k.to_string(), v)));
        if let Some(mib) = peak_memory_mib() {
            values.push(("perf/peak_memory_mib".into(), mib as f32));
        }
        self.log(&values)?;
        let msg = format!(
            "| {:.0} pos/s | loss {:.3} (policy {:.3}, value {:.3}) | {}",
            positions_per_s,
            a.total / n,
            a.policy / n,
            a.value / n,
            if self.last_eval.is_empty() { "no eval yet".to_string() } else { self.last_eval.clone() }
        );
        self.display.update(self.learner.step, &msg);
        if window_closed {
            self.interval_start = Instant::now();
            self.interval_positions = 0;
            self.interval_evals = 0;
            self.interval_samples = 0;
        }
        Ok(())
    }
}

fn short_name(o: Opponent) -> String {
    match o {
        Opponent::Random => "random".into(),
        Opponent::Minimax(d) => format!("d{d}"),
    }
}

/// Self-play for one process: the games are split into groups (one per thread), each with its
/// own network evaluator, stepped concurrently. At the default sizes one network call uses about
/// one core (the matrix products are below flex's threshold for splitting), so a single group
/// left the second core mostly idle.
struct SelfPlayer {
    groups: Vec<(SelfPlay, NetEvaluator)>,
    writer: ShardWriter,
    ready: Vec<Sample>,
    games_written: u64,
    shard_positions: usize,
}

impl SelfPlayer {
    /// `config.parallel_games` games in `groups` groups (at most one per game).
    fn new(
        config: &TrainConfig,
        rules: Rules,
        model: PolicyValueNet,
        device: &Device,
        writer: ShardWriter,
        seed: u64,
        groups: usize,
    ) -> Result<SelfPlayer, String> {
        let total = config.selfplay.parallel_games;
        let n = groups.clamp(1, total);
        let mut out = Vec::with_capacity(n);
        for g in 0..n {
            let games = total / n + usize::from(g < total % n);
            let sp_config =
                crate::config::SelfPlayConfig { parallel_games: games, ..config.selfplay.clone() };
            let seed = seed ^ (g as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
            let play = SelfPlay::new(&sp_config, &config.mcts, rules, seed)?;
            out.push((play, NetEvaluator::new(model.clone(), device.clone())));
        }
        Ok(SelfPlayer {
            groups: out,
            writer,
            ready: Vec::new(),
            games_written: 0,
            shard_positions: config.selfplay.shard_positions,
        })
    }

    /// Plays one move in every game; writes a shard when enough positions are ready. Returns
    /// `(positions, evaluations, shard written)`.
    fn step(&mut self) -> Result<(u64, u64, bool), String> {
        use rayon::prelude::*;
        let (p0, e0) = (self.positions(), self.evaluations());
        self.groups.par_iter_mut().try_for_each(|(play, evaluator)| play.step(evaluator))?;
        for (play, _) in &mut self.groups {
            self.ready.append(&mut play.take_samples());
        }
        let mut wrote = false;
        if self.ready.len() >= self.shard_positions {
            self.flush()?;
            wrote = true;
        }
        Ok((self.positions() - p0, self.evaluations() - e0, wrote))
    }

    fn positions(&self) -> u64 {
        self.groups.iter().map(|g| g.0.positions).sum()
    }

    fn evaluations(&self) -> u64 {
        self.groups.iter().map(|g| g.0.evaluations()).sum()
    }

    fn games(&self) -> u64 {
        self.groups.iter().map(|g| g.0.games).sum()
    }

    fn take_stats(&mut self) -> GameStats {
        let mut stats = GameStats::default();
        for (play, _) in &mut self.groups {
            stats.merge(play.take_stats());
        }
        stats
    }

    fn set_model(&mut self, model: &PolicyValueNet) {
        for (_, evaluator) in &mut self.groups {
            evaluator.set_model(model);
        }
    }

    fn flush(&mut self) -> Result<(), String> {
        if self.ready.is_empty() {
            return Ok(());
        }
        let games = self.games() - self.games_written;
        self.games_written = self.games();
        let samples = std::mem::take(&mut self.ready);
        self.writer.write(&samples, games as u32)
    }
}

/// Starts a new run from a config (`train --config`, `train learn --config`). With `own_config`,
/// the config is the run directory's own `config.toml` (a run prepared by hand, or one stopped
/// before its first checkpoint), and only existing checkpoints make the directory taken.
///
/// # Errors
/// A bad config (naming the key), a run directory that already holds a run, or any I/O failure.
pub fn start_run(
    config_text: &str,
    overrides: &[String],
    run_dir: Option<PathBuf>,
    own_config: bool,
    options: &Options,
) -> Result<(), String> {
    let config = TrainConfig::from_toml(config_text, overrides)?;
    let dir = RunDir::new(run_dir.unwrap_or_else(|| config.run.output_dir.join(&config.run.name)));
    if (dir.config().exists() && !own_config) || !checkpoint::list(&dir.checkpoints()).is_empty() {
        return Err(format!(
            "{} already holds a run: resume it with --resume {}, or choose another --run-dir or run.name",
            dir.root().display(),
            dir.root().display()
        ));
    }
    let config_text = toml::to_string(&config).map_err(|e| format!("cannot serialise the config: {e}"))?;
    fs::create_dir_all(dir.games()).map_err(|e| format!("cannot create {}: {e}", dir.games().display()))?;
    write_atomic(&dir.config(), config_text.as_bytes())?;
    build_thread_pool(config.run.threads);
    let device = device_from_name(&config.run.device)?;
    let learner = Learner::new(&config.model, &config.optimizer, &device);
    let mut run_rng = Rng::seed_from_u64(config.run.seed);
    let replay = Replay::new(config.replay.window, config.replay.max_reuse, run_rng.next_u64());
    let trainer = new_trainer(config, config_text, dir, device, learner, replay, run_rng, 0.0, options)?;
    run(trainer, options)
}

/// Resumes a run from a checkpoint or from a run directory's latest checkpoint (`--resume`),
/// with optional `--set` overrides (the network's shape cannot change).
///
/// # Errors
/// A missing or corrupt checkpoint (naming the file), bad overrides, or an I/O failure.
pub fn resume_run(path: &Path, overrides: &[String], options: &Options) -> Result<(), String> {
    let ckpt = checkpoint::resolve(path)?;
    let saved_path = ckpt.join(checkpoint::TRAIN_CONFIG_FILE);
    let saved =
        fs::read_to_string(&saved_path).map_err(|e| format!("cannot read {}: {e}", saved_path.display()))?;
    let config =
        TrainConfig::from_toml(&saved, overrides).map_err(|e| format!("{}: {e}", saved_path.display()))?;
    let device = device_from_name(&config.run.device)?;
    let loaded = checkpoint::load(&ckpt, &device)?;
    if config.model != loaded.config.model {
        return Err("the network's shape ([model]) cannot change when resuming".into());
    }
    let root = ckpt
        .parent()
        .and_then(Path::parent)
        .ok_or_else(|| format!("{} is not inside RUN/checkpoints/", ckpt.display()))?;
    let dir = RunDir::new(root);
    checkpoint::clean_partial(&dir.checkpoints());
    let config_text = toml::to_string(&config).map_err(|e| format!("cannot serialise the config: {e}"))?;
    write_atomic(&dir.config(), config_text.as_bytes())?;
    let _ = fs::remove_file(dir.finished());
    build_thread_pool(config.run.threads);
    let meta = loaded.meta.clone();
    let mut learner = Learner::from_model(loaded.model, meta.step, &config.optimizer, &device);
    learner.load_optimizer(&ckpt.join(checkpoint::OPTIMIZER_FILE))?;
    let replay = Replay::new(config.replay.window, config.replay.max_reuse, 0);
    let mut trainer = new_trainer(
        config,
        config_text,
        dir,
        device,
        learner,
        replay,
        meta.run_rng.clone(),
        meta.wall_time_s,
        options,
    )?;
    trainer.rebuild_replay(&meta);
    trainer.games = meta.games;
    trainer.last_checkpoint = Some(meta.step);
    trainer.display.line(&format!(
        "resumed from {} at step {} ({} positions in the replay window)",
        ckpt.display(),
        meta.step,
        trainer.replay.len()
    ));
    run(trainer, options)
}

#[allow(clippy::too_many_arguments)]
fn new_trainer(
    config: TrainConfig,
    config_text: String,
    dir: RunDir,
    device: Device,
    learner: Learner,
    replay: Replay,
    run_rng: Rng,
    wall_base: f64,
    options: &Options,
) -> Result<Trainer, String> {
    let rules = config.game_rules()?;
    let tb = EventWriter::create(&dir.tb())?;
    let metrics = MetricsLog::open(&dir.metrics())?;
    let display = Display::new(config.schedule.step_limit(), learner.step, options.quiet);
    Ok(Trainer {
        rules,
        dir,
        device,
        replay,
        batch: TrainBatch::default(),
        seen: HashSet::new(),
        shards: Vec::new(),
        games: 0,
        run_rng,
        wall_base,
        start: Instant::now(),
        tb,
        metrics,
        display,
        eval: None,
        last_eval: String::new(),
        last_checkpoint: None,
        selfplay_s: 0.0,
        learn_s: 0.0,
        eval_s: 0.0,
        avg: Averages::default(),
        interval_start: Instant::now(),
        interval_positions: 0,
        interval_evals: 0,
        interval_samples: 0,
        rates: None,
        game_stats: GameStats::default(),
        best_elo: None,
        learner,
        config,
        config_text,
    })
}

fn run(mut t: Trainer, options: &Options) -> Result<(), String> {
    let model = t.learner.inference_model();
    publish_model(&t.dir, t.learner.step, &model)?;
    let mut selfplay = match options.role {
        Role::Both => {
            let seed = t.run_rng.next_u64();
            let writer = ShardWriter::new(t.dir.games(), "local");
            let groups = rayon::current_num_threads();
            Some(SelfPlayer::new(&t.config, t.rules, model, &t.device, writer, seed, groups)?)
        }
        Role::Learn => {
            t.display.line(&format!(
                "learner waiting for game shards in {} (start: train selfplay --run-dir {})",
                t.dir.games().display(),
                t.dir.root().display()
            ));
            None
        }
    };
    // In-process self-play and learning run side by side: each iteration plays one move in
    // every game on one side and takes up to `burst` optimizer steps on the other (a rayon
    // join), then exchanges data and weights. `burst` lets the learner keep up with the reuse
    // cap; a fixed count (not a time budget) keeps runs reproducible.
    let burst = (t.config.selfplay.parallel_games as f64 * t.config.replay.max_reuse as f64
        / t.config.optimizer.batch_size as f64)
        .ceil() as u64
        + 1;
    let mut last_scan = Instant::now();
    t.ingest();
    while !t.done() {
        let mut wrote = false;
        let trained = match selfplay.as_mut() {
            Some(sp) => {
                let (played, learned) = rayon::join(
                    || {
                        let s = Instant::now();
                        sp.step().map(|r| (r, s.elapsed().as_secs_f64()))
                    },
                    || t.train_burst(burst),
                );
                let ((positions, evals, w), secs) = played?;
                let (steps, published) = learned?;
                t.game_stats.merge(sp.take_stats());
                t.interval_positions += positions;
                t.interval_evals += evals;
                t.selfplay_s += secs;
                wrote = w;
                if let Some(model) = published {
                    sp.set_model(&model);
                }
                steps > 0
            }
            None => t.train_burst(u64::MAX)?.0 > 0,
        };
        // Other workers' shards are looked for every second; ours as soon as one is written.
        if wrote || last_scan.elapsed() >= Duration::from_secs(1) {
            last_scan = Instant::now();
            let added = t.ingest();
            if selfplay.is_none() {
                t.interval_positions += added;
            }
        }
        t.poll_eval(false)?;
        if selfplay.is_none() && !trained {
            std::thread::sleep(Duration::from_millis(200));
        }
        if !trained && t.learner.step == 0 {
            let msg = format!(
                "| collecting positions: {} in the window (training starts at {})",
                t.replay.len(),
                t.config.replay.min_positions
            );
            t.display.update(0, &msg);
        }
    }
    // The end: a last checkpoint and (unless the last step was just evaluated) a last evaluation.
    t.save_checkpoint()?;
    t.poll_eval(true)?;
    let evaluated_last =
        t.config.schedule.eval_every > 0 && t.learner.step.is_multiple_of(t.config.schedule.eval_every);
    if t.config.schedule.eval_every > 0 && !evaluated_last && t.learner.step > 0 {
        t.start_eval()?;
        t.poll_eval(true)?;
    }
    write_atomic(&t.dir.finished(), format!("step {}\n", t.learner.step).as_bytes())?;
    t.display.finish();
    let elapsed = t.start.elapsed().as_secs_f64().max(1e-9);
    if !options.quiet {
        println!(
            "finished at step {} after {:.1} min: {} positions from {} games; busy time: self-play {:.0}%, \
             learning {:.0}%, evaluation {:.0}% of the wall time (they run side by side); peak memory {}",
            t.learner.step,
            t.wall() / 60.0,
            t.replay.added(),
            t.games,
            100.0 * t.selfplay_s / elapsed,
            100.0 * t.learn_s / elapsed,
            100.0 * t.eval_s / elapsed,
            peak_memory_mib().map_or("unknown".into(), |m| format!("{m:.0} MiB"))
        );
        if !t.last_eval.is_empty() {
            println!("last evaluation: {}", t.last_eval);
        }
        if let Some(e) = t.best_elo.or_else(|| checkpoint::best(&t.dir.checkpoints()).map(|b| b.1)) {
            println!("best checkpoint Elo: {e:.0}");
        }
        println!("run directory: {}", t.dir.root().display());
    }
    Ok(())
}

/// Runs a self-play worker for the run in `run_dir` (`train selfplay`): it plays with the newest
/// model in `models/`, reloading it when a new one appears, writes shards to `games/`, and stops
/// when the learner has finished (or after `minutes`). It waits up to `wait` for the run's
/// config to appear, and for the learner's first model.
///
/// # Errors
/// A missing or bad run config, an unreadable model, or an I/O failure.
pub fn selfplay_worker(
    run_dir: &Path,
    worker: &str,
    minutes: Option<f64>,
    wait: Duration,
    quiet: bool,
) -> Result<(), String> {
    let dir = RunDir::new(run_dir);
    let path = dir.config();
    // Workers may start before the learner (a job array, say): wait for the run to appear.
    let waiting = Instant::now();
    while !path.exists() && waiting.elapsed() < wait {
        std::thread::sleep(Duration::from_millis(250));
    }
    let text = fs::read_to_string(&path).map_err(|e| {
        format!(
            "cannot read {}: {e} (waited {:.0} s; start the learner first: train learn --config FILE --run-dir DIR)",
            path.display(),
            waiting.elapsed().as_secs_f64()
        )
    })?;
    let config = TrainConfig::from_toml(&text, &[]).map_err(|e| format!("{}: {e}", path.display()))?;
    build_thread_pool(config.run.threads);
    let device = device_from_name(&config.run.device)?;
    let rules = config.game_rules()?;
    let worker = sanitize_worker(worker);
    let start = Instant::now();
    let deadline = minutes.map(|m| Duration::from_secs_f64(60.0 * m.max(0.0)));
    let out_of_time = || deadline.is_some_and(|d| start.elapsed() >= d);
    let say = |s: &str| {
        if !quiet {
            eprintln!("{s}");
        }
    };
    // Wait for the learner's first model.
    let mut current = loop {
        if let Some(name) = latest_model(&dir) {
            break name;
        }
        if dir.finished().exists() || out_of_time() {
            return Ok(());
        }
        if waiting.elapsed() >= wait + Duration::from_secs(600) {
            return Err(format!("no model appeared in {} (is the learner running?)", dir.models().display()));
        }
        std::thread::sleep(Duration::from_millis(500));
    };
    let (model, _) = load_model(&dir.models().join(&current), &device)?;
    let writer = ShardWriter::new(dir.games(), &worker);
    let seed = config.run.seed ^ fnv(&worker) ^ writer.seq.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    let mut sp = SelfPlayer::new(&config, rules, model, &device, writer, seed, rayon::current_num_threads())?;
    say(&format!("self-play worker {worker}: playing with {current}"));
    let mut last_check = Instant::now();
    let mut last_report = Instant::now();
    while !out_of_time() {
        sp.step()?;
        if last_check.elapsed() >= Duration::from_secs(1) {
            last_check = Instant::now();
            if dir.finished().exists() {
                break;
            }
            if let Some(name) = latest_model(&dir).filter(|n| *n != current) {
                // A version may be pruned between reading LATEST and loading it: try again later.
                if let Ok((model, _)) = load_model(&dir.models().join(&name), &device) {
                    sp.set_model(&model);
                    current = name;
                }
            }
        }
        if last_report.elapsed() >= Duration::from_secs(10) {
            last_report = Instant::now();
            let secs = start.elapsed().as_secs_f64();
            say(&format!(
                "self-play worker {worker}: {} games, {} positions, {:.0} positions/s, model {current}",
                sp.games(),
                sp.positions(),
                sp.positions() as f64 / secs
            ));
        }
    }
    sp.flush()?;
    say(&format!("self-play worker {worker}: stopped after {} games", sp.games()));
    Ok(())
}

/// FNV-1a hash of a string (to derive a worker's seed from its name).
fn fnv(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ b as u64).wrapping_mul(0x0100_0000_01b3))
}
