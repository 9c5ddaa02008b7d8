//! The arena, the lab's one match runner: colour-swapped game pairs from shared random
//! openings, every game recorded in notation with its result, reason and time per move.
//!
//! Two schedules, one set of rules for seeding, forfeits and records:
//!
//! * **Game by game** (the default): each game runs to its end as one rayon task with its own
//!   agents, so a move's time is one agent's latency. `eval match` and the ladder use it.
//! * **In lockstep** ([`MatchConfig::batch_network`]): all games advance together, and a network
//!   agent ([`AgentSpec::Az`]) searches every game it is to move in with one batched search (one
//!   network call per simulation wave for all of them). Its time per move is the batch's time
//!   divided by the games in it. The in-training evaluation ([`crate::judge`]) uses it.

use std::time::Instant;

use morris_env::tablebase::{SharedTablebase, Wdl};
use morris_env::{Action, Agent, Color, Game, Outcome, Rng, Rules};
use morris_train::mcts::{Mcts, MctsConfig, Tree};
use morris_train::net_evaluator::NetEvaluator;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};

use crate::agents::AgentSpec;
use crate::error::{EvalError, Result};

/// Streams of [`Rng::derive`] under the match seed.
mod stream {
    /// The random opening of pair `i`.
    pub const OPENING: u64 = 1;
    /// The White agent of game `i` (= 2 × pair + game).
    pub const WHITE: u64 = 2;
    /// The Black agent of game `i`.
    pub const BLACK: u64 = 3;
    /// Further openings of pair `i` when the first does not have the value asked for.
    pub const OPENING_RETRY: u64 = 4;
}

/// Which random openings a match keeps, by their exact value (see [`OpeningFilter`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpeningValue {
    /// Openings that are drawn with perfect play.
    Draw,
    /// Openings won by one side (in a colour-swapped pair each agent gets the winning side once).
    Decided,
}

impl OpeningValue {
    /// `"draw"` or `"decided"`.
    pub const fn name(self) -> &'static str {
        match self {
            OpeningValue::Draw => "draw",
            OpeningValue::Decided => "decided",
        }
    }

    fn accepts(self, w: Wdl) -> bool {
        (w == Wdl::Draw) == (self == OpeningValue::Draw)
    }
}

/// Keeps only the random openings of a given exact value: a pair whose opening has another
/// value draws further openings (from its own stream, so the first opening of every pair is the
/// one an unfiltered match plays) until one fits.
#[derive(Clone, Debug, PartialEq)]
pub struct OpeningFilter {
    /// The tables that value the openings (complete tables for openings with pieces in hand).
    pub tablebase: SharedTablebase,
    /// The value to keep.
    pub value: OpeningValue,
}

/// Openings a filtered pair may draw before the match gives up.
const MAX_OPENING_TRIES: u64 = 1000;

/// One finished game, as written to the JSONL record (one object per line).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GameRecord {
    /// Spec of the White player.
    pub white: String,
    /// Spec of the Black player.
    pub black: String,
    /// Index of the pair in its match; both games of a pair share the opening.
    pub pair: u32,
    /// Seed of the random opening (for an opening from a book, the seed it was drawn from).
    pub opening_seed: u64,
    /// Number of opening plies (played before the agents took over).
    pub opening_plies: u32,
    /// The opening's game-theoretic result (`1-0`, `1/2-1/2` or `0-1`: what perfect play from
    /// it gives), when the match filtered its openings by value or read them from a book.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub opening_value: Option<String>,
    /// Rules preset name, or `custom`.
    pub rules: String,
    /// All moves in notation, opening included.
    pub moves: Vec<String>,
    /// `1-0`, `0-1` or `1/2-1/2`.
    pub result: String,
    /// Why the game ended, e.g. `White wins (opponent reduced to 2 pieces)`.
    pub reason: String,
    /// Plies played by the agents (after the opening).
    pub plies: u32,
    /// Mean thinking time per move of White and of Black, in milliseconds.
    pub ms_per_move: [f64; 2],
}

impl GameRecord {
    /// White's score: 1, 0.5 or 0; `None` for a malformed result.
    pub fn white_score(&self) -> Option<f64> {
        match self.result.as_str() {
            "1-0" => Some(1.0),
            "0-1" => Some(0.0),
            "1/2-1/2" => Some(0.5),
            _ => None,
        }
    }
}

