//! Accuracy against perfect play: how often an agent's move keeps the exact value of a
//! position inside the tables, and its errors by kind.

use std::time::Instant;

use serde::{Deserialize, Serialize};

use super::{Tablebase, Wdl};
use crate::agent::Agent;
use crate::game::Game;
use crate::outcome::Outcome;

/// Counts of one accuracy measurement.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Accuracy {
    /// Positions the agent moved in.
    pub positions: u64,
    /// Moves that kept the position's value.
    pub kept: u64,
    /// A won position given away to a draw.
    pub win_to_draw: u64,
    /// A won position turned into a loss.
    pub win_to_loss: u64,
    /// A drawn position turned into a loss.
    pub draw_to_loss: u64,
    /// Positions by their value: won, drawn, lost.
    pub by_value: [u64; 3],
    /// Moves that kept the value, by the position's value: won, drawn, lost.
    pub kept_by_value: [u64; 3],
    /// Seconds the agent took, in all.
    pub seconds: f64,
    /// Positions where the agent gave no move (counted as errors of no kind).
    pub no_move: u64,
}

impl Accuracy {
    /// The fraction of moves that kept the value, with its 95% Wilson interval.
    pub fn kept_fraction(&self) -> (f64, f64, f64) {
        wilson(self.kept, self.positions)
    }

    /// Adds another measurement's counts.
    pub fn add(&mut self, other: &Accuracy) {
        self.positions += other.positions;
        self.kept += other.kept;
        self.win_to_draw += other.win_to_draw;
        self.win_to_loss += other.win_to_loss;
        self.draw_to_loss += other.draw_to_loss;
        for k in 0..3 {
            self.by_value[k] += other.by_value[k];
            self.kept_by_value[k] += other.kept_by_value[k];
        }
        self.seconds += other.seconds;
        self.no_move += other.no_move;
    }

    /// Milliseconds per move.
    pub fn ms_per_move(&self) -> f64 {
        1000.0 * self.seconds / self.positions.max(1) as f64
    }
}

/// The Wilson score interval of `k` successes in `n` trials: (estimate, low, high) at 95%.
pub fn wilson(k: u64, n: u64) -> (f64, f64, f64) {
    if n == 0 {
        return (0.0, 0.0, 1.0);
    }
    let z = 1.959964_f64;
    let (k, n) = (k as f64, n as f64);
    let p = k / n;
    let denom = 1.0 + z * z / n;
    let centre = (p + z * z / (2.0 * n)) / denom;
    let half = z * (p * (1.0 - p) / n + z * z / (4.0 * n * n)).sqrt() / denom;
    (p, (centre - half).max(0.0), (centre + half).min(1.0))
}

fn slot(w: Wdl) -> usize {
    match w {
        Wdl::Win => 0,
        Wdl::Draw => 1,
        Wdl::Loss => 2,
    }
}

/// Lets `agent` play one turn (a move and, if it closes a mill, the removal) in each game and
/// compares the value after it with the value before. Games whose position is outside the
/// tables are skipped. The agent is reset before each position.
pub fn measure(tb: &Tablebase, games: &[Game], agent: &mut dyn Agent) -> Accuracy {
    let mut acc = Accuracy::default();
    for game in games {
        let Some(before) = tb.probe(game.position()) else { continue };
        agent.reset();
        let me = game.current_player();
        let mut g = game.clone();
        let start = Instant::now();
        let mut moved = true;
        // The turn: the move, then the removal it earns (same player), once the turn passes or
        // the game ends.
        loop {
            let Some(a) = agent.choose(&g) else {
                moved = false;
                break;
            };
            if g.apply(a).is_err() {
                moved = false;
                break;
            }
            if g.current_player() != me || g.outcome().is_terminal() {
                break;
            }
        }
        acc.seconds += start.elapsed().as_secs_f64();
        acc.positions += 1;
        acc.by_value[slot(before.wdl)] += 1;
        if !moved {
            acc.no_move += 1;
            continue;
        }
        let after = match g.outcome() {
            Outcome::Win { winner, .. } => Some(if winner == me { Wdl::Win } else { Wdl::Loss }),
            Outcome::Draw(_) => Some(Wdl::Draw),
            Outcome::Ongoing => tb.probe(g.position()).map(|p| p.wdl.flip()),
        };
        let Some(after) = after else { continue };
        match (before.wdl, after) {
            (b, a) if a >= b => {
                acc.kept += 1;
                acc.kept_by_value[slot(b)] += 1;
            }
            (Wdl::Win, Wdl::Draw) => acc.win_to_draw += 1,
            (Wdl::Win, Wdl::Loss) => acc.win_to_loss += 1,
            _ => acc.draw_to_loss += 1,
        }
    }
    acc
}
