//! The run's scalars: means of the training losses over a logging interval, throughput over
//! windows of at least 20 seconds, where the wall time went, and the sinks they are written to.

use std::time::Instant;

use crate::error::Result;
use crate::learner::StepStats;
use crate::logging::{EventWriter, MetricsLog};
use crate::run::selfplayer::SelfPlayTime;
use crate::selfplay::GameStats;
use crate::store::RunDir;
use crate::store::checkpoint::checkpoint_name;

/// Rates are measured over windows of at least this many seconds (self-play and learning
/// alternate in bursts, so shorter windows jitter).
const RATE_WINDOW_S: f64 = 20.0;

/// Where the wall time of this session went (self-play, learning and evaluation run side by side,
/// so the fractions may add up to more than 1).
pub(crate) struct Clock {
    /// Wall seconds of earlier sessions of the run (from the checkpoint resumed).
    pub(crate) base_s: f64,
    /// When this session started.
    pub(crate) start: Instant,
    /// Seconds spent in self-play.
    pub(crate) selfplay_s: f64,
    /// Seconds spent in optimizer steps.
    pub(crate) learn_s: f64,
    /// Seconds spent by evaluation jobs.
    pub(crate) eval_s: f64,
    /// Self-play's seconds by part, summed over its threads.
    pub(crate) selfplay_parts: SelfPlayTime,
    /// The process's CPU seconds (user and system, all threads) when this session started.
    pub(crate) cpu_start_s: Option<f64>,
}

impl Clock {
    /// A clock for a session continuing `base_s` seconds of earlier training.
    pub(crate) fn new(base_s: f64) -> Clock {
        Clock {
            base_s,
            start: Instant::now(),
            selfplay_s: 0.0,
            learn_s: 0.0,
            eval_s: 0.0,
            selfplay_parts: SelfPlayTime::default(),
            cpu_start_s: process_cpu_seconds(),
        }
    }

    /// Wall seconds of training over all sessions.
    pub(crate) fn wall(&self) -> f64 {
        self.base_s + self.start.elapsed().as_secs_f64()
    }

    /// Wall seconds of this session (never zero).
    pub(crate) fn session(&self) -> f64 {
        self.start.elapsed().as_secs_f64().max(1e-9)
    }
}

/// Sums over one logging interval, and counters over the current rate window.
#[derive(Default)]
pub(crate) struct Interval {
    steps: u32,
    total: f64,
    policy: f64,
    value: f64,
    entropy: f64,
    accuracy: f64,
    grad_norm: f64,
    grad_norms: u32,
    games: GameStats,
    window_start: Option<Instant>,
    positions: u64,
    evaluations: u64,
    samples: u64,
    rates: Option<[f64; 3]>,
}

/// What the run reports besides the interval's own sums.
pub(crate) struct RunState {
    /// The learning rate of the last step.
    pub(crate) learning_rate: f64,
    /// Positions in the replay window now.
    pub(crate) replay_len: usize,
    /// Positions added to the window since the start of the run.
    pub(crate) replay_added: u64,
    /// Games whose positions reached the learner.
    pub(crate) games: u64,
}

impl Interval {
    /// Adds one optimizer step of `batch` samples.
    pub(crate) fn add_step(&mut self, stats: &StepStats, batch: usize) {
        self.window_start.get_or_insert_with(Instant::now);
        self.steps += 1;
        self.total += stats.loss.total as f64;
        self.policy += stats.loss.policy as f64;
        self.value += stats.loss.value as f64;
        self.entropy += stats.loss.entropy as f64;
        self.accuracy += stats.loss.value_accuracy as f64;
        if let Some(g) = stats.grad_norm {
            self.grad_norm += g as f64;
            self.grad_norms += 1;
        }
        self.samples += batch as u64;
    }

    /// Adds self-play progress: positions recorded, network evaluations and finished games.
    pub(crate) fn add_selfplay(&mut self, positions: u64, evaluations: u64, games: GameStats) {
        self.window_start.get_or_insert_with(Instant::now);
        self.positions += positions;
        self.evaluations += evaluations;
        self.games.merge(games);
    }