/// Settings of a match.
#[derive(Clone, Debug, PartialEq)]
pub struct MatchConfig {
    /// Number of colour-swapped pairs.
    pub pairs: u32,
    /// Random plies before the agents take over (the same for both games of a pair).
    pub opening_plies: u32,
    /// Seed of everything random: pair `i` uses openings and agent seeds derived from it.
    pub seed: u64,
    /// Rules of the games.
    pub rules: Rules,
    /// Play all games in lockstep, with network agents searching all their games in one batch
    /// (throughput) instead of one game at a time (latency).
    pub batch_network: bool,
    /// Where the openings come from.
    pub openings: Openings,
}

/// Where a match's openings come from.
#[derive(Clone, Debug, Default, PartialEq)]
pub enum Openings {
    /// A random opening of [`MatchConfig::opening_plies`] plies per pair, from the match seed.
    #[default]
    Random,
    /// Random openings kept only when they have a given exact value (valued by tables).
    Valued(OpeningFilter),
    /// Given openings (an opening book, [`crate::book`]): pair `i` plays the `i`-th.
    Book(Vec<Opening>),
}

/// The opening of one pair, as both its games start.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Opening {
    /// Seed of the random opening (for a book's openings, the one it was drawn from).
    pub seed: u64,
    /// Its moves from the start position.
    pub moves: Vec<Action>,
    /// Its exact value for the player to move after it, when known.
    pub value: Option<Wdl>,
}

impl Opening {
    /// The random opening of `plies` plies drawn from `seed` (as [`Game::random_opening`]).
    fn random(rules: Rules, seed: u64, plies: u32) -> (Opening, Game) {
        let mut game = Game::new(rules);
        game.random_opening(&mut Rng::seed_from_u64(seed), plies);
        (Opening { seed, moves: game.actions().to_vec(), value: None }, game)
    }
}

/// A value for the player to move as a result for White (`1-0`, `1/2-1/2`, `0-1`).
pub fn result_for_white(value: Wdl, mover: Color) -> &'static str {
    let white = if mover == Color::White { value } else { value.flip() };
    match white {
        Wdl::Win => "1-0",
        Wdl::Draw => "1/2-1/2",
        Wdl::Loss => "0-1",
    }
}

/// The name of a rules value: its preset, or `custom`.
pub(crate) fn rules_name(rules: &Rules) -> String {
    Rules::PRESETS
        .iter()
        .find(|&&n| Rules::preset(n).as_ref() == Some(rules))
        .map_or_else(|| "custom".to_string(), |n| n.to_string())
}

/// One game of a match in progress: game `g` (0 or 1) of pair `pair`; in game 0 agent A is White.
struct Table {
    pair: u32,
    g: u32,
    opening_seed: u64,
    opening_plies: u32,
    opening_value: Option<Wdl>,
    /// Who is to move after the opening (whom `opening_value` speaks for).
    opening_mover: Color,
    game: Game,
    seconds: [f64; 2],
    moves: [u32; 2],
    /// The player to move returned no move or an illegal one, and forfeits, for this reason.
    forfeit: Option<String>,
}

impl Table {
    /// Game `index` of the match, from its pair's `opening` (whose moves are legal: checked
    /// when the openings were drawn or read).
    fn new(config: &MatchConfig, index: u32, opening: &Opening) -> Table {
        let (pair, g) = (index / 2, index % 2);
        let mut game = Game::new(config.rules);
        game.reserve(opening.moves.len());
        for &a in &opening.moves {
            game.apply_unchecked(a);
        }
        let opening_mover = game.current_player();
        Table {
            pair,
            g,
            opening_seed: opening.seed,
            opening_plies: opening.moves.len() as u32,
            opening_value: opening.value,
            opening_mover,
            game,
            seconds: [0.0; 2],
            moves: [0; 2],
            forfeit: None,
        }
    }

    /// The index of this game in the match.
    fn index(&self) -> u64 {
        2 * self.pair as u64 + self.g as u64
    }

    /// Whether agent A plays `color` here.
    fn a_plays(&self, color: Color) -> bool {
        (color == Color::White) == (self.g == 0)
    }

    fn live(&self) -> bool {
        self.forfeit.is_none() && !self.game.outcome().is_terminal()
    }

    /// Whether agent A (`true`) or B is to move in a live game.
    fn a_to_move(&self) -> bool {
        self.a_plays(self.game.current_player())
    }

