//! A training run: deciding how it starts, then self-play and the learner side by side (or the
//! learner alone, fed by `train selfplay` workers through the run directory) until the budget
//! is spent.
//!
//! | module | job |
//! |---|---|
//! | `mod.rs` | [`Start`] (new, from a run directory, resume), [`start_run`] and the main loop |
//! | `trainer` | the learner's side: shards into the replay window, steps, checkpoints, logging |
//! | `selfplayer` | in-process self-play in one group per thread, written as shards |
//! | `judge` | the [`Judge`] trait the run calls to rate its network, run in the background |
//! | `metrics` | loss means, throughput windows, time fractions, TensorBoard and JSONL sinks |
//! | `display` | the progress bar or plain progress lines |
//! | `worker` | `train selfplay`: a separate self-play process |
//! | `remote` | [`SelfPlayWorker`] and [`LearnerSession`]: the halves of a run exchanging bytes, not files |
//!
//! The files of a run directory are described in [`crate::store::RunDir`].

mod display;
mod judge;
mod metrics;
mod remote;
mod selfplayer;
mod stop;
mod trainer;
mod worker;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use morris_env::Rng;

pub use judge::{Judge, Judgement, OpponentResult};
pub use metrics::peak_memory_mib;
pub use remote::{LearnerSession, SelfPlayWorker, TrainReport};
pub use stop::{StopRequest, signal_name};
pub use worker::{WorkerOptions, selfplay_worker};

use self::selfplayer::SelfPlayer;
use self::trainer::{Trainer, TrainerState};
use crate::config::TrainConfig;
use crate::device::{describe, device_for_key};
use crate::error::{Result, TrainError};
use crate::learner::Learner;
use crate::replay::Replay;
use crate::store::checkpoint;
use crate::store::checkpoint::Skipped;
use crate::store::files::{read_text, write_atomic};
use crate::store::{MANIFEST_FILE, RoleLock, RunDir, ShardWriter, Verification};

/// How often the learner looks for other workers' shards.
const SCAN_EVERY: Duration = Duration::from_secs(1);
/// How long a learner without in-process self-play sleeps when it has nothing to learn from.
const IDLE_SLEEP: Duration = Duration::from_millis(200);
/// The worker name of in-process self-play.
const LOCAL_WORKER: &str = "local";
/// Stream of [`Rng::derive`] for the seed of the network's initial weights.
const WEIGHTS_STREAM: u64 = 4;

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
    /// Set (by a signal handler) to stop early: the current step finishes and a checkpoint is
    /// written.
    pub stop: StopRequest,
}

/// How a run starts, decided once from the command line ([`Start::decide`]), with its config
/// already parsed and validated.
#[derive(Clone, Debug)]
pub enum Start {
    /// A new run from a config file, in a directory that holds no run yet.
    New {
        /// The resolved config.
        config: TrainConfig,
        /// The config file it came from.
        file: PathBuf,
        /// The run directory.
        run_dir: PathBuf,
    },
    /// A run directory with its own `config.toml` but no checkpoint yet (prepared by hand, or
    /// stopped before its first checkpoint): starts from that config.
    FromRunDir {
        /// The resolved config.
        config: TrainConfig,
        /// The run directory.
        run_dir: PathBuf,
    },
    /// Continues from a checkpoint (`--set` may change everything but the network's shape).
    Resume {
        /// The resolved config: the checkpoint's, with the overrides.
        config: TrainConfig,
        /// The checkpoint directory.
        checkpoint: PathBuf,
        /// Newer checkpoints that failed verification; they are set aside (renamed
        /// `corrupt-step-N`, not deleted) when the run starts.
        skipped: Vec<Skipped>,
    },
}

