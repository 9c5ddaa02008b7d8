//! The alpha-beta minimax baseline: negamax with iterative deepening, a Zobrist transposition
//! table, move ordering (TT move, mills and removals first, killers, history), depth, time and
//! node limits, and a seeded random tie-break among equally scored best moves.
//!
//! # Sign convention
//!
//! Scores are from the point of view of the player to move at each node. A child whose player
//! to move is the same (the removal after closing a mill) keeps the sign and the window; only
//! a child where play has passed to the opponent is negated. Ply parity is never used.
//!
//! # Depth
//!
//! Depth counts turns: a move and the removal it earns use one unit of depth together, so a
//! depth-`d` search always sees `d` moves and their removals.

mod eval;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

pub use eval::{EvalWeights, PhaseWeights, Terms};

use crate::action::{Action, NUM_ACTIONS};
use crate::agent::Agent;
use crate::game::Game;
use crate::outcome::Outcome;
use crate::position::Position;
use crate::rng::Rng;
use crate::tablebase::{Probe, SharedTablebase, Wdl};
use crate::tables::{Spec, with_spec};
use crate::types::{BitBoard, Point};

/// Score of a won position at the root; a win `k` plies away scores `WIN - k`.
pub const WIN: i32 = 1_000_000;
/// Scores beyond this magnitude are wins or losses.
const WIN_BOUND: i32 = WIN - 10_000;
/// Score of a tablebase win at the root; a win `d` plies before the next removal, found `k`
/// plies down the tree, scores `TABLEBASE_WIN - k - d`. Below the forced-result band, above
/// any evaluation.
pub const TABLEBASE_WIN: i32 = 900_000;

/// The score of a tablebase probe `ply` plies below the root.
fn tablebase_score(p: Probe, ply: usize) -> i32 {
    let s = TABLEBASE_WIN - ply as i32 - p.plies as i32;
    match p.wdl {
        Wdl::Win => s,
        Wdl::Draw => 0,
        Wdl::Loss => -s,
    }
}

/// For a score that announces a forced result, the plies to it (positive: the player to move
/// wins); `None` for a heuristic score.
pub fn forced_result_plies(score: i32) -> Option<i32> {
    (score.abs() > WIN_BOUND).then(|| if score > 0 { WIN - score } else { -(WIN + score) })
}
const INF: i32 = WIN + 1;
/// Deepest iteration when only a time or node limit is given.
const MAX_DEPTH: u32 = 64;
const MAX_PLY: usize = 256;

/// Limits and settings of a [`Minimax`] search. At least one limit should be set; with none,
/// the search stops at depth 64.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MinimaxConfig {
    /// Deepest iteration, in turns.
    pub depth: Option<u32>,
    /// Wall-clock budget per move; the deepest completed iteration is used.
    pub time: Option<Duration>,
    /// Node budget per move (nodes are positions visited).
    pub nodes: Option<u64>,
    /// Transposition table size as a power of two (entries of 16 bytes).
    pub tt_bits: u32,
    /// Seed of the tie-break among equally scored best moves.
    pub seed: u64,
    /// Evaluation weights.
    pub weights: EvalWeights,
    /// Endgame tables: positions inside them are scored exactly (a leaf), and a root inside
    /// them is played from the tables. Not serialized: configs name the directory.
    #[serde(skip)]
    pub tablebase: Option<SharedTablebase>,
}

/// Transposition-table size (`tt_bits`) of the minimax players in arena matches, on the Elo
/// ladder and in the training evaluation: 2^18 entries of 16 bytes, 4 MiB per searcher.
///
/// It is a quarter of the 2^20 entries (16 MiB) of [`MinimaxConfig::depth`]: those callers build
/// a new searcher, and so allocate and clear a new table, for every game (the arena for each of
/// the games it plays in parallel, the training evaluation for every game of a match at once). The agent spec `minimax:depth=D` stands for this size (other sizes are written
/// `tt=BITS`), so the ladder ratings describe searchers with this table.
pub const ARENA_TT_BITS: u32 = 18;

