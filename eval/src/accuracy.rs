//! The tablebase accuracy report: an agent's moves judged against perfect play, by phase, on
//! positions drawn uniformly (from the tables, and from the placement phase) and taken from
//! real games, either with the tables or from a stored set of judged positions.

use morris_env::tablebase::{
    Accuracy, JudgedPosition, JudgedSet, PhaseAccuracy, Tablebase, measure, measure_judged,
    random_placement_position,
};
use morris_env::{Color, Game, Rng, Rules};
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::agents::AgentSpec;
use crate::arena::GameRecord;
use crate::error::{EvalError, Result};

/// Stream of [`Rng::derive`] for the uniform positions.
const UNIFORM_STREAM: u64 = 11;
/// Stream for the sample of game positions.
const GAMES_STREAM: u64 = 12;
/// Stream for the agents' seeds.
const AGENT_STREAM: u64 = 13;
/// Stream for the uniform placement positions.
const PLACEMENT_STREAM: u64 = 14;

/// One row of the report: where the positions came from and what the agent did in them.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AccuracyRow {
    /// `"uniform"` (drawn from the tables: no pieces in hand), `"placement"` (drawn from the
    /// placement phase) or `"games"`.
    pub source: String,
    /// The counts, all phases together.
    pub accuracy: Accuracy,
    /// The same counts by the phase of the player to move.
    #[serde(default)]
    pub by_phase: PhaseAccuracy,
}

impl AccuracyRow {
    /// A row of `source` from its counts by phase.
    pub fn new(source: &str, by_phase: PhaseAccuracy) -> AccuracyRow {
        AccuracyRow { source: source.to_string(), accuracy: by_phase.total(), by_phase }
    }
}

/// The accuracy of one agent against the tables.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct AccuracyReport {
    /// The agent's spec.
    pub agent: String,
    /// The tables' directory and sectors.
    pub tablebase: String,
    /// One row per source of positions.
    pub rows: Vec<AccuracyRow>,
}

/// `n` positions drawn uniformly from the tables (see
/// [`Tablebase::random_position`]), as games under `rules`.
pub fn uniform_positions(tb: &Tablebase, n: u32, seed: u64, rules: Rules) -> Vec<Game> {
    let mut rng = Rng::seed_from_u64(Rng::derive(seed, UNIFORM_STREAM, 0));
    (0..n).map(|_| Game::from_position(rules, tb.random_position(&mut rng))).collect()
}

/// `n` positions with pieces in hand drawn uniformly from the placement phase (see
/// [`random_placement_position`]), as games under `rules`.
pub fn uniform_placement_positions(n: u32, seed: u64, rules: Rules) -> Vec<Game> {
    let mut rng = Rng::seed_from_u64(Rng::derive(seed, PLACEMENT_STREAM, 0));
    (0..n).map(|_| Game::from_position(rules, random_placement_position(&mut rng))).collect()
}

/// Whether `tb` can value `game`'s position: one inside the tables, or one with pieces in hand
/// when the tables cover the placement phase.
fn valued(tb: &Tablebase, game: &Game) -> bool {
    let pos = game.position();
    if pos.in_hand(Color::White) > 0 || pos.in_hand(Color::Black) > 0 {
        tb.covers_placement()
    } else {
        tb.probe(pos).is_some()
    }
}

/// Up to `n` positions the tables can value (inside the tables, and with pieces in hand when
/// they cover the placement phase) from game records (each with the game's history up
/// to it, so repetitions count), sampled without replacement.
///
/// # Errors
/// A record under other rules than `rules`, or with a move that does not replay.
pub fn positions_from_records(
    tb: &Tablebase,
    records: &[GameRecord],
    n: u32,
    seed: u64,
    rules: Rules,
) -> Result<Vec<Game>> {
    let mut all = Vec::new();
    for (i, rec) in records.iter().enumerate() {
        if Rules::preset(&rec.rules) != Some(rules) {
            return Err(EvalError::Usage(format!(
                "game {} of the records is played under '{}' rules, not the ones asked for",
                i + 1,
                rec.rules
            )));
        }
        let mut game = Game::new(rules);
        for m in &rec.moves {
            if !game.outcome().is_terminal() && valued(tb, &game) {
                all.push(game.clone());
            }
            game.play_notation(m).map_err(|e| {
                EvalError::Usage(format!("game {} of the records does not replay at '{m}': {e}", i + 1))
            })?;
        }
    }
    let mut rng = Rng::seed_from_u64(Rng::derive(seed, GAMES_STREAM, 0));
    // Partial Fisher–Yates: the first n after shuffling.
    let take = (n as usize).min(all.len());
    for i in 0..take {
        let j = i + rng.below((all.len() - i) as u32) as usize;
        all.swap(i, j);
    }
    all.truncate(take);
    Ok(all)
}