impl Start {
    /// Decides how to start: with `config_file`, a new run (in `run_dir`, or the config's
    /// `run.output_dir/run.name`); otherwise the run in `run_dir` continues from its latest
    /// checkpoint (or `run_dir` is itself a checkpoint), or starts from its own `config.toml` if
    /// it has no checkpoint. `overrides` are `section.key=value` strings.
    ///
    /// # Errors
    /// [`TrainError::Config`] naming the file and key; [`TrainError::AlreadyExists`] if a new
    /// run's directory already holds a run; [`TrainError::NotFound`] if there is nothing to
    /// resume; I/O errors naming the file.
    pub fn decide(config_file: Option<&Path>, run_dir: Option<&Path>, overrides: &[String]) -> Result<Start> {
        if let Some(file) = config_file {
            let config = parse_config_file(file, overrides)?;
            let run_dir =
                run_dir.map_or_else(|| config.run.output_dir.join(&config.run.name), Path::to_path_buf);
            let dir = RunDir::new(&run_dir);
            if dir.config().exists() || !checkpoint::list(&dir.checkpoints()).is_empty() {
                return Err(TrainError::AlreadyExists {
                    hint: format!(
                        "holds a run: resume it with --resume {}, or choose another --run-dir or run.name",
                        run_dir.display()
                    ),
                    path: run_dir,
                });
            }
            return Ok(Start::New { config, file: file.to_path_buf(), run_dir });
        }
        let Some(dir) = run_dir else {
            return Err(TrainError::Config {
                file: None,
                source: crate::error::ConfigError::Parse(
                    "pass --config FILE (e.g. configs/default.toml), --resume DIR or --run-dir DIR".into(),
                ),
            });
        };
        let own = RunDir::new(dir);
        if own.config().is_file() && checkpoint::list(&own.checkpoints()).is_empty() {
            let config = parse_config_file(&own.config(), overrides)?;
            return Ok(Start::FromRunDir { config, run_dir: dir.to_path_buf() });
        }
        let (ckpt, skipped) = checkpoint::resolve(dir)?;
        let (config, _) = checkpoint::read_config(&ckpt, overrides)?;
        Ok(Start::Resume { config, checkpoint: ckpt, skipped })
    }

    /// The resolved config.
    pub fn config(&self) -> &TrainConfig {
        match self {
            Start::New { config, .. } | Start::FromRunDir { config, .. } | Start::Resume { config, .. } => {
                config
            }
        }
    }

    /// The file the config was read from (for error messages).
    pub fn config_file(&self) -> PathBuf {
        match self {
            Start::New { file, .. } => file.clone(),
            Start::FromRunDir { run_dir, .. } => RunDir::new(run_dir).config(),
            Start::Resume { checkpoint, .. } => checkpoint.join(checkpoint::TRAIN_CONFIG_FILE),
        }
    }
}

/// Reads and validates a config file with overrides; errors name the file.
fn parse_config_file(file: &Path, overrides: &[String]) -> Result<TrainConfig> {
    let text = read_text(file)?;
    TrainConfig::from_toml(&text, overrides).map_err(|e| TrainError::from(e).in_file(file))
}

/// Runs a training run as `start` says, with `judge` (if any) rating the network every
/// `schedule.eval_every` steps.
///
/// # Errors
/// Any failure of the run: I/O, a corrupt checkpoint, a diverging loss, a failed evaluation.
pub fn start_run(start: Start, options: &Options, judge: Option<Arc<dyn Judge>>) -> Result<()> {
    let Some((t, locks)) = open(start, options, judge, WhenSpent::Stop)? else { return Ok(()) };
    let result = run(t, options);
    drop(locks);
    result
}