impl MinimaxConfig {
    /// A depth-limited search with the default weights and a 2^20-entry table.
    pub fn depth(depth: u32) -> MinimaxConfig {
        MinimaxConfig {
            depth: Some(depth),
            time: None,
            nodes: None,
            tt_bits: 20,
            seed: 0,
            weights: EvalWeights::default(),
            tablebase: None,
        }
    }
}

impl MinimaxConfig {
    /// The limits as `key=value` pairs, e.g. `depth=6,time=100ms` (the agent-spec syntax).
    pub fn limits_text(&self) -> String {
        let mut parts = Vec::new();
        if let Some(d) = self.depth {
            parts.push(format!("depth={d}"));
        }
        if let Some(t) = self.time {
            parts.push(format!("time={}ms", t.as_millis()));
        }
        if let Some(n) = self.nodes {
            parts.push(format!("nodes={n}"));
        }
        parts.join(",")
    }
}

/// What a search found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SearchResult {
    /// The chosen action (a random one among the equally scored best), or `None` if the game is over.
    pub best: Option<Action>,
    /// Its score for the player to move.
    pub score: i32,
    /// Deepest completed iteration.
    pub depth: u32,
    /// Nodes visited.
    pub nodes: u64,
    /// How many root actions shared the best score.
    pub ties: u32,
}

#[derive(Clone, Copy, Default)]
struct TtEntry {
    key: u64,
    score: i32,
    best: u16,
    depth: u8,
    bound: u8,
}

const EXACT: u8 = 1;
const LOWER: u8 = 2;
const UPPER: u8 = 3;

/// A move list with ordering scores, on the stack.
struct MoveList {
    actions: [Action; NUM_ACTIONS / 4],
    scores: [i32; NUM_ACTIONS / 4],
    len: usize,
}

/// Alpha-beta minimax agent. See the [module docs](self) for the conventions.
///
/// ```
/// use morris_env::{Game, Rules, Minimax, MinimaxConfig};
/// // White can close the mill d7-d6-d5 by placing on d7.
/// let game = Game::from_notation(Rules::standard(), "d6 a1 d5 g1").unwrap();
/// let mut mm = Minimax::new(MinimaxConfig::depth(2));
/// let r = mm.search(&game);
/// assert_eq!(r.best.map(|a| game.position().move_of(a).unwrap().to_string()), Some("d7".into()));
/// ```
pub struct Minimax {
    config: MinimaxConfig,
    tt: Vec<TtEntry>,
    tt_mask: usize,
    /// History heuristic: how often each action caused a cutoff, indexed by action.
    history: Vec<i32>,
    killers: Vec<[u16; 2]>,
    rng: Rng,
    nodes: u64,
    deadline: Option<Instant>,
    node_limit: u64,
    stopped: bool,
    /// Set by another thread to end the search (a UCI `stop`).
    stop: Option<Arc<AtomicBool>>,
}

impl Minimax {
    /// A searcher with the given settings.
    pub fn new(config: MinimaxConfig) -> Minimax {
        let bits = config.tt_bits.clamp(10, 30);
        let size = 1usize << bits;
        Minimax {
            tt: vec![TtEntry::default(); size],
            tt_mask: size - 1,
            history: vec![0; NUM_ACTIONS],
            killers: vec![[u16::MAX; 2]; MAX_PLY + 1],
            rng: Rng::seed_from_u64(config.seed),
            nodes: 0,
            deadline: None,
            node_limit: u64::MAX,
            stopped: false,
            stop: None,
            config,
        }
    }

    /// The settings.
    pub fn config(&self) -> &MinimaxConfig {
        &self.config
    }

    /// Clears the transposition table and the ordering heuristics.
    pub fn clear(&mut self) {
        self.tt.fill(TtEntry::default());
        self.history.fill(0);
        self.killers.fill([u16::MAX; 2]);
    }

