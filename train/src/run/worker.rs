//! `train selfplay`: a separate self-play process for a run directory. It plays with the newest
//! published model, reloads it when a new one appears, writes game shards, and stops when the
//! learner has finished.

use std::path::Path;
use std::time::{Duration, Instant};

use super::selfplayer::SelfPlayer;
use super::stop::StopRequest;
use super::{build_thread_pool, fnv};
use crate::config::TrainConfig;
use crate::device::{describe, device_for_key};
use crate::error::{Result, TrainError};
use crate::store::files::read_text;
use crate::store::sanitize_worker;
use crate::store::{RoleLock, RunDir, ShardWriter};

/// How often the worker looks for a new model and for the learner's end.
const CHECK_EVERY: Duration = Duration::from_secs(1);
/// How often the worker reports its progress.
const REPORT_EVERY: Duration = Duration::from_secs(10);
/// How long the worker waits for the learner's first model, beyond the wait for the run.
const FIRST_MODEL_WAIT: Duration = Duration::from_secs(600);
/// Stream of [`morris_env::Rng::derive`] for worker seeds.
const WORKER_STREAM: u64 = 2;

/// Settings of a self-play worker.
#[derive(Clone, Debug)]
pub struct WorkerOptions {
    /// The worker's name, used in its shard file names (sanitized for file names).
    pub name: String,
    /// Stop after this many minutes (default: when the learner finishes).
    pub minutes: Option<f64>,
    /// How long to wait for the run's `config.toml` to appear.
    pub wait: Duration,
    /// The device to play on, when not the run's (`selfplay.device`, else `run.device`): a
    /// worker's machine often has other hardware than the learner's.
    pub device: Option<String>,
    /// Print nothing but errors.
    pub quiet: bool,
    /// Set (by a signal handler) to stop: finished games are written, then the worker returns
    /// [`TrainError::Interrupted`].
    pub stop: StopRequest,
}

/// Runs a self-play worker for the run in `run_dir` (`train selfplay`): it plays with the newest
/// model in `models/`, reloading it when a new one appears, writes shards to `games/`, and stops
/// when the learner has finished (or after `minutes`). It waits up to `wait` for the run's
/// config to appear, and for the learner's first model.
///
/// # Errors
/// A missing or bad run config, an unreadable model, or an I/O failure.
pub fn selfplay_worker(run_dir: &Path, options: &WorkerOptions) -> Result<()> {
    let dir = RunDir::new(run_dir);
    let path = dir.config();
    // Workers may start before the learner (a job array, say): wait for the run to appear.
    let waiting = Instant::now();
    while !path.exists() && waiting.elapsed() < options.wait {
        std::thread::sleep(Duration::from_millis(250));
    }
    if !path.exists() {
        return Err(TrainError::NotFound {
            what: "no run config at",
            path,
            hint: format!(
                "(waited {:.0} s; start the learner first: train learn --config FILE --run-dir DIR)",
                waiting.elapsed().as_secs_f64()
            ),
        });
    }
    let text = read_text(&path)?;
    let config = TrainConfig::from_toml(&text, &[]).map_err(|e| TrainError::from(e).in_file(&path))?;
    build_thread_pool(config.run.threads)?;
    let (key, device_name) = match &options.device {
        Some(name) => ("--device", name.as_str()),
        None => config.selfplay_device(),
    };
    let device = device_for_key(key, device_name)?;
    let rules = config.game_rules()?;
    let worker = sanitize_worker(&options.name);
    // One process per worker name: two would write the same shard names over each other.
    let role = format!("self-play worker '{worker}'");
    let _lock = RoleLock::acquire(&dir.worker_lock(&worker), &role, "pass another --worker name")?;
    dir.clean_shard_leftovers(&worker);
    let start = Instant::now();
    let deadline = options.minutes.map(|m| Duration::from_secs_f64(60.0 * m.max(0.0)));
    let out_of_time = || deadline.is_some_and(|d| start.elapsed() >= d);
    let say = |s: &str| {
        if !options.quiet {
            eprintln!("{s}");
        }
    };
    // Wait for the learner's first model.
    let mut current = loop {
        if let Some(name) = dir.latest_model() {
            break name;
        }
        if dir.is_finished() || out_of_time() {
            return Ok(());
        }
        if let Some(signal) = options.stop.signal() {
            return Err(TrainError::Interrupted { signal, done: "no games were played yet".into() });
        }
        if waiting.elapsed() >= options.wait + FIRST_MODEL_WAIT {
            return Err(TrainError::NotFound {
                what: "no model appeared in",
                path: dir.models(),
                hint: "(is the learner running?)".into(),
            });
        }
        std::thread::sleep(Duration::from_millis(500));
    };
    let model = dir.load_published(&current, &device)?;
    let writer = ShardWriter::new(&dir, &worker);
    let seed = morris_env::Rng::derive(config.run.seed ^ fnv(&worker), WORKER_STREAM, writer.next_seq());
    let mut sp = SelfPlayer::new(&config, rules, model, &device, writer, seed, rayon::current_num_threads())?;
    say(&format!("self-play worker {worker}: playing with {current} on {}", describe(device_name, &device)));
    let mut last_check = Instant::now();
    let mut last_report = Instant::now();
    while !out_of_time() {
        if options.stop.signal().is_some() {
            break;
        }
        sp.step()?;
        if last_check.elapsed() >= CHECK_EVERY {
            last_check = Instant::now();
            if dir.is_finished() {
                break;
            }
            if let Some(name) = dir.latest_model().filter(|n| *n != current) {
                // A version may be pruned between reading LATEST and loading it: try again later.
                if let Ok(model) = dir.load_published(&name, &device) {
                    sp.set_model(&model);
                    current = name;
                }
            }
        }
        if last_report.elapsed() >= REPORT_EVERY {
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
    if let Some(signal) = options.stop.signal() {
        return Err(TrainError::Interrupted {
            signal,
            done: format!("self-play worker {worker} wrote its {} finished games", sp.games()),
        });
    }
    say(&format!("self-play worker {worker}: stopped after {} games", sp.games()));
    Ok(())
}
