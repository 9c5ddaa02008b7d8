//! Periodic evaluation during a run: the [`Judge`] trait the run calls to rate its network, and
//! the background job that runs it on its own thread while training goes on.
//!
//! The arena, the agent specs and the Elo fit live in `morris-eval`, which depends on this
//! crate; the run only needs "rate this network", so it asks for a [`Judge`] and the `train`
//! binary hands it one built from `morris-eval`. Dependencies keep pointing one way.

use std::thread::JoinHandle;
use std::time::Instant;

use burn::prelude::Device;

use crate::error::{Result, TrainError};
use crate::model::PolicyValueNet;
use crate::store::{CheckpointEval, Elo};

/// The network's results against one opponent.
#[derive(Clone, Debug, PartialEq)]
pub struct OpponentResult {
    /// The opponent's agent spec, e.g. `minimax:depth=3`.
    pub opponent: String,
    /// A short label for progress lines, e.g. `d3`.
    pub label: String,
    /// Games the network won.
    pub wins: u32,
    /// Drawn games.
    pub draws: u32,
    /// Games the network lost.
    pub losses: u32,
}

impl OpponentResult {
    /// Games played.
    pub fn games(&self) -> u32 {
        self.wins + self.draws + self.losses
    }

    /// The network's score: (wins + draws / 2) / games.
    pub fn score(&self) -> f64 {
        (self.wins as f64 + 0.5 * self.draws as f64) / self.games().max(1) as f64
    }
}

/// What a [`Judge`] found.
#[derive(Clone, Debug, PartialEq)]
pub struct Judgement {
    /// One entry per opponent.
    pub results: Vec<OpponentResult>,
    /// The rating these results imply on the judge's scale, if any opponent is rated.
    pub elo: Option<Elo>,
    /// Mean milliseconds per network move.
    pub ms_per_move: f64,
    /// Simulations per network move.
    pub simulations: u32,
    /// The network's accuracy against the tables (searching without them), by phase, when
    /// `[tablebase]` asks for it.
    pub tablebase: Option<morris_env::tablebase::PhaseAccuracy>,
    /// The same judged by the stored values of `eval.judged` (no tables), when set.
    pub judged: Option<morris_env::tablebase::PhaseAccuracy>,
}

/// Rates a network during training. Called from a background thread inside a one-thread rayon
/// pool, so it should not assume more than one core.
pub trait Judge: Send + Sync {
    /// Plays `model` (on `device`) against the judge's opponents, with everything random
    /// derived from `seed`.
    ///
    /// # Errors
    /// A message if a game cannot be played (a bug in an agent, say).
    fn judge(
        &self,
        model: &PolicyValueNet,
        device: &Device,
        seed: u64,
    ) -> std::result::Result<Judgement, String>;
}

/// A judgement running on its own thread.
pub(crate) struct EvalJob {
    /// The step of the judged network.
    pub(crate) step: u64,
    started: Instant,
    handle: JoinHandle<Result<Judgement>>,
}

impl EvalJob {
    /// Starts judging `model` (the network at `step`) on a new thread with a one-thread pool, so
    /// that self-play and learning go on meanwhile.
    pub(crate) fn start(
        judge: std::sync::Arc<dyn Judge>,
        model: PolicyValueNet,
        device: Device,
        step: u64,
        seed: u64,
    ) -> EvalJob {
        let handle = std::thread::spawn(move || {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(1).build().map_err(|e| {
                TrainError::Evaluation(format!("cannot build the evaluation thread pool: {e}"))
            })?;
            pool.install(|| judge.judge(&model, &device, seed)).map_err(TrainError::Evaluation)
        });
        EvalJob { step, started: Instant::now(), handle }
    }

    /// Whether the job is done.
    pub(crate) fn is_finished(&self) -> bool {
        self.handle.is_finished()
    }