    /// Replaces the depth, time and node limits (for the next searches).
    pub fn set_limits(&mut self, depth: Option<u32>, time: Option<Duration>, nodes: Option<u64>) {
        self.config.depth = depth;
        self.config.time = time;
        self.config.nodes = nodes;
    }

    /// A flag that ends the search when another thread sets it (checked every 1024 nodes); the
    /// deepest completed iteration is then used, as when the time runs out.
    pub fn set_stop_flag(&mut self, stop: Option<Arc<AtomicBool>>) {
        self.stop = stop;
    }

    /// Searches the game's current position within the configured limits.
    pub fn search(&mut self, game: &Game) -> SearchResult {
        self.search_reporting(game, None::<fn(&SearchResult, &[Action])>)
    }

    /// As [`Minimax::search`], calling `on_iteration` after each completed iteration with the
    /// result so far and its principal variation (for progress lines).
    pub fn search_reporting(
        &mut self,
        game: &Game,
        mut on_iteration: Option<impl FnMut(&SearchResult, &[Action])>,
    ) -> SearchResult {
        let start = Instant::now();
        self.deadline = self.config.time.map(|t| start + t);
        self.node_limit = self.config.nodes.unwrap_or(u64::MAX);
        self.nodes = 0;
        self.stopped = false;
        for h in &mut self.history {
            *h /= 8;
        }
        let mut game = game.clone();
        let max_depth = self.config.depth.unwrap_or(MAX_DEPTH).clamp(1, MAX_DEPTH);
        let mut result = SearchResult { best: None, score: 0, depth: 0, nodes: 0, ties: 0 };
        if game.outcome().is_terminal() {
            return result;
        }
        if let Some(tb) = &self.config.tablebase
            && let Some(p) = tb.probe(game.position())
        {
            // Inside the tables: play a move that keeps the value, no search needed.
            let rng = &mut self.rng;
            if let Some(best) = tb.choose(game.position(), None, |n| rng.below(n)) {
                return SearchResult {
                    best: Some(best),
                    score: tablebase_score(p, 0),
                    depth: 0,
                    nodes: 0,
                    ties: 1,
                };
            }
        }
        for depth in 1..=max_depth {
            let Some((best, score, ties)) = self.search_root(&mut game, depth as i32) else { break };
            result = SearchResult { best: Some(best), score, depth, nodes: self.nodes, ties };
            if let Some(report) = on_iteration.as_mut() {
                let line = self.principal_variation(&game, best, 32);
                report(&result, &line);
            }
            if score.abs() > WIN_BOUND {
                break; // A forced result is known; deeper iterations cannot change it.
            }
        }
        if result.best.is_none() {
            // Stopped inside the first iteration: fall back to the first legal action.
            result.best = game.legal_actions().nth(0);
        }
        // With tables for the whole placement phase, the search's choice is played only if it
        // keeps the exact value (else a move that does).
        if let Some(tb) = &self.config.tablebase
            && let Some(kept) = tb.keep_in_placement(game.position(), result.best, &mut self.rng)
        {
            result.best = Some(kept);
        }
        result.nodes = self.nodes;
        result
    }

    /// One iteration at the root. Returns `None` if the limit stopped it before it finished.
    /// Every root action is searched with the window opened one below the best score, so an
    /// action scoring the same as the best is recognised as a tie (not just bounded).
    fn search_root(&mut self, game: &mut Game, depth: i32) -> Option<(Action, i32, u32)> {
        let side = game.current_player();
        let mut list = MoveList::new();
        let tt_move = self.tt_probe_move(game.position());
        self.generate(game, tt_move, 0, &mut list);
        let mut best_score = -INF;
        let mut ties: Vec<Action> = Vec::with_capacity(8);
        let mut dependent = false;
        for i in 0..list.len {
            let a = list.pick(i);
            game.apply_unchecked(a);
            self.nodes += 1;
            let child_depth = depth - (game.current_player() != side) as i32;
            let alpha = if best_score == -INF { -INF } else { best_score - 1 };
            let (v, dep) = if game.current_player() == side {
                self.negamax(game, child_depth, 1, alpha, INF)
            } else {
                let (v, d) = self.negamax(game, child_depth, 1, -INF, -alpha);
                (-v, d)
            };
            game.undo();
            if self.stopped {
                return None;
            }
            dependent |= dep;
            if v > best_score {
                best_score = v;
                ties.clear();
                ties.push(a);
            } else if v == best_score {
                ties.push(a);
            }
        }
        let pick = ties[self.rng.below(ties.len() as u32) as usize];
        if !dependent {
            self.tt_store(game.position(), depth, 0, best_score, EXACT, pick);
        }
        Some((pick, best_score, ties.len() as u32))
    }