/// Everything before the main loop: the devices checked, the run directory's locks taken, the
/// learner built (new, or from the checkpoint resumed) and the trainer opened on the directory.
/// `None` when the checkpoint to resume has already spent its budget (said unless quiet), unless
/// `spent` says to open it anyway.
fn open(
    start: Start,
    options: &Options,
    judge: Option<Arc<dyn Judge>>,
    spent: WhenSpent,
) -> Result<Option<(Trainer, Vec<RoleLock>)>> {
    let config = start.config().clone();
    build_thread_pool(config.run.threads)?;
    // Both devices are checked before anything is written.
    let device = device_for_key("run.device", &config.run.device)?;
    let (selfplay_key, selfplay_name) = config.selfplay_device();
    let inference_device = device_for_key(selfplay_key, selfplay_name)?;
    // Held until the run returns; the kernel releases them if the process dies.
    let mut locks = Vec::new();
    let mut notes = Vec::new();
    let (dir, state, resumed_from) = match &start {
        Start::New { run_dir, .. } | Start::FromRunDir { run_dir, .. } => {
            let dir = RunDir::new(run_dir);
            locks.extend(lock_roles(&dir, options.role)?);
            // The initial weights come from the backend's generator, seeded from `run.seed`.
            device.seed(Rng::derive(config.run.seed, WEIGHTS_STREAM, 0));
            let learner = Learner::new(&config.model, &config.optimizer, &device);
            let mut run_rng = Rng::seed_from_u64(config.run.seed);
            let replay = Replay::new(config.replay.window, config.replay.max_reuse, run_rng.next_u64())
                .with_search_value_weight(config.replay.search_value_weight);
            (dir, TrainerState { learner, replay, run_rng, resumed: None }, None)
        }
        Start::Resume { checkpoint: ckpt, skipped, .. } => {
            // The lock first: another learner could be pruning the checkpoints being read.
            let root = ckpt.parent().and_then(Path::parent).ok_or_else(|| TrainError::NotFound {
                what: "cannot resume from",
                path: ckpt.clone(),
                hint: ": it is not inside RUN/checkpoints/".into(),
            })?;
            let dir = RunDir::new(root);
            locks.extend(lock_roles(&dir, options.role)?);
            let loaded = checkpoint::load(ckpt, &device)?;
            if loaded.verification == Verification::Unverified {
                notes.push(format!(
                    "note: {} has no {MANIFEST_FILE} (written before checksums): loaded unverified",
                    ckpt.display()
                ));
            }
            if config.model != loaded.config.model {
                return Err(TrainError::Config {
                    file: None,
                    source: crate::error::ConfigError::value(
                        "model",
                        "(the network's shape) cannot change when resuming",
                    ),
                });
            }
            let sc = &config.schedule;
            let steps_done = sc.step_limit().is_some_and(|limit| loaded.meta.step >= limit);
            let time_done = sc.wall_time_minutes.is_some_and(|m| loaded.meta.wall_time_s >= 60.0 * m);
            if (steps_done || time_done) && spent == WhenSpent::Stop {
                // Nothing to do: say so instead of "resumed", and touch nothing.
                if !options.quiet {
                    println!(
                        "{} already finished at step {} ({}); raise schedule.total_steps or \
                         schedule.wall_time_minutes with --set to train further",
                        ckpt.display(),
                        loaded.meta.step,
                        if steps_done { "its step budget is spent" } else { "its time budget is spent" }
                    );
                }
                return Ok(None);
            }
            for s in skipped {
                let aside = checkpoint::set_aside(&s.dir)?;
                notes.push(format!(
                    "warning: skipped {} ({}); moved to {}",
                    s.dir.display(),
                    s.reason,
                    aside.display()
                ));
            }
            dir.clear_finished();
            let meta = loaded.meta;
            let mut learner = Learner::from_model(loaded.model, meta.step, &config.optimizer, &device);
            learner.load_optimizer(&ckpt.join(checkpoint::OPTIMIZER_FILE))?;
            let replay = Replay::new(config.replay.window, config.replay.max_reuse, 0)
                .with_search_value_weight(config.replay.search_value_weight);
            let run_rng = meta.run_rng.clone();
            (dir, TrainerState { learner, replay, run_rng, resumed: Some(meta) }, Some(ckpt.clone()))
        }
    };
    // Leftovers of interrupted writes (a kill, a full disk) go before anything new is written.
    let mut removed = dir.clean_learner_leftovers();
    if options.role == Role::Both {
        removed += dir.clean_shard_leftovers(LOCAL_WORKER);
    }
    if removed > 0 {
        notes.push(format!("removed {removed} leftovers of interrupted writes"));
    }
    std::fs::create_dir_all(dir.games()).map_err(|e| TrainError::io("create", &dir.games(), e))?;
    write_atomic(&dir.config(), config.to_toml().as_bytes())?;
    let devices = if device == inference_device {
        format!("device: {}", describe(&config.run.device, &device))
    } else {
        format!(
            "devices: learner {}, self-play and evaluation {}",
            describe(&config.run.device, &device),
            describe(config.selfplay_device().1, &inference_device)
        )
    };
    let t = Trainer::new(config, dir, inference_device, state, judge, options.quiet)?;
    t.display.line(&devices);
    for note in &notes {
        t.display.warn(note);
    }
    if let Some(ckpt) = resumed_from {
        t.display.line(&format!(
            "resumed from {} at step {} ({} positions in the replay window)",
            ckpt.display(),
            t.learner.step(),
            t.feed.replay.len()
        ));
    }
    Ok(Some((t, locks)))
}