    /// Plays the mover's `choice`, which took `secs`; no move or an illegal one forfeits, for
    /// `reason` if the agent gave one.
    fn play(&mut self, choice: Option<Action>, secs: f64, reason: Option<String>) {
        let side = self.game.current_player().index();
        self.seconds[side] += secs;
        self.moves[side] += 1;
        let played = match choice {
            Some(a) => self.game.apply(a).map_err(|e| format!("chose an illegal action: {e}")),
            None => Err(reason.unwrap_or_else(|| "made no legal move".into())),
        };
        if let Err(why) = played {
            self.forfeit = Some(why);
        }
    }

    /// Asks `agent` for the mover's move and plays it.
    fn ask(&mut self, agent: &mut dyn Agent) {
        let t = Instant::now();
        let choice = agent.choose(&self.game);
        let secs = t.elapsed().as_secs_f64();
        let reason = if choice.is_none() { agent.forfeit_reason() } else { None };
        self.play(choice, secs, reason);
    }

    /// The agents of this game, (A's, B's), seeded by colour and game index.
    fn agents(&self, a: &AgentSpec, b: &AgentSpec, seed: u64) -> Result<(Box<dyn Agent>, Box<dyn Agent>)> {
        let white = Rng::derive(seed, stream::WHITE, self.index());
        let black = Rng::derive(seed, stream::BLACK, self.index());
        let (seed_a, seed_b) = if self.g == 0 { (white, black) } else { (black, white) };
        Ok((a.build(seed_a)?, b.build(seed_b)?))
    }

    fn record(&self, a: &AgentSpec, b: &AgentSpec, config: &MatchConfig) -> GameRecord {
        let (ws, bs) = if self.g == 0 { (a, b) } else { (b, a) };
        let (result, reason) = result_and_reason(&self.game, self.forfeit.as_deref());
        let ms =
            |c: usize| if self.moves[c] == 0 { 0.0 } else { 1000.0 * self.seconds[c] / self.moves[c] as f64 };
        GameRecord {
            white: ws.name(),
            black: bs.name(),
            pair: self.pair,
            opening_seed: self.opening_seed,
            opening_plies: self.opening_plies,
            // The value is the player to move's after the opening: as a result for White.
            opening_value: self.opening_value.map(|w| result_for_white(w, self.opening_mover).to_string()),
            rules: rules_name(&config.rules),
            moves: self.game.record().split_whitespace().map(str::to_string).collect(),
            result,
            reason,
            plies: self.moves[0] + self.moves[1],
            ms_per_move: [ms(0), ms(1)],
        }
    }
}

/// The result and its reason; a game that stopped while ongoing was forfeited by the player to
/// move (for `forfeit`'s reason).
fn result_and_reason(game: &Game, forfeit: Option<&str>) -> (String, String) {
    match game.outcome() {
        Outcome::Win { winner: Color::White, .. } => ("1-0".into(), game.outcome().to_string()),
        Outcome::Win { winner: Color::Black, .. } => ("0-1".into(), game.outcome().to_string()),
        Outcome::Draw(_) => ("1/2-1/2".into(), game.outcome().to_string()),
        Outcome::Ongoing => {
            let loser = game.current_player();
            let result = if loser == Color::White { "0-1" } else { "1-0" };
            let why = forfeit.unwrap_or("made no legal move");
            (result.into(), format!("{} wins ({loser} forfeits: {why})", loser.opponent()))
        }
    }
}

/// Plays a match of `config.pairs` colour-swapped pairs between `a` and `b` on rayon's pool.
/// `on_game` is called as each game finishes (from worker threads), e.g. to write records and
/// tick a bar. Returns the games ordered by pair and game.
///
/// # Errors
/// [`EvalError::Rules`] if an agent cannot play under the match's
/// rules ([`AgentSpec::check_rules`]); [`EvalError::Usage`] if the openings cannot be had (see
/// [`match_openings`]); only in lockstep, [`EvalError::Internal`] if a network search finds no
/// move in a live game.
pub fn play_match<F>(
    a: &AgentSpec,
    b: &AgentSpec,
    config: &MatchConfig,
    on_game: F,
) -> Result<Vec<GameRecord>>
where
    F: Fn(&GameRecord) + Sync,
{
    a.check_rules(&config.rules)?;
    b.check_rules(&config.rules)?;
    let openings = match_openings(config)?;
    if config.batch_network {
        return play_lockstep(a, b, config, &openings, on_game);
    }
    (0..config.pairs * 2)
        .into_par_iter()
        .with_max_len(1)
        .map(|i| {
            let mut table = Table::new(config, i, &openings[(i / 2) as usize]);
            let (mut agent_a, mut agent_b) = table.agents(a, b, config.seed)?;
            while table.live() {
                let agent = if table.a_to_move() { agent_a.as_mut() } else { agent_b.as_mut() };
                table.ask(agent);
            }
            let rec = table.record(a, b, config);
            on_game(&rec);
            Ok(rec)
        })
        .collect()
}