    /// Negamax with alpha-beta. Returns the score for the player to move and whether it depends
    /// on the path (a draw by repetition, the N-move rule or the turn cap was involved), in which
    /// case it is kept out of the transposition table.
    fn negamax(&mut self, game: &mut Game, depth: i32, ply: usize, mut alpha: i32, beta: i32) -> (i32, bool) {
        if self.nodes & 1023 == 0 && self.out_of_budget() {
            self.stopped = true;
            return (0, true);
        }
        let pos = *game.position();
        let side = pos.current_player();
        match game.outcome() {
            Outcome::Ongoing => {}
            Outcome::Win { winner, .. } => {
                let s = WIN - ply as i32;
                return (if winner == side { s } else { -s }, false);
            }
            Outcome::Draw(_) => return (0, true),
        }
        if let Some(p) = self.config.tablebase.as_ref().and_then(|tb| tb.probe(&pos)) {
            // Exact. A decided value depends on the N-move counter, which the table key leaves
            // out, unless it is decided at once.
            let dependent = p.wdl != Wdl::Draw && p.plies > 1 && game.rules().n_move_rule.is_some();
            return (tablebase_score(p, ply), dependent);
        }
        if depth <= 0 || ply >= MAX_PLY {
            return (self.config.weights.evaluate(&pos, game.rules()), false);
        }
        let alpha_orig = alpha;
        let mut tt_move = None;
        let idx = (pos.hash() as usize) & self.tt_mask;
        let e = self.tt[idx];
        if e.key == pos.hash() && e.bound != 0 {
            tt_move = Some(Action(e.best));
            // The key leaves out the draw counters, so a stored score is only trusted when no
            // counter-based draw can happen within the remaining depth (each turn adds at most
            // one quiet ply and one turn).
            if e.depth as i32 >= depth && !counters_near_limit(&pos, game.rules(), depth) {
                let s = score_from_tt(e.score, ply);
                let cut = match e.bound {
                    EXACT => true,
                    LOWER => s >= beta,
                    _ => s <= alpha,
                };
                if cut {
                    return (s, false);
                }
            }
        }
        let mut list = MoveList::new();
        self.generate(game, tt_move, ply, &mut list);
        let mut best = -INF;
        let mut best_move = Action(u16::MAX);
        let mut dependent = false;
        for i in 0..list.len {
            let a = list.pick(i);
            game.apply_unchecked(a);
            self.nodes += 1;
            let same = game.current_player() == side;
            let child_depth = depth - (!same) as i32;
            let (v, dep) = if same {
                self.negamax(game, child_depth, ply + 1, alpha, beta)
            } else {
                let (v, d) = self.negamax(game, child_depth, ply + 1, -beta, -alpha);
                (-v, d)
            };
            game.undo();
            if self.stopped {
                return (0, true);
            }
            dependent |= dep;
            if v > best {
                best = v;
                best_move = a;
                if v > alpha {
                    alpha = v;
                    if alpha >= beta {
                        self.record_cutoff(a, ply, depth);
                        break;
                    }
                }
            }
        }
        if !dependent {
            let bound = if best <= alpha_orig {
                UPPER
            } else if best >= beta {
                LOWER
            } else {
                EXACT
            };
            self.tt_store(&pos, depth, ply, best, bound, best_move);
        }
        (best, dependent)
    }