/// What [`open`] does with a checkpoint that has already spent the run's budget.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum WhenSpent {
    /// Opens nothing (`train` says so and returns).
    Stop,
    /// Opens it: the trainer is done from the start, trains nothing, and can still take shards
    /// and finish (a learner restarted after its last step, with shards still on their way).
    Open,
}

/// Takes the learner's lock on the run directory and, when self-play runs in this process, the
/// lock of its worker name, before anything in the directory is written.
///
/// # Errors
/// [`TrainError::Locked`] naming the holder if another learner (or a worker of that name) runs.
fn lock_roles(dir: &RunDir, role: Role) -> Result<Vec<RoleLock>> {
    let hint = "stop it first (with Ctrl-C it saves a checkpoint), then resume";
    let mut locks = vec![RoleLock::acquire(&dir.learner_lock(), "learner", hint)?];
    if role == Role::Both {
        let name = format!("self-play worker '{LOCAL_WORKER}'");
        let hint = format!("the learner plays as '{LOCAL_WORKER}': give external workers other names");
        locks.push(RoleLock::acquire(&dir.worker_lock(LOCAL_WORKER), &name, &hint)?);
    }
    Ok(locks)
}

/// The main loop: self-play and learning until the budget is spent, then a last checkpoint and
/// evaluation, and the summary.
fn run(mut t: Trainer, options: &Options) -> Result<()> {
    // Weights reach self-play only through the published model files, in this process as in
    // workers elsewhere, whatever the two devices are.
    let first = t.dir.publish_model(t.learner.step(), &t.learner.inference_model())?;
    let mut selfplay = match options.role {
        Role::Both => {
            let seed = t.run_rng.next_u64();
            let mut writer = ShardWriter::new(&t.dir, LOCAL_WORKER);
            // A run resumed without its games/ files must not reuse names it has read.
            writer.skip_past(t.shards_read());
            let groups = rayon::current_num_threads();
            let model = t.dir.load_published(&first, &t.inference_device)?;
            Some(SelfPlayer::new(&t.config, t.rules, model, &t.inference_device, writer, seed, groups)?)
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
    // join), then exchanges data and weights. A fixed count (not a time budget) keeps runs
    // reproducible; it is sized by the move's search work, so that the two sides of the join
    // take about as long (a full search is several times a cheap one) and neither core waits:
    // `parallel_games · max_reuse / batch_size` steps per move on average, in proportion to
    // the move's simulations, plus one so that the learner can catch up with the reuse cap.
    let sp = &t.config.selfplay;
    let steps_per_move =
        sp.parallel_games as f64 * t.config.replay.max_reuse as f64 / t.config.optimizer.batch_size as f64;
    let mean_simulations = (sp.full_search_fraction as f64 * sp.simulations as f64
        + (1.0 - sp.full_search_fraction as f64) * sp.cheap_simulations as f64)
        * sp.parallel_games as f64;
    let burst = |simulations: u64| {
        let share = if mean_simulations > 0.0 { simulations as f64 / mean_simulations } else { 1.0 };
        (steps_per_move * share).ceil() as u64 + 1
    };
    let mut last_scan = Instant::now();
    t.ingest();
    while !t.done() {
        if let Some(signal) = options.stop.signal() {
            return interrupted(t, signal);
        }
        let mut wrote = false;
        let trained = match selfplay.as_mut() {
            Some(sp) => {
                let burst = burst(sp.next_simulations());
                let (played, learned) = rayon::join(
                    || {
                        let s = Instant::now();
                        sp.step().map(|r| (r, s.elapsed().as_secs_f64()))
                    },
                    || t.train_burst(burst),
                );
                let (progress, secs) = played?;
                let (steps, published) = learned?;
                t.interval.add_selfplay(progress.positions, progress.evaluations, sp.take_stats());
                t.clock.selfplay_s += secs;
                t.clock.selfplay_parts.add(progress.time);
                wrote = progress.wrote_shard;
                if let Some((name, _)) = published {
                    sp.set_model(&t.dir.load_published(&name, &t.inference_device)?);
                }
                steps > 0
            }
            None => t.train_burst(u64::MAX)?.0 > 0,
        };
        // Other workers' shards are looked for every second; ours as soon as one is written.
        if wrote || last_scan.elapsed() >= SCAN_EVERY {
            last_scan = Instant::now();
            let added = t.ingest();
            if selfplay.is_none() {
                t.interval.add_selfplay(added, 0, Default::default());
            }
        }
        t.poll_eval(false)?;
        if selfplay.is_none() && !trained {
            std::thread::sleep(IDLE_SLEEP);
        }
        if !trained && t.learner.step() == 0 {
            let msg = format!(
                "| collecting positions: {} in the window (training starts at {})",
                t.feed.replay.len(),
                t.config.replay.min_positions
            );
            t.display.update(0, &msg);
        }
    }
    finish(t, options)
}

/// A stop request: a checkpoint of the current step (the last completed optimizer step), and
/// [`TrainError::Interrupted`] saying how to resume. The run is not marked finished.
fn interrupted(mut t: Trainer, signal: i32) -> Result<()> {
    t.save_checkpoint()?;
    t.log_last()?;
    t.display.finish();
    let step = t.learner.step();
    Err(TrainError::Interrupted {
        signal,
        done: format!(
            "checkpoint saved at step {step}; resume with: train --resume {}",
            t.dir.root().display()
        ),
    })
}

/// The end of a run: a last checkpoint and (unless the last step was just evaluated) a last
/// evaluation, the `FINISHED` mark and the summary.
fn finish(mut t: Trainer, options: &Options) -> Result<()> {
    finish_run(&mut t)?;
    if options.quiet {
        return Ok(());
    }
    let step = t.learner.step();
    let session = t.clock.session();
    println!(
        "finished at step {step} after {:.1} min: {} positions from {} games; busy time: self-play {:.0}%, \
         learning {:.0}%, evaluation {:.0}% of the wall time (they run side by side); peak memory {}",
        t.clock.wall() / 60.0,
        t.feed.replay.added(),
        t.feed.games,
        100.0 * t.clock.selfplay_s / session,
        100.0 * t.clock.learn_s / session,
        100.0 * t.clock.eval_s / session,
        peak_memory_mib().map_or("unknown".into(), |m| format!("{m:.0} MiB"))
    );
    if let Some(last) = t.last_eval() {
        println!("last evaluation: {last}");
    }
    if let Some(e) = t.best_elo() {
        println!("best checkpoint Elo: {e:.0}");
    }
    println!("run directory: {}", t.dir.root().display());
    Ok(())
}

/// The end of a run without the summary: a last checkpoint, a last evaluation (unless the last
/// step was just evaluated), the last metrics and the `FINISHED` mark.
fn finish_run(t: &mut Trainer) -> Result<()> {
    t.save_checkpoint()?;
    t.poll_eval(true)?;
    let step = t.learner.step();
    let every = t.config.schedule.eval_every;
    if every > 0 && step > 0 && !step.is_multiple_of(every) {
        t.start_eval()?;
        t.poll_eval(true)?;
    }
    debug_assert!(!t.evaluating());
    t.log_last()?;
    t.dir.mark_finished(step)?;
    t.display.finish();
    Ok(())
}

/// Sizes rayon's global pool (0: all cores). Only the first call in a process can size it;
/// later calls change nothing.
///
/// # Errors
/// [`ConfigError::Value`](crate::error::ConfigError::Value) for `run.threads` if the threads
/// cannot be started (an I/O error from the OS).
fn build_thread_pool(threads: usize) -> Result<()> {
    if threads == 0 {
        return Ok(());
    }
    match rayon::ThreadPoolBuilder::new().num_threads(threads).build_global() {
        // "Already initialized" has no source; only an I/O failure to spawn threads has one.
        Err(e) if std::error::Error::source(&e).is_some() => Err(TrainError::Config {
            file: None,
            source: crate::error::ConfigError::value(
                "run.threads",
                format!("= {threads}: cannot start the thread pool ({e})"),
            ),
        }),
        _ => Ok(()),
    }
}

/// FNV-1a hash of a string (to derive a worker's seed from its name).
fn fnv(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| (h ^ b as u64).wrapping_mul(0x0100_0000_01b3))
}