/// The opening of each pair, with its value when the match filters openings (pairs in
/// parallel: valuing an opening with pieces in hand is a placement search) or reads a book.
///
/// # Errors
/// [`EvalError::Usage`] if the tables cannot value an opening (a missing sector, other rules),
/// no opening of the value asked for turns up in [`MAX_OPENING_TRIES`] draws, or a book holds
/// fewer openings than the match has pairs.
pub fn match_openings(config: &MatchConfig) -> Result<Vec<Opening>> {
    match &config.openings {
        Openings::Random => Ok((0..config.pairs)
            .map(|p| {
                let seed = Rng::derive(config.seed, stream::OPENING, p as u64);
                Opening::random(config.rules, seed, config.opening_plies).0
            })
            .collect()),
        Openings::Valued(filter) => {
            filter.tablebase.check_rules(&config.rules).map_err(|e| EvalError::Usage(e.to_string()))?;
            filtered_openings(config, filter.value, |game| filter.tablebase.value(game.position()))
        }
        Openings::Book(book) => {
            let book = check_book(book, &config.rules, config.pairs)?;
            Ok(book.to_vec())
        }
    }
}

/// The first `pairs` openings of `book`, after checking that there are that many and that each
/// one's moves are legal under `rules` and leave the game live (games replay them unchecked).
///
/// # Errors
/// [`EvalError::Usage`] for a book shorter than `pairs`, naming both, or an opening with an
/// illegal move or after which the game is over, naming the opening and its moves.
pub fn check_book<'a>(book: &'a [Opening], rules: &Rules, pairs: u32) -> Result<&'a [Opening]> {
    if book.len() < pairs as usize {
        return Err(EvalError::Usage(format!(
            "the opening book holds {} openings, fewer than the {pairs} pairs asked for",
            book.len()
        )));
    }
    let book = &book[..pairs as usize];
    for (pair, opening) in book.iter().enumerate() {
        let mut game = Game::new(*rules);
        for &a in &opening.moves {
            game.apply(a).map_err(|e| {
                EvalError::Usage(format!("opening {} of the book: {e} after {}", pair + 1, game.record()))
            })?;
        }
        if game.outcome().is_terminal() {
            return Err(EvalError::Usage(format!(
                "opening {} of the book: the game is over after {}",
                pair + 1,
                game.record()
            )));
        }
    }
    Ok(book)
}

/// The first opening of each pair whose value (by `value`, for the player to move after it)
/// `keep` accepts: the pair's unfiltered opening, then further ones from its retry stream.
fn filtered_openings<V>(config: &MatchConfig, keep: OpeningValue, value: V) -> Result<Vec<Opening>>
where
    V: Fn(&Game) -> std::result::Result<Wdl, morris_env::tablebase::TablebaseError> + Sync,
{
    let first = |pair: u32| Rng::derive(config.seed, stream::OPENING, pair as u64);
    (0..config.pairs)
        .into_par_iter()
        .with_max_len(1)
        .map(|pair| {
            for k in 0..MAX_OPENING_TRIES {
                let seed = if k == 0 {
                    first(pair)
                } else {
                    Rng::derive(config.seed, stream::OPENING_RETRY, (pair as u64) << 16 | k)
                };
                let (opening, game) = Opening::random(config.rules, seed, config.opening_plies);
                if game.outcome().is_terminal() {
                    continue;
                }
                let value = value(&game).map_err(|e| {
                    EvalError::Usage(format!("cannot value the opening {}: {e}", game.record()))
                })?;
                if keep.accepts(value) {
                    return Ok(Opening { value: Some(value), ..opening });
                }
            }
            Err(EvalError::Usage(format!(
                "pair {}: no {} opening of {} plies in {MAX_OPENING_TRIES} random openings",
                pair + 1,
                keep.name(),
                config.opening_plies
            )))
        })
        .collect()
}