    fn out_of_budget(&self) -> bool {
        self.nodes >= self.node_limit
            || self.deadline.is_some_and(|d| Instant::now() >= d)
            || self.stop.as_ref().is_some_and(|s| s.load(Ordering::Relaxed))
    }

    /// The expected line from the game's position: the table's best moves, followed while they
    /// are legal and the positions do not repeat, at most `max` actions (the first is `first`).
    pub fn principal_variation(&self, game: &Game, first: Action, max: usize) -> Vec<Action> {
        let mut game = game.clone();
        let mut line = Vec::new();
        let mut next = Some(first);
        while let Some(a) = next {
            if line.len() >= max || game.apply(a).is_err() {
                break;
            }
            line.push(a);
            if game.outcome().is_terminal() || game.repetitions() > 1 {
                break;
            }
            next = self.tt_probe_move(game.position());
        }
        line
    }

    fn record_cutoff(&mut self, a: Action, ply: usize, depth: i32) {
        self.history[a.index()] += depth * depth;
        let k = &mut self.killers[ply];
        if k[0] != a.0 {
            k[1] = k[0];
            k[0] = a.0;
        }
    }

    fn tt_probe_move(&self, pos: &Position) -> Option<Action> {
        let e = self.tt[(pos.hash() as usize) & self.tt_mask];
        (e.key == pos.hash() && e.bound != 0).then_some(Action(e.best))
    }

    fn tt_store(&mut self, pos: &Position, depth: i32, ply: usize, score: i32, bound: u8, best: Action) {
        let idx = (pos.hash() as usize) & self.tt_mask;
        let e = &mut self.tt[idx];
        // Replace unless the slot holds a deeper result for the same position.
        if e.key != pos.hash() || depth >= e.depth as i32 {
            *e = TtEntry {
                key: pos.hash(),
                score: score_to_tt(score, ply),
                best: best.0,
                depth: depth.clamp(0, 255) as u8,
                bound,
            };
        }
    }

    /// Fills `list` with the legal actions and their ordering scores: the TT move, then moves
    /// that close a mill, placements and slides that block an opposing mill, killers, and the
    /// history heuristic. Removals prefer pieces that stand in opposing two-piece lines.
    fn generate(&self, game: &Game, tt_move: Option<Action>, ply: usize, list: &mut MoveList) {
        with_spec!(game.rules().variant, S => self.generate_g::<S>(game, tt_move, ply, list))
    }

    /// [`Minimax::generate`] on the mills of `S`'s board.
    #[inline(always)]
    fn generate_g<S: Spec>(&self, game: &Game, tt_move: Option<Action>, ply: usize, list: &mut MoveList) {
        let pos = game.position();
        let me = pos.current_player();
        let own = pos.pieces(me);
        let opp = pos.pieces(me.opponent());
        let empty = pos.empty();
        let killers = self.killers[ply.min(MAX_PLY)];
        for a in game.legal_actions().iter() {
            let mut score = self.history[a.index()].min(1 << 20);
            if Some(a) == tt_move {
                score += 1 << 30;
            } else if a.0 == killers[0] || a.0 == killers[1] {
                score += 1 << 21;
            }
            if pos.is_removal_pending() {
                let p = Point::from_index_unchecked(a.index());
                score += twos_through::<S>(opp, empty, p) * (1 << 22);
            } else {
                let (from, to) = match a.as_movement_on(S::BOARD) {
                    Some((f, t)) => (f.bit(), t),
                    None => (BitBoard::EMPTY, Point::from_index_unchecked(a.index())),
                };
                let after = (own - from) | to.bit();
                if S::closes_mill(after, to.index()) {
                    score += 1 << 25;
                }
                // Occupying a point where the opponent has two in a line blocks a mill.
                if threats_through::<S>(opp, to) > 0 {
                    score += 1 << 24;
                }
            }
            list.push(a, score);
        }
    }

    /// Nodes visited by the last search.
    pub fn nodes(&self) -> u64 {
        self.nodes
    }
}