    /// The interval's scalars (then reset), and the progress message; the rate window restarts
    /// once it has lasted [`RATE_WINDOW_S`].
    pub(crate) fn take(&mut self, clock: &Clock, state: &RunState) -> (Vec<(String, f32)>, String) {
        let n = self.steps.max(1) as f64;
        let secs = self.window_start.map_or(0.0, |t| t.elapsed().as_secs_f64()).max(1e-9);
        let current =
            [self.positions as f64 / secs, self.evaluations as f64 / secs, self.samples as f64 / secs];
        let window_closed = secs >= RATE_WINDOW_S;
        if window_closed {
            self.rates = Some(current);
        }
        let [positions_per_s, evals_per_s, samples_per_s] = self.rates.unwrap_or(current);
        let session = clock.session();
        let mut values: Vec<(String, f32)> = vec![
            ("loss/total".into(), (self.total / n) as f32),
            ("loss/policy".into(), (self.policy / n) as f32),
            ("loss/value".into(), (self.value / n) as f32),
            ("loss/policy_entropy".into(), (self.entropy / n) as f32),
            ("loss/value_accuracy".into(), (self.accuracy / n) as f32),
            ("opt/learning_rate".into(), state.learning_rate as f32),
            ("perf/positions_per_s".into(), positions_per_s as f32),
            ("perf/nn_evals_per_s".into(), evals_per_s as f32),
            ("perf/train_samples_per_s".into(), samples_per_s as f32),
            ("perf/selfplay_time_fraction".into(), (clock.selfplay_s / session) as f32),
            ("perf/learn_time_fraction".into(), (clock.learn_s / session) as f32),
            ("perf/eval_time_fraction".into(), (clock.eval_s / session) as f32),
            ("perf/selfplay_network_cores".into(), (clock.selfplay_parts.network_s / session) as f32),
            ("perf/selfplay_tree_cores".into(), (clock.selfplay_parts.tree_s / session) as f32),
            ("perf/selfplay_other_cores".into(), (clock.selfplay_parts.other_s / session) as f32),
            ("replay/positions".into(), state.replay_len as f32),
            ("replay/positions_total".into(), state.replay_added as f32),
            ("replay/games_total".into(), state.games as f32),
            ("run/wall_time_s".into(), clock.wall().max(1e-9) as f32),
        ];
        if let (Some(now), Some(start)) = (process_cpu_seconds(), clock.cpu_start_s) {
            values.push(("perf/cpu_cores_used".into(), ((now - start) / session) as f32));
        }
        if self.grad_norms > 0 {
            values.push(("opt/grad_norm".into(), (self.grad_norm / self.grad_norms as f64) as f32));
        }
        let games = std::mem::take(&mut self.games);
        values.extend(games.scalars().into_iter().map(|(k, v)| (k.to_string(), v)));
        if let Some(mib) = peak_memory_mib() {
            values.push(("perf/peak_memory_mib".into(), mib as f32));
        }
        let msg = format!(
            "| {positions_per_s:.0} pos/s | loss {:.3} (policy {:.3}, value {:.3})",
            self.total / n,
            self.policy / n,
            self.value / n,
        );
        // The losses restart every interval; the rate counters only when their window closed.
        let (rates, window_start, positions, evaluations, samples) = if window_closed {
            (self.rates, None, 0, 0, 0)
        } else {
            (self.rates, self.window_start, self.positions, self.evaluations, self.samples)
        };
        *self = Interval { rates, window_start, positions, evaluations, samples, ..Interval::default() };
        (values, msg)
    }
}

/// The sinks of the run's scalars: TensorBoard event files and `metrics.jsonl`.
pub(crate) struct Sinks {
    tb: EventWriter,
    metrics: MetricsLog,
}

impl Sinks {
    /// Opens the sinks of `dir` (appending to what is there). A run resumed from the checkpoint
    /// at `resumed_at` first drops the `metrics.jsonl` lines after that step and marks the
    /// restart in TensorBoard, so that no step is logged twice.
    ///
    /// # Errors
    /// If a file cannot be created, opened or rewritten.
    pub(crate) fn open(dir: &RunDir, resumed_at: Option<u64>) -> Result<Sinks> {
        let mut tb = EventWriter::create(&dir.tb())?;
        if let Some(step) = resumed_at {
            MetricsLog::truncate_after(&dir.metrics(), step)?;
            tb.session_start(step as i64, &dir.checkpoints().join(checkpoint_name(step)))?;
        }
        Ok(Sinks { tb, metrics: MetricsLog::open(&dir.metrics())? })
    }

    /// Writes `values` at `step` to both sinks.
    ///
    /// # Errors
    /// If a write fails.
    pub(crate) fn write(&mut self, step: u64, values: &[(String, f32)]) -> Result<()> {
        let refs: Vec<(&str, f32)> = values.iter().map(|(k, v)| (k.as_str(), *v)).collect();
        self.tb.scalars(step as i64, &refs)?;
        self.metrics.scalars(step as i64, &refs)
    }

    /// Flushes the event file to disk (at checkpoints).
    ///
    /// # Errors
    /// If the flush fails.
    pub(crate) fn sync(&self) -> Result<()> {
        self.tb.sync()
    }
}

/// Peak resident memory of this process in MiB (Linux), if known.
pub fn peak_memory_mib() -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib / 1024.0)
}

/// Clock ticks per second of `/proc/<pid>/stat` (`USER_HZ`, 100 on every Linux ABI in use).
const USER_HZ: f64 = 100.0;

/// CPU seconds used by this process so far, all threads, user plus system (Linux; `None` where
/// `/proc/self/stat` cannot be read).
pub fn process_cpu_seconds() -> Option<f64> {
    let stat = std::fs::read_to_string("/proc/self/stat").ok()?;
    // The command name (field 2) is in parentheses and may contain spaces: count from after it.
    let rest = &stat[stat.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace();
    // After the name: state is field 3, utime field 14 and stime field 15.
    let utime: f64 = fields.nth(11)?.parse().ok()?;
    let stime: f64 = fields.next()?.parse().ok()?;
    Some((utime + stime) / USER_HZ)
}