/// One side of a lockstep match.
enum Seat {
    /// One agent per game, asked in parallel.
    PerGame(Vec<Box<dyn Agent>>),
    /// A network searching all its games in one batch.
    Batched(Box<BatchedNet>),
}

/// A network agent playing many games with one batched search per move.
struct BatchedNet {
    mcts: Mcts,
    evaluator: NetEvaluator,
    /// The search tree of each game (created at the game's first search).
    trees: Vec<Option<Tree>>,
    /// Seeds of the trees.
    seeds: Vec<u64>,
    /// Scratch: the trees searched in this wave, and the games they belong to.
    active: Vec<Tree>,
    owners: Vec<usize>,
}

impl BatchedNet {
    /// A batched seat for a network spec searching by simulations on one thread; `None` for
    /// anything else (a time budget or search threads are about the latency of one game, so
    /// those agents play game by game).
    fn new(spec: &AgentSpec, tables: &[Table], seed: u64, is_a: bool) -> Option<BatchedNet> {
        let AgentSpec::Az { model, search, budget } = spec else { return None };
        if budget.time.is_some() || !budget.is_sequential() {
            return None;
        }
        let seeds = tables
            .iter()
            .map(|t| {
                let color = if t.a_plays(Color::White) == is_a { stream::WHITE } else { stream::BLACK };
                Rng::derive(seed, color, t.index())
            })
            .collect();
        Some(BatchedNet {
            mcts: Mcts::new(MctsConfig { root_noise: false, ..search.clone() }),
            evaluator: NetEvaluator::new(model.network().clone(), model.device().clone()),
            trees: (0..tables.len()).map(|_| None).collect(),
            seeds,
            active: Vec::new(),
            owners: Vec::new(),
        })
    }

    /// One move in every table in `movers`: one search over all of them.
    fn play(&mut self, tables: &mut [Table], movers: &[usize]) -> Result<()> {
        let reuse = self.mcts.config.reuse_tree;
        self.owners.clear();
        self.owners.extend_from_slice(movers);
        for &i in movers {
            let tree = match self.trees[i].take() {
                Some(mut t) => {
                    t.sync(&tables[i].game, reuse);
                    t
                }
                None => Tree::new(&tables[i].game, self.seeds[i]),
            };
            self.active.push(tree);
        }
        let t = Instant::now();
        self.mcts.search(&mut self.active, &mut self.evaluator);
        let secs = t.elapsed().as_secs_f64() / movers.len().max(1) as f64;
        let config = self.mcts.config.clone();
        for (mut tree, &i) in self.active.drain(..).zip(&self.owners) {
            let choice = tree.choose_action(&config, 0.0);
            if choice.is_none() {
                return Err(EvalError::Internal("the network's search found no move in a live game".into()));
            }
            tables[i].play(choice, secs, None);
            self.trees[i] = Some(tree);
        }
        Ok(())
    }
}

impl Seat {
    fn new(spec: &AgentSpec, agents: Vec<Box<dyn Agent>>, tables: &[Table], seed: u64, is_a: bool) -> Seat {
        match BatchedNet::new(spec, tables, seed, is_a) {
            Some(net) => Seat::Batched(Box::new(net)),
            None => Seat::PerGame(agents),
        }
    }

    /// One move in every table in `movers` (whose mover is this seat).
    fn play(&mut self, tables: &mut [Table], movers: &[usize]) -> Result<()> {
        match self {
            Seat::Batched(net) => net.play(tables, movers),
            Seat::PerGame(agents) => {
                let moving: Vec<bool> = (0..tables.len()).map(|i| movers.binary_search(&i).is_ok()).collect();
                tables.par_iter_mut().zip(agents.par_iter_mut()).zip(moving.par_iter()).for_each(
                    |((table, agent), &moves)| {
                        if moves {
                            table.ask(agent.as_mut());
                        }
                    },
                );
                Ok(())
            }
        }
    }
}