/// Lets agents built from `spec` play one turn in each item (in parallel, one agent per chunk
/// of 16), judged by `judge`, and adds up the counts.
fn measure_chunks<T: Sync>(
    spec: &AgentSpec,
    items: &[T],
    seed: u64,
    judge: impl Fn(&[T], &mut dyn morris_env::Agent) -> PhaseAccuracy + Sync,
) -> Result<PhaseAccuracy> {
    let parts: Vec<Result<PhaseAccuracy>> = items
        .par_chunks(16)
        .enumerate()
        .map(|(i, chunk)| {
            let mut agent = spec.build(Rng::derive(seed, AGENT_STREAM, i as u64))?;
            Ok(judge(chunk, agent.as_mut()))
        })
        .collect();
    let mut total = PhaseAccuracy::default();
    for p in parts {
        total.add(&p?);
    }
    Ok(total)
}

/// Lets agents built from `spec` play one turn in each game (in parallel, one agent per chunk
/// of positions) and tallies the results by phase.
///
/// # Errors
/// An agent that cannot be built.
pub fn measure_spec(spec: &AgentSpec, tb: &Tablebase, games: &[Game], seed: u64) -> Result<PhaseAccuracy> {
    measure_chunks(spec, games, seed, |chunk, agent| measure(tb, chunk, agent))
}

/// The same on a stored set of judged positions, without tables: one row per source of the
/// set's positions (`uniform`, `placement`, `games`).
///
/// # Errors
/// An agent that cannot be built.
pub fn measure_judged_spec(spec: &AgentSpec, set: &JudgedSet, seed: u64) -> Result<Vec<AccuracyRow>> {
    let mut rows = Vec::new();
    for source in set.sources() {
        let positions: Vec<&JudgedPosition> = set.positions.iter().filter(|p| p.source == source).collect();
        let acc = measure_chunks(spec, &positions, seed, |chunk, agent| {
            measure_judged(chunk.iter().copied(), &set.rules, agent)
        })?;
        rows.push(AccuracyRow::new(&source, acc));
    }
    Ok(rows)
}

/// Judges `positions` of each source with the tables (every legal turn valued; in parallel),
/// for a stored set.
///
/// # Errors
/// A position the tables cannot value (a sector not built).
pub fn judge_positions(tb: &Tablebase, sources: &[(&str, Vec<Game>)]) -> Result<Vec<JudgedPosition>> {
    let mut out = Vec::new();
    for (source, games) in sources {
        let judged: Vec<_> = games
            .par_iter()
            .filter(|g| !g.outcome().is_terminal())
            .map(|g| JudgedPosition::judge(tb, source, g.position()))
            .collect::<std::result::Result<_, _>>()
            .map_err(|e| EvalError::Usage(e.to_string()))?;
        out.extend(judged);
    }
    Ok(out)
}

impl AccuracyReport {
    /// The report as a table: for each source, then for each phase in it, the positions, the
    /// fraction of moves that kept the value with its 95% Wilson interval, errors by kind, the
    /// same fraction by the position's value, and the agent's time per move.
    pub fn to_text(&self) -> String {
        let mut out = format!("{} against {}\n", self.agent, self.tablebase);
        out += "source   positions  kept   95% interval      win->draw win->loss draw->loss  won kept   drawn kept  lost kept  ms/move\n";
        let line = |label: &str, a: &Accuracy| {
            let (p, lo, hi) = a.kept_fraction();
            let by = |k: usize| format!("{}/{}", a.kept_by_value[k], a.by_value[k]);
            format!(
                "{:<8} {:>9}  {:>5.1}% [{:>5.1}%, {:>5.1}%] {:>9} {:>9} {:>10}  {:>9}  {:>10}  {:>9}  {:>7.1}\n",
                label,
                a.positions,
                100.0 * p,
                100.0 * lo,
                100.0 * hi,
                a.win_to_draw,
                a.win_to_loss,
                a.draw_to_loss,
                by(0),
                by(1),
                by(2),
                a.ms_per_move()
            )
        };
        for row in &self.rows {
            out += &line(&row.source, &row.accuracy);
            let phases: Vec<_> = row.by_phase.phases().into_iter().filter(|(_, a)| a.positions > 0).collect();
            if phases.len() > 1 {
                for (name, a) in phases {
                    out += &line(&format!(" {name}"), a);
                }
            }
        }
        out
    }

    /// The counts by phase over every source.
    pub fn by_phase(&self) -> PhaseAccuracy {
        let mut t = PhaseAccuracy::default();
        for row in &self.rows {
            t.add(&row.by_phase);
        }
        t
    }
}
