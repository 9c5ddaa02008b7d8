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
}

/// One finished game, as written to the JSONL record (one object per line).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GameRecord {
    /// Spec of the White player.
    pub white: String,
    /// Spec of the Black player.
    pub black: String,
    /// Index of the pair in its match; both games of a pair share the opening.
    pub pair: u32,
    /// Seed of the random opening.
    pub opening_seed: u64,
    /// Number of random opening plies.
    pub opening_plies: u32,
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
}

/// The name of a rules value: its preset, or `custom`.
fn rules_name(rules: &Rules) -> String {
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
    game: Game,
    seconds: [f64; 2],
    moves: [u32; 2],
    /// The player to move returned no move or an illegal one, and forfeits, for this reason.
    forfeit: Option<String>,
}

impl Table {
    fn new(config: &MatchConfig, index: u32) -> Table {
        let (pair, g) = (index / 2, index % 2);
        let opening_seed = Rng::derive(config.seed, stream::OPENING, pair as u64);
        let mut game = Game::new(config.rules);
        game.random_opening(&mut Rng::seed_from_u64(opening_seed), config.opening_plies);
        Table { pair, g, opening_seed, game, seconds: [0.0; 2], moves: [0; 2], forfeit: None }
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
            opening_plies: config.opening_plies,
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
/// Only in lockstep: [`EvalError::Internal`] if a network search finds no move in a live game.
pub fn play_match<F>(
    a: &AgentSpec,
    b: &AgentSpec,
    config: &MatchConfig,
    on_game: F,
) -> Result<Vec<GameRecord>>
where
    F: Fn(&GameRecord) + Sync,
{
    if config.batch_network {
        return play_lockstep(a, b, config, on_game);
    }
    (0..config.pairs * 2)
        .into_par_iter()
        .with_max_len(1)
        .map(|i| {
            let mut table = Table::new(config, i);
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
fn play_lockstep<F>(a: &AgentSpec, b: &AgentSpec, config: &MatchConfig, on_game: F) -> Result<Vec<GameRecord>>
where
    F: Fn(&GameRecord) + Sync,
{
    let mut tables: Vec<Table> = (0..config.pairs * 2).map(|i| Table::new(config, i)).collect();
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
        MatchConfig { pairs, opening_plies: 4, seed: 42, rules: Rules::standard(), batch_network: false }
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
}