/// The lockstep schedule: each round, every live game where A is to move gets A's move (all in
/// one batch for a network), then likewise for B.
fn play_lockstep<F>(
    a: &AgentSpec,
    b: &AgentSpec,
    config: &MatchConfig,
    openings: &[Opening],
    on_game: F,
) -> Result<Vec<GameRecord>>
where
    F: Fn(&GameRecord) + Sync,
{
    let mut tables: Vec<Table> =
        (0..config.pairs * 2).map(|i| Table::new(config, i, &openings[(i / 2) as usize])).collect();
    let (agents_a, agents_b): (Vec<_>, Vec<_>) =
        tables.iter().map(|t| t.agents(a, b, config.seed)).collect::<Result<Vec<_>>>()?.into_iter().unzip();
    let mut seats = [
        Seat::new(a, agents_a, &tables, config.seed, true),
        Seat::new(b, agents_b, &tables, config.seed, false),
    ];
    let mut reported = vec![false; tables.len()];
    let mut movers = Vec::with_capacity(tables.len());
    loop {
        let mut moved = false;
        for (side, seat) in seats.iter_mut().enumerate() {
            movers.clear();
            movers.extend(
                (0..tables.len()).filter(|&i| tables[i].live() && tables[i].a_to_move() == (side == 0)),
            );
            if !movers.is_empty() {
                seat.play(&mut tables, &movers)?;
                moved = true;
            }
        }
        for (i, table) in tables.iter().enumerate() {
            if !reported[i] && !table.live() {
                reported[i] = true;
                on_game(&table.record(a, b, config));
            }
        }
        if !moved {
            break;
        }
    }
    Ok(tables.iter().map(|t| t.record(a, b, config)).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(pairs: u32) -> MatchConfig {
        MatchConfig {
            pairs,
            opening_plies: 4,
            seed: 42,
            rules: Rules::standard(),
            batch_network: false,
            openings: Openings::Random,
        }
    }

    #[test]
    fn pairs_share_openings_and_swap_colours() {
        let a = AgentSpec::parse("random").unwrap();
        let b = AgentSpec::parse("minimax:depth=1").unwrap();
        let games = play_match(&a, &b, &config(3), |_| {}).unwrap();
        assert_eq!(games.len(), 6);
        for pair in games.chunks(2) {
            assert_eq!(pair[0].opening_seed, pair[1].opening_seed);
            assert_eq!(pair[0].moves[..4], pair[1].moves[..4]);
            assert_eq!((pair[0].white.as_str(), pair[1].white.as_str()), ("random", "minimax:depth=1"));
        }
    }

    #[test]
    fn seeds_reproduce_the_same_games() {
        let a = AgentSpec::parse("minimax:depth=2").unwrap();
        let b = AgentSpec::parse("random").unwrap();
        let strip = |g: Vec<GameRecord>| g.into_iter().map(|r| (r.moves, r.result)).collect::<Vec<_>>();
        let one = strip(play_match(&a, &b, &config(2), |_| {}).unwrap());
        let two = strip(play_match(&a, &b, &config(2), |_| {}).unwrap());
        assert_eq!(one, two);
        let other = strip(play_match(&a, &b, &MatchConfig { seed: 43, ..config(2) }, |_| {}).unwrap());
        assert_ne!(one, other);
    }

    #[test]
    fn lockstep_plays_the_same_games_as_game_by_game() {
        // Agents without a network play identically under both schedules: same seeds, same moves.
        let a = AgentSpec::parse("minimax:depth=2").unwrap();
        let b = AgentSpec::parse("random").unwrap();
        let strip =
            |g: Vec<GameRecord>| g.into_iter().map(|r| (r.moves, r.result, r.reason)).collect::<Vec<_>>();
        let by_game = strip(play_match(&a, &b, &config(3), |_| {}).unwrap());
        let lockstep = MatchConfig { batch_network: true, ..config(3) };
        let calls = std::sync::atomic::AtomicUsize::new(0);
        let games = play_match(&a, &b, &lockstep, |_| {
            calls.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        })
        .unwrap();
        assert_eq!(calls.into_inner(), 6, "every game reported once");
        assert_eq!(strip(games), by_game);
    }

    /// A stand-in value for the filter tests: the parity of the opening's first point.
    fn parity(game: &Game) -> std::result::Result<Wdl, morris_env::tablebase::TablebaseError> {
        let first = game.record().split_whitespace().next().unwrap_or("").to_string();
        let odd =
            morris_env::Point::from_name(&first[..2.min(first.len())]).is_some_and(|p| p.index() % 2 == 1);
        Ok(if odd { Wdl::Win } else { Wdl::Draw })
    }

    #[test]
    fn filtered_openings_keep_the_first_opening_that_fits_and_record_its_value() {
        let c = config(12);
        let plain = match_openings(&c).unwrap();
        for keep in [OpeningValue::Draw, OpeningValue::Decided] {
            let kept = filtered_openings(&c, keep, parity).unwrap();
            let mut retried = 0;
            for (pair, (opening, first)) in kept.iter().zip(&plain).enumerate() {
                let (drawn, game) = Opening::random(c.rules, opening.seed, c.opening_plies);
                assert_eq!(drawn.moves, opening.moves, "pair {pair}");
                let v = parity(&game).unwrap();
                assert_eq!(opening.value, Some(v), "pair {pair}");
                assert!(keep.accepts(v), "pair {pair}: {keep:?} kept {v:?}");
                // A pair whose unfiltered opening fits plays it.
                let (_, unfiltered) = Opening::random(c.rules, first.seed, c.opening_plies);
                if keep.accepts(parity(&unfiltered).unwrap()) {
                    assert_eq!(opening.seed, first.seed, "pair {pair}");
                } else {
                    retried += 1;
                }
            }
            assert!(retried > 0, "{keep:?}: no pair needed another opening");
            assert_eq!(kept, filtered_openings(&c, keep, parity).unwrap(), "seeded");
        }
        // The record gives the opening's value as a result for White.
        let a = AgentSpec::parse("random").unwrap();
        let kept = filtered_openings(&c, OpeningValue::Decided, parity).unwrap();
        for i in 0..4 {
            let table = Table::new(&c, i, &kept[(i / 2) as usize]);
            let record = table.record(&a, &a, &c);
            // After 4 plies White is to move, and the stand-in gives it the win.
            assert_eq!(record.opening_value.as_deref(), Some("1-0"));
        }
        // A book of those openings plays the same games as the filtered match (same seed).
        let b = AgentSpec::parse("minimax:depth=1").unwrap();
        let strip = |g: Vec<GameRecord>| {
            g.into_iter().map(|r| (r.opening_seed, r.opening_value, r.moves, r.result)).collect::<Vec<_>>()
        };
        let text = crate::book::to_jsonl(&kept, &c.rules).unwrap();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("book.jsonl");
        std::fs::write(&path, text).unwrap();
        let book = crate::book::load(&path, &c.rules).unwrap();
        assert_eq!(book, kept);
        let from_book = MatchConfig { openings: Openings::Book(book), ..config(3) };
        let games = strip(play_match(&a, &b, &from_book, |_| {}).unwrap());
        assert_eq!(games.len(), 6);
        for (i, g) in games.iter().enumerate() {
            let opening = &kept[i / 2];
            assert_eq!((g.0, g.1.as_deref()), (opening.seed, Some("1-0")), "game {i}");
        }
        // A book shorter than the match: a named error before any game.
        let e = play_match(&a, &b, &MatchConfig { pairs: 13, ..from_book }, |_| {}).unwrap_err();
        assert!(e.to_string().contains("holds 12 openings, fewer than the 13 pairs"), "{e}");
        // No opening of the value, or one that cannot be valued: named errors.
        let never = |_: &Game| Ok(Wdl::Loss);
        let e = filtered_openings(&config(1), OpeningValue::Draw, never).unwrap_err();
        assert!(e.to_string().contains("no draw opening of 4 plies in 1000"), "{e}");
        let missing = |_: &Game| Err(morris_env::tablebase::TablebaseError::NotCovered("sector 9v9".into()));
        let e = filtered_openings(&config(1), OpeningValue::Draw, missing).unwrap_err();
        assert!(
            matches!(e, EvalError::Usage(_)) && e.to_string().contains("cannot value the opening"),
            "{e}"
        );
    }

    #[test]
    fn a_filtered_match_on_tables_that_cannot_value_its_openings_names_the_missing_sector() {
        let dir = tempfile::tempdir().unwrap();
        morris_env::tablebase::build(dir.path(), 3, &Rules::standard(), &|_| {}).unwrap();
        let tablebase = SharedTablebase::open(dir.path()).unwrap();
        let c = MatchConfig {
            openings: Openings::Valued(OpeningFilter { tablebase, value: OpeningValue::Draw }),
            ..config(1)
        };
        let a = AgentSpec::parse("random").unwrap();
        let e = play_match(&a, &a, &c, |_| {}).unwrap_err();
        assert!(
            e.to_string().contains("cannot value the opening") && e.to_string().contains("--max-pieces"),
            "{e}"
        );
        // Tables of other rules.
        let other = MatchConfig { rules: Rules::openspiel(), ..c };
        assert!(play_match(&a, &a, &other, |_| {}).is_err());
    }
}