/// Number of mills through the empty point `p` whose other two points hold `pieces`: the mill
/// threats that occupying `p` blocks (or, for the mover's own pieces, completes).
#[inline]
fn threats_through<S: Spec>(pieces: BitBoard, p: Point) -> i32 {
    S::mills_through(p.index()).iter().map(|&m| pieces.contains(m - p.bit()) as i32).sum()
}

/// Number of lines through the piece on `p` that hold two of `pieces` and one empty point: the
/// mill threats that removing the piece on `p` destroys.
#[inline]
fn twos_through<S: Spec>(pieces: BitBoard, empty: BitBoard, p: Point) -> i32 {
    S::mills_through(p.index())
        .iter()
        .map(|&m| ((pieces & m).count() == 2 && (empty & m).count() == 1) as i32)
        .sum()
}

/// Whether the N-move rule or the turn cap could end the game within `depth` more turns, in
/// which case the node's value depends on its counters, which the table key leaves out.
fn counters_near_limit(pos: &Position, rules: &crate::rules::Rules, depth: i32) -> bool {
    let depth = depth.max(0) as u32;
    rules.n_move_rule.is_some_and(|n| pos.quiet_plies() as u32 + depth >= n)
        || rules.turn_cap.is_some_and(|cap| pos.turns() as u32 + depth >= cap)
}

/// Win scores are stored relative to the node (plies to the win from there), and converted
/// back relative to the root on probing, so that a transposition at another ply is exact.
fn score_to_tt(score: i32, ply: usize) -> i32 {
    if score > WIN_BOUND {
        score + ply as i32
    } else if score < -WIN_BOUND {
        score - ply as i32
    } else {
        score
    }
}

fn score_from_tt(score: i32, ply: usize) -> i32 {
    if score > WIN_BOUND {
        score - ply as i32
    } else if score < -WIN_BOUND {
        score + ply as i32
    } else {
        score
    }
}

impl MoveList {
    fn new() -> MoveList {
        MoveList { actions: [Action(0); NUM_ACTIONS / 4], scores: [0; NUM_ACTIONS / 4], len: 0 }
    }

    #[inline]
    fn push(&mut self, a: Action, score: i32) {
        if self.len < self.actions.len() {
            self.actions[self.len] = a;
            self.scores[self.len] = score;
            self.len += 1;
        }
    }

    /// Selection sort step: moves the best remaining action to position `i` and returns it.
    #[inline]
    fn pick(&mut self, i: usize) -> Action {
        let mut best = i;
        for j in i + 1..self.len {
            if self.scores[j] > self.scores[best] {
                best = j;
            }
        }
        self.actions.swap(i, best);
        self.scores.swap(i, best);
        self.actions[i]
    }
}

impl Agent for Minimax {
    fn name(&self) -> String {
        let tb =
            self.config.tablebase.as_ref().map(|t| format!(",tb={}", t.dir().display())).unwrap_or_default();
        format!("minimax:{}{tb}", self.config.limits_text())
    }

    fn choose(&mut self, game: &Game) -> Option<Action> {
        self.search(game).best
    }

    fn reset(&mut self) {
        self.clear();
    }
}

/// Plain minimax without pruning, tables or ordering, for testing the real search against.
/// Same conventions: depth in turns, exact win scores by distance, path-aware draws.
pub fn reference_minimax(game: &mut Game, depth: i32, ply: usize, weights: &EvalWeights) -> i32 {
    let pos = *game.position();
    let side = pos.current_player();
    match game.outcome() {
        Outcome::Ongoing => {}
        Outcome::Win { winner, .. } => {
            let s = WIN - ply as i32;
            return if winner == side { s } else { -s };
        }
        Outcome::Draw(_) => return 0,
    }
    if depth <= 0 {
        return weights.evaluate(&pos, game.rules());
    }
    let mut best = -INF;
    for a in game.legal_actions().iter() {
        game.apply_unchecked(a);
        let same = game.current_player() == side;
        let v = reference_minimax(game, depth - (!same) as i32, ply + 1, weights);
        game.undo();
        best = best.max(if same { v } else { -v });
    }
    best
}