    /// Waits for the judgement; returns it with the seconds the job took.
    ///
    /// # Errors
    /// The judge's error, or [`TrainError::Evaluation`] if its thread panicked.
    pub(crate) fn join(self) -> Result<(Judgement, f64)> {
        let secs = self.started.elapsed().as_secs_f64();
        let judgement = self
            .handle
            .join()
            .map_err(|_| TrainError::Evaluation("the evaluation thread panicked".into()))??;
        Ok((judgement, secs))
    }
}

impl Judgement {
    /// The record stored in the judged checkpoint's `eval.json`.
    pub fn record(&self, step: u64) -> CheckpointEval {
        CheckpointEval {
            step,
            elo: self.elo,
            scores: self.results.iter().map(|r| (r.opponent.clone(), r.score(), r.games())).collect(),
            simulations: self.simulations,
        }
    }

    /// The scalars logged for this judgement: the score against each opponent, the time per
    /// move and the Elo with its interval.
    pub fn scalars(&self) -> Vec<(String, f32)> {
        let mut values: Vec<(String, f32)> = self
            .results
            .iter()
            .map(|r| (format!("eval/score_vs_{}", r.opponent), r.score() as f32))
            .collect();
        values.push(("eval/ms_per_move".into(), self.ms_per_move as f32));
        if let Some(e) = self.elo {
            values.push(("eval/elo".into(), e.elo as f32));
            values.push(("eval/elo_low95".into(), e.low95 as f32));
            values.push(("eval/elo_high95".into(), e.high95 as f32));
        }
        if let Some(by_phase) = &self.judged {
            push_kept(&mut values, "eval/judged_kept", "eval/judged", by_phase);
        }
        if let Some(by_phase) = &self.tablebase {
            push_kept(&mut values, "eval/tb_accuracy", "eval/tb", by_phase);
        }
        values
    }

    /// A one-line summary, e.g. `random 100% d3 55% Elo 1350 [1250, 1450]`.
    pub fn summary(&self) -> String {
        let mut parts: Vec<String> =
            self.results.iter().map(|r| format!("{} {:.0}%", r.label, 100.0 * r.score())).collect();
        if let Some(e) = self.elo {
            parts.push(format!("Elo {e}"));
        }
        if let Some(a) = &self.tablebase {
            parts.push(format!("TB {:.1}%", 100.0 * a.total().kept_fraction().0));
        }
        if let Some(a) = &self.judged {
            parts.push(format!("judged {:.1}%", 100.0 * a.total().kept_fraction().0));
        }
        parts.join(" ")
    }
}

/// Logs the value-keeping rate under `tag` with its interval (`_low95`, `_high95`), the rate of
/// each error kind (`{errors}_win_to_draw`, ...), and the same rate for each phase measured
/// (`{tag}_{phase}`).
fn push_kept(
    values: &mut Vec<(String, f32)>,
    tag: &str,
    errors: &str,
    by_phase: &morris_env::tablebase::PhaseAccuracy,
) {
    let a = &by_phase.total();
    let (p, lo, hi) = a.kept_fraction();
    values.push((tag.to_string(), p as f32));
    values.push((format!("{tag}_low95"), lo as f32));
    values.push((format!("{tag}_high95"), hi as f32));
    let n = a.positions.max(1) as f32;
    values.push((format!("{errors}_win_to_draw"), a.win_to_draw as f32 / n));
    values.push((format!("{errors}_win_to_loss"), a.win_to_loss as f32 / n));
    values.push((format!("{errors}_draw_to_loss"), a.draw_to_loss as f32 / n));
    for (phase, a) in by_phase.phases() {
        if a.positions > 0 {
            let (p, lo, hi) = a.kept_fraction();
            values.push((format!("{tag}_{phase}"), p as f32));
            values.push((format!("{tag}_{phase}_low95"), lo as f32));
            values.push((format!("{tag}_{phase}_high95"), hi as f32));
        }
    }
}
